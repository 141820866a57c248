-- /persona NAME ([personal] 2): the persona each chat speaks in, as someone picked it from the
-- admin's personas.toml; a chat without a row has the default. Mirrors
-- schema/sqlite/0017_chat_personas.sql.
-- owner: the person whose private chat it is (exported with /export, deleted with /forget all);
-- NULL in a group, whose choice is the group's, made by its admins.
CREATE TABLE chat_personas (
    chat_id    TEXT PRIMARY KEY,
    persona    TEXT NOT NULL,
    owner      TEXT,
    chosen_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX chat_personas_owner ON chat_personas (owner) WHERE owner IS NOT NULL;
