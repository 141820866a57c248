"""The media room's implementations (bot/core/media/ports.py): what reads documents, hears audio
and sees images, each in its own folder, each importing only the core and itself."""
