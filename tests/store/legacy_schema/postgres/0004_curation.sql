-- Curation: memories are revised, not only added. Mirrors schema/sqlite/0004_curation.sql.
-- status: active | past (recalled) | superseded | merged | archived (kept, never recalled).
ALTER TABLE memories
    ADD COLUMN status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'past', 'superseded', 'merged', 'archived')),
    -- The memory that replaced this one. No foreign key: forgetting the newer one leaves this as it is.
    ADD COLUMN superseded_by BIGINT,
    ADD COLUMN verification DOUBLE PRECISION NOT NULL DEFAULT 0
        CHECK (verification >= -1 AND verification <= 1),
    ADD COLUMN weight DOUBLE PRECISION NOT NULL DEFAULT 1 CHECK (weight >= 0 AND weight <= 1),
    ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT FALSE,
    ADD COLUMN updated_at TIMESTAMPTZ;

-- The turns an extracted memory came from (its own turn is memories.source_turn_id).
CREATE TABLE memory_sources (
    memory_id  BIGINT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    turn_id    BIGINT NOT NULL,
    PRIMARY KEY (memory_id, turn_id)
);
