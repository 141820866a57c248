-- A per-person counter that moves whenever a memory's vector or recallability may have changed, so
-- that a cached matrix of the person's vectors (bot/store/sqlite_vectors.py) knows it is stale, whichever
-- connection or process made the change. New memories need no counter: ids only grow, so the cache
-- reads rows above the largest id it holds. SQLite only: PostgreSQL searches inside the database
-- (schema/postgres/0007_vector_version.sql is its no-op twin).
ALTER TABLE users ADD COLUMN vector_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER memories_vectors_ad AFTER DELETE ON memories BEGIN
    UPDATE users SET vector_version = vector_version + 1 WHERE id = old.user_id;
END;

-- Any column search filters on (status, kind) or ranks by (embedding), and the owner itself.
CREATE TRIGGER memories_vectors_au AFTER UPDATE ON memories
WHEN old.status IS NOT new.status OR old.kind IS NOT new.kind OR old.embedding IS NOT new.embedding
     OR old.user_id IS NOT new.user_id
BEGIN
    UPDATE users SET vector_version = vector_version + 1 WHERE id IN (old.user_id, new.user_id);
END;
