"""Voices that say replies aloud (the `SpeechSynthesis` port of bot/core/media/ports.py): an
OpenAI-compatible server (`openai.py`), espeak-ng in this machine (`espeak.py`), and what turns
either's audio into an OGG/Opus voice note (`opus.py`)."""
