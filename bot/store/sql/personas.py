"""The PersonaChoices on either database: one implementation over the SQL both dialects share,
on the runners the proactive and delivery stores use."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.store.sql.proactive import Runner

_CHOOSE = """
INSERT INTO chat_personas (chat_id, persona, owner, chosen_at) VALUES (?, ?, ?, ?)
ON CONFLICT (chat_id) DO UPDATE SET persona = excluded.persona, owner = excluded.owner,
                                    chosen_at = excluded.chosen_at
"""
_CHOSEN = "SELECT persona FROM chat_personas WHERE chat_id = ?"
_CHOSEN_BY = "SELECT chat_id, persona FROM chat_personas WHERE owner = ? ORDER BY chat_id"


class SqlPersonaChoices:
    """PersonaChoices over one dialect's Runner."""

    def __init__(self, runner: Runner) -> None:
        self._runner = runner
        self._d = runner.dialect

    async def choose(self, chat_id: str, persona: str, owner: str | None) -> None:
        params = (chat_id, persona, owner, self._d.moment_param(datetime.now(UTC)))
        async with self._runner.transaction() as run:
            await run(self._d.sql(_CHOOSE), params)

    async def chosen(self, chat_id: str) -> str | None:
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(_CHOSEN), (chat_id,))
        return str(rows[0]["persona"]) if rows else None

    async def chosen_by(self, owner: str) -> list[tuple[str, str]]:
        async with self._runner.transaction() as run:
            rows = await run(self._d.sql(_CHOSEN_BY), (owner,))
        return [(str(r["chat_id"]), str(r["persona"])) for r in rows]
