-- Canaries ([canary]). Mirrors schema/postgres/0012_canary.sql. Times are UTC epoch seconds (REAL);
-- JSON is TEXT.

-- The variant that wrote each reply, beside the adapter version 0008 keeps: the base model, the
-- reward model that chose it among n sampled candidates (NULL: none, n = 1), the persona, and the
-- arm of the canary it was part of (canary_id NULL: no canary ran, or the person was outside it).
ALTER TABLE generations ADD COLUMN base_model TEXT NOT NULL DEFAULT '';
ALTER TABLE generations ADD COLUMN reward_model_version INTEGER;
ALTER TABLE generations ADD COLUMN n INTEGER NOT NULL DEFAULT 1;
ALTER TABLE generations ADD COLUMN persona TEXT;
ALTER TABLE generations ADD COLUMN arm TEXT NOT NULL DEFAULT 'serving' CHECK (arm IN ('serving', 'canary'));
ALTER TABLE generations ADD COLUMN canary_id INTEGER;
CREATE INDEX generations_canary ON generations(canary_id) WHERE canary_id IS NOT NULL;

-- Reward models trained on reactions. model: the weights as JSON (never pickle); report: held-out
-- AUC and its interval. At most one serving, as for adapters.
CREATE TABLE reward_models (
    version      INTEGER PRIMARY KEY AUTOINCREMENT,
    embedder     TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('candidate', 'serving', 'retired', 'failed')),
    model        TEXT NOT NULL DEFAULT '{}',
    report       TEXT NOT NULL DEFAULT '{}',
    run_id       INTEGER,
    created_at   REAL NOT NULL,
    promoted_at  REAL
);
CREATE UNIQUE INDEX reward_models_one_serving ON reward_models(status) WHERE status = 'serving';

-- A candidate variant on trial against the serving one. The variant: adapter_version (NULL: the
-- serving adapter's, or the base), reward_model_version (NULL: none), n. The serving variant it
-- is measured against is recorded when it starts. test: the sequential test's state; history:
-- its bounds over time, one JSON object per entry that moved them.
CREATE TABLE canaries (
    id                        INTEGER PRIMARY KEY AUTOINCREMENT,
    status                    TEXT NOT NULL
                              CHECK (status IN ('running', 'promoted', 'harm', 'expired', 'stopped')),
    base_model                TEXT NOT NULL,
    adapter_version           INTEGER,
    reward_model_version      INTEGER,
    n                         INTEGER NOT NULL DEFAULT 1,
    serving_adapter_version   INTEGER,
    serving_reward_model      INTEGER,
    serving_n                 INTEGER NOT NULL DEFAULT 1,
    share                     REAL NOT NULL,
    seed                      INTEGER NOT NULL,
    policy                    TEXT NOT NULL DEFAULT '{}',
    test                      TEXT NOT NULL DEFAULT '{}',
    history                   TEXT NOT NULL DEFAULT '[]',
    reason                    TEXT NOT NULL DEFAULT '',
    run_id                    INTEGER,
    started_at                REAL NOT NULL,
    decided_at                REAL
);
-- At most one canary at a time, whatever callers race to do.
CREATE UNIQUE INDEX canaries_one_running ON canaries(status) WHERE status = 'running';

-- Each reply of a canary enters its test once, when its reward is final; counted = 0 when the
-- person had already given their share of the day (or the reply was not the arm's variant).
-- Forgetting a reply deletes its entry; what it added to the test stays (a sum, no text, no person).
CREATE TABLE canary_entries (
    canary_id   INTEGER NOT NULL REFERENCES canaries(id),
    turn_id     INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    arm         TEXT NOT NULL CHECK (arm IN ('serving', 'canary')),
    user_id     TEXT NOT NULL,
    day         TEXT NOT NULL,
    reward      REAL NOT NULL,
    counted     INTEGER NOT NULL,
    note        TEXT NOT NULL DEFAULT '',
    entered_at  REAL NOT NULL,
    PRIMARY KEY (canary_id, turn_id)
);
CREATE INDEX canary_entries_person ON canary_entries(canary_id, user_id, arm, day);
