-- Curation: memories are revised, not only added. Mirrors schema/postgres/0004_curation.sql.
-- status: active | past (recalled) | superseded | merged | archived (kept, never recalled).
ALTER TABLE memories ADD COLUMN status TEXT NOT NULL DEFAULT 'active'
    CHECK (status IN ('active', 'past', 'superseded', 'merged', 'archived'));
-- The memory that replaced this one. No foreign key: forgetting the newer one leaves this as it is.
ALTER TABLE memories ADD COLUMN superseded_by INTEGER;
ALTER TABLE memories ADD COLUMN verification REAL NOT NULL DEFAULT 0
    CHECK (verification >= -1 AND verification <= 1);
ALTER TABLE memories ADD COLUMN weight REAL NOT NULL DEFAULT 1 CHECK (weight >= 0 AND weight <= 1);
ALTER TABLE memories ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN updated_at REAL;

-- The turns an extracted memory came from (its own turn is memories.source_turn_id).
CREATE TABLE memory_sources (
    memory_id  INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    turn_id    INTEGER NOT NULL,
    PRIMARY KEY (memory_id, turn_id)
);

-- A revised text must be re-indexed for words too.
CREATE TRIGGER memories_au AFTER UPDATE OF text ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, user_tag)
    VALUES ('delete', old.id, old.text, old.user_tag);
    INSERT INTO memories_fts(rowid, text, user_tag) VALUES (new.id, new.text, new.user_tag);
END;
