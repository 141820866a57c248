-- Proactive check-ins ([proactive]). Mirrors schema/postgres/0011_proactive.sql. Times are UTC epoch
-- seconds (REAL); lists are JSON TEXT. Whether the person blocked the bot is users.active (a stored
-- turn of theirs makes them active again), not a column here.

-- One row per person who changed a setting; no row: the defaults (off, no time zone, 22–8 quiet).
-- Quiet hours are minutes after local midnight; quiet_start > quiet_end wraps midnight.
CREATE TABLE proactive_settings (
    user_id      TEXT PRIMARY KEY,
    enabled      INTEGER NOT NULL DEFAULT 0,
    timezone     TEXT,
    quiet_start  INTEGER NOT NULL DEFAULT 1320,
    quiet_end    INTEGER NOT NULL DEFAULT 480,
    disabled     TEXT NOT NULL DEFAULT '[]',  -- triggers the person said "don't suggest this again" to
    declined     TEXT NOT NULL DEFAULT '[]',  -- occasion keys declined (a habit is never offered again)
    updated_at   REAL NOT NULL
);
-- Beat lists only the people who said yes, and those with a reminder due.
CREATE INDEX proactive_settings_on ON proactive_settings(user_id) WHERE enabled = 1;

-- "Remind me …": scheduled until beat sends it (sent) or the person cancels it (cancelled). A
-- repeating one (every_s: seconds between readings) stays scheduled, its due_at moved to the next.
CREATE TABLE reminders (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    text        TEXT NOT NULL,
    due_at      REAL NOT NULL,
    timezone    TEXT NOT NULL,
    every_s     INTEGER,
    status      TEXT NOT NULL DEFAULT 'scheduled' CHECK (status IN ('scheduled', 'cancelled', 'sent')),
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL
);
CREATE INDEX reminders_due ON reminders(due_at) WHERE status = 'scheduled';
CREATE INDEX reminders_user ON reminders(user_id, status, due_at);

-- The sent ledger, keyed by the occasion's idempotency key and written BEFORE sending: a key that
-- is here is never sent again (a retried job, a second beat). claimed: decided, not known to be
-- sent (a worker that died here leaves it so, and it is never retried: never two messages);
-- sent: the platform took it; failed: the platform refused it (blocked, gone).
CREATE TABLE proactive_sent (
    key           TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL,
    trigger_name  TEXT NOT NULL,
    chat_id       TEXT,
    status        TEXT NOT NULL DEFAULT 'claimed' CHECK (status IN ('claimed', 'sent', 'failed')),
    claimed_at    REAL NOT NULL,
    sent_at       REAL,
    turn_id       INTEGER,  -- the assistant turn that holds the message (no foreign key: see apps)
    message_id    TEXT,
    outcome       TEXT CHECK (outcome IN ('accepted', 'dismissed')),
    outcome_at    REAL
);
CREATE INDEX proactive_sent_user ON proactive_sent(user_id, claimed_at);
CREATE INDEX proactive_sent_turn ON proactive_sent(turn_id);
CREATE INDEX proactive_sent_trigger ON proactive_sent(trigger_name, claimed_at);
