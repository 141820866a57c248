-- BM25 over one person's memories (bot/store/pg_search.py) needs how many of them search may
-- return and their average length. Counted per search, that scanned every row of the person and
-- read each one's tsvector: most of a 20,000-memory person's search time. Kept here instead, by a
-- trigger, for every writer alike (import, curation, forgetting, revisions).
-- PostgreSQL only: FTS5 keeps its own statistics on SQLite (schema/sqlite/0009_lexical_stats.sql is
-- its no-op twin).
ALTER TABLE users ADD COLUMN lexical_docs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN lexical_length BIGINT NOT NULL DEFAULT 0;

-- Recallable as bot/store/rows.py's recallable() says: status active or past, and a kind that is
-- evidence (not 'reply' nor 'question'). A change to those lists needs a migration that replaces
-- this function and recounts (tests/store/test_pg_lexical_stats.py compares the two).
CREATE FUNCTION memory_is_searched(status TEXT, kind TEXT) RETURNS BOOLEAN
LANGUAGE sql IMMUTABLE AS $$
    SELECT status IN ('active', 'past') AND kind NOT IN ('reply', 'question')
$$;

CREATE FUNCTION memories_lexical_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND memory_is_searched(OLD.status, OLD.kind) THEN
        UPDATE users SET lexical_docs = lexical_docs - 1, lexical_length = lexical_length - length(OLD.tsv)
        WHERE id = OLD.user_id;
    END IF;
    IF TG_OP <> 'DELETE' AND memory_is_searched(NEW.status, NEW.kind) THEN
        UPDATE users SET lexical_docs = lexical_docs + 1, lexical_length = lexical_length + length(NEW.tsv)
        WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER memories_lexical_stats
AFTER INSERT OR DELETE OR UPDATE OF status, kind, text, context, user_id ON memories
FOR EACH ROW EXECUTE FUNCTION memories_lexical_stats();

UPDATE users u SET lexical_docs = s.docs, lexical_length = s.total
FROM (
    SELECT user_id, count(*) AS docs, sum(length(tsv)) AS total FROM memories
    WHERE memory_is_searched(status, kind) GROUP BY user_id
) s
WHERE u.id = s.user_id;
