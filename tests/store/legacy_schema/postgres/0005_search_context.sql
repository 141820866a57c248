-- Words searched beside a memory's own text: the speaker's name where one is known ("Melanie"),
-- and for a short turn ("Wow, that's great!") the turn before it. Mirrors
-- schema/sqlite/0005_search_context.sql. The text itself stays as it was said.
ALTER TABLE memories ADD COLUMN context TEXT NOT NULL DEFAULT '';

-- The generated tsvector covers both; the text's own words weigh more (A) than the context's (B).
DROP INDEX memories_tsv;
ALTER TABLE memories DROP COLUMN tsv;
ALTER TABLE memories ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', text), 'A') || setweight(to_tsvector('english', context), 'B')
) STORED;
CREATE INDEX memories_tsv ON memories USING gin (tsv);
