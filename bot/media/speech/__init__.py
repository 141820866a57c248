"""Speech-to-text backends (the `SpeechToText` port of bot/core/media/ports.py): an
OpenAI-compatible server (`openai.py`), and what both read from an answer (`answers.py`)."""
