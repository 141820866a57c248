"""Importers: other programs' exports (Telegram Desktop's chat history) read as memory import items."""
