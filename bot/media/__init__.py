"""The media room's implementations (bot/core/media/ports.py): what reads documents (`documents/`),
and what hears audio (`audio.py`, PyAV; `speech/`, the speech-to-text backends), each importing
only the core and itself."""
