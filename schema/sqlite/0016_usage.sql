-- What each person used ([personal]): one row per reply (tokens in and out, every best-of-n sample
-- counted), voice note transcribed (seconds), image read by a vision model, proactive message and
-- mini-app build. Counted always, budget or none, in the store so that every process sees it.
-- Mirrors schema/postgres/0016_usage.sql. `day` is the UTC day (YYYY-MM-DD) the use is counted on;
-- `group_id` the group chat it came from (NULL: a private chat). A person's /forget all deletes them.
CREATE TABLE usage_records (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL,
    group_id    TEXT,
    kind        TEXT NOT NULL
                CHECK (kind IN ('reply', 'voice_seconds', 'image', 'proactive', 'app_build')),
    tokens_in   INTEGER NOT NULL DEFAULT 0,
    tokens_out  INTEGER NOT NULL DEFAULT 0,
    -- Samples of a reply, seconds of a voice note, images, messages or builds.
    amount      REAL NOT NULL DEFAULT 0,
    day         TEXT NOT NULL,
    created_at  REAL NOT NULL
);
CREATE INDEX usage_records_user_day ON usage_records(user_id, day);
CREATE INDEX usage_records_group_day ON usage_records(group_id, day) WHERE group_id IS NOT NULL;
CREATE INDEX usage_records_day ON usage_records(day);
