-- Reward. Mirrors schema/sqlite/0003_reward.sql: which memories each reply's prompt used, with
-- each one's share of that prompt's retrieval score, and the implicit signals a reply earned.
-- Credit is never stored as a total: r(m) and a reply's reward are derived from these rows and
-- the current feedback rows whenever they are read, so an undone or changed reaction leaves no trace.
CREATE TABLE reply_memories (
    turn_id    BIGINT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    -- No foreign key: a memory forgotten while its reply was being written must not fail the reply.
    -- Forgetting a memory deletes its rows here.
    memory_id  BIGINT NOT NULL,
    share      DOUBLE PRECISION NOT NULL CHECK (share >= 0 AND share <= 1),
    PRIMARY KEY (turn_id, memory_id)
);
CREATE INDEX reply_memories_memory ON reply_memories (memory_id);

CREATE TABLE reply_signals (
    turn_id     BIGINT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    signal      TEXT NOT NULL CHECK (signal IN ('tool_use', 'proactive_success')),
    -- Idempotency: a retried job that reports the same use counts it once.
    key         TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (turn_id, signal, key)
);
-- A reply's reactions are read by turn; the primary key (turn_id, user_id, source) serves that.
