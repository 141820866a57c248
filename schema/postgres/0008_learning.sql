-- Learning ([learning]). Mirrors schema/sqlite/0008_learning.sql. Times are timestamptz; JSON is jsonb.

-- How each reply was made, kept with it so that a night trains on what the model saw: the prompt's
-- messages ([{"role", "content"}, …]) exactly as they went to the model, the adapter version that
-- wrote it (NULL: the base model), and whether it stopped at max_new_tokens (cut). Forgetting a
-- memory deletes every row that used or quotes it; the reply itself stays in the history.
CREATE TABLE generations (
    turn_id          BIGINT PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
    prompt           JSONB NOT NULL,
    adapter_version  INTEGER,
    cut              BOOLEAN NOT NULL DEFAULT FALSE
);
-- A night reads the replies of a window, across everyone.
CREATE INDEX turns_replies_created ON turns (created_at) WHERE role = 'assistant';

-- /privacy training on|off. NULL: never set, the admin's default applies.
ALTER TABLE users ADD COLUMN training_consent BOOLEAN;

-- Adapter versions. scope: 'global' today; a per-person adapter (a later issue) uses the user id.
-- No foreign key to training_runs: both are kept as history and never deleted.
CREATE TABLE adapters (
    version       INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope         TEXT NOT NULL,
    base_model    TEXT NOT NULL,
    path          TEXT NOT NULL,
    window_start  TIMESTAMPTZ NOT NULL,
    window_end    TIMESTAMPTZ NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('candidate', 'serving', 'retired', 'failed')),
    dataset       JSONB NOT NULL DEFAULT '{}',
    metrics       JSONB NOT NULL DEFAULT '{}',
    gate          JSONB NOT NULL DEFAULT '{}',
    run_id        BIGINT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    promoted_at   TIMESTAMPTZ
);
CREATE INDEX adapters_scope ON adapters (scope, version);
-- At most one serving version per scope, whatever callers race to do.
CREATE UNIQUE INDEX adapters_one_serving ON adapters (scope) WHERE status = 'serving';

-- Nightly training runs. steps: one JSON object per logged step; the last one is the heartbeat.
CREATE TABLE training_runs (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_key          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
    started_at       TIMESTAMPTZ NOT NULL,
    finished_at      TIMESTAMPTZ,
    heartbeat_at     TIMESTAMPTZ,
    message          TEXT NOT NULL DEFAULT '',
    adapter_version  INTEGER,
    steps            JSONB NOT NULL DEFAULT '[]',
    result           JSONB NOT NULL DEFAULT '{}'
);
-- One run at a time: a second start while one runs finds this index in its way.
CREATE UNIQUE INDEX training_runs_one_running ON training_runs (status) WHERE status = 'running';

-- What a run trained on, to explain it: the reward and its parts, never the text. Goes with the run
-- and with the reply (forget_all deletes the person's turns, so their snapshots too).
CREATE TABLE training_examples (
    run_id   BIGINT NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE,
    turn_id  BIGINT NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL,
    label    TEXT NOT NULL CHECK (label IN ('desirable', 'undesirable')),
    split    TEXT NOT NULL CHECK (split IN ('train', 'heldout')),
    reward   DOUBLE PRECISION NOT NULL,
    parts    JSONB NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, turn_id)
);
CREATE INDEX training_examples_turn ON training_examples (turn_id);
CREATE INDEX training_examples_user ON training_examples (user_id);
