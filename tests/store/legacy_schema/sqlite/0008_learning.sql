-- Learning ([learning]). Mirrors schema/postgres/0007_learning.sql (numbered 0008 here: SQLite has
-- its own 0007, the vector counter). Times are UTC epoch seconds (REAL); JSON is TEXT.

-- How each reply was made, kept with it so that a night trains on what the model saw: the prompt's
-- messages ([{"role", "content"}, …]) exactly as they went to the model, the adapter version that
-- wrote it (NULL: the base model), and whether it stopped at max_new_tokens (cut). Forgetting a
-- memory deletes every row that used or quotes it; the reply itself stays in the history.
CREATE TABLE generations (
    turn_id          INTEGER PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
    prompt           TEXT NOT NULL,
    adapter_version  INTEGER,
    cut              INTEGER NOT NULL DEFAULT 0
);
-- A night reads the replies of a window, across everyone.
CREATE INDEX turns_replies_created ON turns(created_at) WHERE role = 'assistant';

-- /privacy training on|off. NULL: never set, the admin's default applies.
ALTER TABLE users ADD COLUMN training_consent INTEGER;

-- Adapter versions. scope: 'global' today; a per-person adapter (a later issue) uses the user id.
-- No foreign key to training_runs: both are kept as history and never deleted.
CREATE TABLE adapters (
    version       INTEGER PRIMARY KEY AUTOINCREMENT,
    scope         TEXT NOT NULL,
    base_model    TEXT NOT NULL,
    path          TEXT NOT NULL,
    window_start  REAL NOT NULL,
    window_end    REAL NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('candidate', 'serving', 'retired', 'failed')),
    dataset       TEXT NOT NULL DEFAULT '{}',
    metrics       TEXT NOT NULL DEFAULT '{}',
    gate          TEXT NOT NULL DEFAULT '{}',
    run_id        INTEGER,
    created_at    REAL NOT NULL,
    promoted_at   REAL
);
CREATE INDEX adapters_scope ON adapters(scope, version);
-- At most one serving version per scope, whatever callers race to do.
CREATE UNIQUE INDEX adapters_one_serving ON adapters(scope) WHERE status = 'serving';

-- Nightly training runs. steps: one JSON object per logged step; the last one is the heartbeat.
CREATE TABLE training_runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    job_key          TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
    started_at       REAL NOT NULL,
    finished_at      REAL,
    heartbeat_at     REAL,
    message          TEXT NOT NULL DEFAULT '',
    adapter_version  INTEGER,
    steps            TEXT NOT NULL DEFAULT '[]',
    result           TEXT NOT NULL DEFAULT '{}'
);
-- One run at a time: a second start while one runs finds this index in its way.
CREATE UNIQUE INDEX training_runs_one_running ON training_runs(status) WHERE status = 'running';

-- What a run trained on, to explain it: the reward and its parts, never the text. Goes with the run
-- and with the reply (forget_all deletes the person's turns, so their snapshots too).
CREATE TABLE training_examples (
    run_id   INTEGER NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE,
    turn_id  INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    user_id  TEXT NOT NULL,
    label    TEXT NOT NULL CHECK (label IN ('desirable', 'undesirable')),
    split    TEXT NOT NULL CHECK (split IN ('train', 'heldout')),
    reward   REAL NOT NULL,
    parts    TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, turn_id)
);
CREATE INDEX training_examples_turn ON training_examples(turn_id);
CREATE INDEX training_examples_user ON training_examples(user_id);
