"""What each chat chose ([personal]): its persona (PersonaChoices) and its model (ModelChoices), on
either database. One implementation over the SQL both dialects share, on the runners the
proactive and delivery stores use; the two tables have the same shape."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from bot.store.sql.proactive import Runner

Choice = Literal["persona", "model"]


# Written out for each table: no SQL is built from names at run time.
_STATEMENTS: dict[Choice, tuple[str, str, str]] = {
    "persona": (
        """
INSERT INTO chat_personas (chat_id, persona, owner, chosen_at) VALUES (?, ?, ?, ?)
ON CONFLICT (chat_id) DO UPDATE SET persona = excluded.persona, owner = excluded.owner,
                                    chosen_at = excluded.chosen_at
""",
        "SELECT persona AS name FROM chat_personas WHERE chat_id = ?",
        "SELECT chat_id, persona AS name FROM chat_personas WHERE owner = ? ORDER BY chat_id",
    ),
    "model": (
        """
INSERT INTO chat_models (chat_id, model, owner, chosen_at) VALUES (?, ?, ?, ?)
ON CONFLICT (chat_id) DO UPDATE SET model = excluded.model, owner = excluded.owner,
                                    chosen_at = excluded.chosen_at
""",
        "SELECT model AS name FROM chat_models WHERE chat_id = ?",
        "SELECT chat_id, model AS name FROM chat_models WHERE owner = ? ORDER BY chat_id",
    ),
}


class SqlChatChoices:
    """PersonaChoices or ModelChoices over one dialect's Runner."""

    def __init__(self, runner: Runner, choice: Choice) -> None:
        self._runner = runner
        self._d = runner.dialect
        self._choose, self._chosen, self._chosen_by = _STATEMENTS[choice]

    async def choose(self, chat_id: str, name: str, owner: str | None) -> None:
        params = (chat_id, name, owner, self._d.moment_param(datetime.now(UTC)))
        async with self._runner.transaction() as run:
            await run(self._d.sql(self._choose), params)

    async def chosen(self, chat_id: str) -> str | None:
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(self._chosen), (chat_id,))
        return str(rows[0]["name"]) if rows else None

    async def chosen_by(self, owner: str) -> list[tuple[str, str]]:
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(self._chosen_by), (owner,))
        return [(str(r["chat_id"]), str(r["name"])) for r in rows]
