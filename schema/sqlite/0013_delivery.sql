-- Replies whose delivery is unknown ([steady]): the send's request was written, then a 5xx or no
-- answer came, so it may have reached the person or not, and it is never sent again by itself.
-- Mirrors schema/postgres/0013_delivery.sql. Times are UTC epoch seconds (REAL).
-- unknown → told (the person heard it may not have arrived) → delivered (a reaction or a reply
-- to it) or resent (they pressed "send it again"); a forgotten turn takes its row with it.
CREATE TABLE delivery_doubts (
    platform    TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    turn_id     INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
    user_id     TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'unknown'
                CHECK (status IN ('unknown', 'told', 'delivered', 'resent')),
    created_at  REAL NOT NULL,
    settled_at  REAL,
    PRIMARY KEY (platform, chat_id, turn_id)
);
-- A person's next message asks for their chat's waiting ones.
CREATE INDEX delivery_doubts_waiting ON delivery_doubts(platform, chat_id)
    WHERE status IN ('unknown', 'told');
CREATE INDEX delivery_doubts_user ON delivery_doubts(user_id);
