"""Vision backends (the `ImageDescriber` port of bot/core/media/ports.py): a vision-capable model on
an OpenAI-compatible server (`openai.py`)."""
