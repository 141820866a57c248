-- /voice on|off ([media]): whether a person's replies also come as voice notes, synthesised by
-- the configured speech voice (KINDRED_TTS_BACKEND). Mirrors schema/postgres/0015_spoken_replies.sql.
-- NULL or 0: off (the default).
ALTER TABLE users ADD COLUMN spoken_replies INTEGER;
