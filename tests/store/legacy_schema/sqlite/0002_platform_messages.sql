-- Which stored reply a platform message shows, so that a reaction on it finds its turn.
-- A long reply is split into several messages; each one links to the same turn.
CREATE TABLE platform_messages (
    platform    TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    turn_id     INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL,
    created_at  REAL NOT NULL,
    PRIMARY KEY (platform, chat_id, message_id)
);
CREATE INDEX platform_messages_user ON platform_messages(user_id);
