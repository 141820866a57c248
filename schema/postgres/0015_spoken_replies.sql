-- /voice on|off ([media]): whether a person's replies also come as voice notes, synthesised by
-- the configured speech voice (KINDRED_TTS_BACKEND). Mirrors schema/sqlite/0015_spoken_replies.sql.
-- NULL or false: off (the default).
ALTER TABLE users ADD COLUMN spoken_replies BOOLEAN;
