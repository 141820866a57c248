"""The media room: what people send that is not text (voice notes and audio, photos and images,
documents), turned into what the conversation and memory already handle. The speech, vision and
document ports are in `ports.py`; the files themselves and what is read from them in `models.py`.
Implementations live outside the core (`bot/media/`)."""
