-- Words searched beside a memory's own text: the speaker's name where one is known ("Melanie"),
-- and for a short turn ("Wow, that's great!") the turn before it. Mirrors
-- schema/postgres/0005_search_context.sql. The text itself stays as it was said.
ALTER TABLE memories ADD COLUMN context TEXT NOT NULL DEFAULT '';

-- The full-text index gains the column; an external-content FTS5 table is rebuilt to change shape.
DROP TRIGGER memories_ai;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_au;
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, user_tag, context, content='memories', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
INSERT INTO memories_fts(memories_fts) VALUES ('rebuild');
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text, user_tag, context)
    VALUES (new.id, new.text, new.user_tag, new.context);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, user_tag, context)
    VALUES ('delete', old.id, old.text, old.user_tag, old.context);
END;
CREATE TRIGGER memories_au AFTER UPDATE OF text, context ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, user_tag, context)
    VALUES ('delete', old.id, old.text, old.user_tag, old.context);
    INSERT INTO memories_fts(rowid, text, user_tag, context)
    VALUES (new.id, new.text, new.user_tag, new.context);
END;
