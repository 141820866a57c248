"""The media room's implementations: audio read with PyAV (`audio.py`), and the speech backends
(`speech/`). The ports they implement are in `bot/core/media/ports.py`."""
