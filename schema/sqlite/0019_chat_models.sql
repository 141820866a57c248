-- /model NAME ([personal] 3): the model each chat's replies come from, as someone picked it from
-- the admin's models.toml; a chat without a row has its persona's model, else the list's default.
-- Mirrors schema/postgres/0019_chat_models.sql. Times are UTC epoch seconds (REAL).
-- owner: the person whose private chat it is (deleted with /forget all); NULL in a group, whose
-- choice is the group's, made by its admins.
CREATE TABLE chat_models (
    chat_id    TEXT PRIMARY KEY,
    model      TEXT NOT NULL,
    owner      TEXT,
    chosen_at  REAL NOT NULL
);
CREATE INDEX chat_models_owner ON chat_models(owner) WHERE owner IS NOT NULL;
