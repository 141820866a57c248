-- Kindred schema v1 for SQLite. Times are UTC epoch seconds (REAL); JSON is TEXT.
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    created_at    REAL NOT NULL,
    active        INTEGER NOT NULL DEFAULT 1,
    memory_count  INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE memories (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id         TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    text            TEXT NOT NULL,
    speaker         TEXT,
    created_at      REAL NOT NULL,
    meta            TEXT NOT NULL DEFAULT '{}',
    embedding       BLOB NOT NULL,
    embedding_model TEXT NOT NULL,
    source_turn_id  INTEGER,
    -- FTS5 column filter: the lexical index narrows to one user by this token, not by a join.
    user_tag        TEXT NOT NULL
);
CREATE INDEX memories_user ON memories(user_id, id);

CREATE TABLE turns (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id          TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    chat_id          TEXT NOT NULL,
    role             TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    text             TEXT NOT NULL,
    created_at       REAL NOT NULL,
    memory_id        INTEGER,
    used_memory_ids  TEXT NOT NULL DEFAULT '[]',
    reply_to         INTEGER,
    idempotency_key  TEXT UNIQUE,
    meta             TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX turns_chat ON turns(user_id, chat_id, id);

CREATE TABLE feedback (
    turn_id     INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL,
    source      TEXT NOT NULL,
    emoji       TEXT NOT NULL,
    value       REAL NOT NULL,
    created_at  REAL NOT NULL,
    PRIMARY KEY (turn_id, user_id, source)
);

CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, user_tag, content='memories', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text, user_tag) VALUES (new.id, new.text, new.user_tag);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, user_tag)
    VALUES ('delete', old.id, old.text, old.user_tag);
END;
