"""Models ([personal] 3): which model answers in a chat. The admin's list with its prices and who
may use each (book.py), each chat's choice and the model a reply comes from (ports.py, picker.py)."""

from bot.core.chat_models.book import EVERYONE, ChatModel, ModelBook, parse_models
from bot.core.chat_models.picker import ONE_MODEL, ModelMenu, ModelPicker, Serving
from bot.core.chat_models.ports import ModelBackends, ModelChoices, ModelSource

__all__ = [
    "EVERYONE",
    "ONE_MODEL",
    "ChatModel",
    "ModelBackends",
    "ModelBook",
    "ModelChoices",
    "ModelMenu",
    "ModelPicker",
    "ModelSource",
    "Serving",
    "parse_models",
]
