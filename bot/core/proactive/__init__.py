"""Proactive check-ins ([proactive]): triggers, manners and what they pass around (models.py)."""

from bot.core.proactive.local_time import zone
from bot.core.proactive.outcomes import ProactiveReplies

# The proactive room's public surface for the other rooms, beside its ports and models.
__all__ = ["ProactiveReplies", "zone"]
