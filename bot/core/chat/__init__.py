"""Chat ([chat]): one message in, one reply out; the prompt, the person's words quoted as data,
replies cut at a sentence, and the writes kept while the store is away."""

from bot.core.chat.quoting import quote
from bot.core.chat.sentences import as_written

# The chat room's public surface for the other rooms, beside its ports and models.
__all__ = ["as_written", "quote"]
