-- Mini-apps ([apps]). Mirrors schema/postgres/0010_apps.sql. Times are UTC epoch seconds (REAL).

-- One row per app. token: the link's secret (≥ 128 bits). version: the one served (a restore can
-- point back); latest: the highest made. A revoked app keeps its rows and answers 404. No foreign
-- key on turn_id: forgetting a person's turns must not be held up by their apps.
CREATE TABLE apps (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    owner       TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    token       TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    title       TEXT NOT NULL,
    version     INTEGER NOT NULL,
    latest      INTEGER NOT NULL,
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    revoked_at  REAL,
    -- The assistant turn that delivered the link last: opening the app is a tool use (α) of it.
    turn_id     INTEGER
);
CREATE INDEX apps_owner ON apps(owner, updated_at);

-- Every version whole: its spec, its HTML file and the CSP hashes of its inline script and style.
-- request_key: sha256 of the kind and the rules' spec, which finds an identical request's app.
CREATE TABLE app_versions (
    app_id         INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    version        INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    title          TEXT NOT NULL,
    spec           TEXT NOT NULL,
    html           TEXT NOT NULL,
    script_hashes  TEXT NOT NULL,
    style_hashes   TEXT NOT NULL,
    request        TEXT NOT NULL,
    request_key    TEXT NOT NULL,
    source         TEXT NOT NULL,
    created_at     REAL NOT NULL,
    PRIMARY KEY (app_id, version)
);
CREATE INDEX app_versions_request ON app_versions(request_key);

-- What an app keeps across reloads; size: UTF-8 bytes of key and value, summed for the quota.
CREATE TABLE app_state (
    app_id      INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    size        INTEGER NOT NULL,
    updated_at  REAL NOT NULL,
    PRIMARY KEY (app_id, key)
);

-- Builds, keyed by the /app that asked: progress for the chat, and the per-person limit.
CREATE TABLE app_builds (
    key           TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
    step          TEXT NOT NULL DEFAULT '',
    message       TEXT NOT NULL DEFAULT '',
    app_id        INTEGER,
    started_at    REAL NOT NULL,
    heartbeat_at  REAL NOT NULL,
    finished_at   REAL
);
CREATE INDEX app_builds_running ON app_builds(owner) WHERE status = 'running';
