"""A models list for tests: the admin's file as text, and each listed model answering as the
scripted model with its own reply, so that a test sees which one wrote it."""

from __future__ import annotations

from bot.core.chat.ports import Inference
from bot.core.chat_models import ChatModel, ModelBook, ModelPicker, parse_models
from bot.core.personas import PersonaPicker
from bot.core.store import Store
from tests.support.fakes import ScriptedInference

# "small" is the configured model (the adapters' base); "big" a server's; "secret" for one person.
MODELS = """
currency = "EUR"
default = "small"

[[model]]
name = "small"
backend = "local"
model = "bundled"
price_in = 0.0
price_out = 0.0

[[model]]
name = "big"
backend = "openai"
url = "http://127.0.0.1:9/v1"
model = "big-model-70b"
api_key_env = "BIG_KEY"
vision = true
context = 8192
price_in = 0.5
price_out = 1.5

[[model]]
name = "secret"
backend = "openai"
url = "http://127.0.0.1:9/v1"
model = "secret-model"
who = ["telegram:4242", "discord:5000000000000000001"]

[[model]]
name = "boss"
backend = "openai"
url = "http://127.0.0.1:9/v1"
model = "boss-model"
who = "admins"
"""
BOOK = parse_models(MODELS)


class FixedModels:
    """A ModelSource that says what a test sets."""

    def __init__(self, book: ModelBook = BOOK) -> None:
        self.current = book

    def book(self) -> ModelBook:
        return self.current


class ScriptedModels:
    """ModelBackends: "small" is the configured Inference; every other model answers "<name> here."."""

    def __init__(self, configured: Inference, configured_name: str = "small") -> None:
        self.configured = configured
        self.configured_name = configured_name
        self.built: dict[str, ScriptedInference] = {}

    def is_configured(self, model: ChatModel) -> bool:
        return model.name == self.configured_name

    async def inference(self, model: ChatModel) -> Inference:
        if self.is_configured(model):
            return self.configured
        return self.built.setdefault(model.name, ScriptedInference(f"{model.name} here."))


def model_picker(
    store: Store,
    configured: Inference,
    *,
    admins: frozenset[str] = frozenset(),
    personas: PersonaPicker | None = None,
    book: ModelBook = BOOK,
) -> ModelPicker:
    return ModelPicker(
        FixedModels(book), store.models, ScriptedModels(configured), admins.__contains__, personas
    )
