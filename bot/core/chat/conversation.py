"""The conversation core: store the turn, recall, prompt, stream the reply, store it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from bot.core.chat.access import Access
from bot.core.chat.answered import Answering, answered_before
from bot.core.chat.budgeted import ReplyRoom
from bot.core.chat.doubts import DeliveryDoubts
from bot.core.chat.outbox import Outbox, Pending, PendingFeedback, PendingLink, RemoveFeedback
from bot.core.chat.person_turn import message_key, person_turn
from bot.core.chat.ports import Inference
from bot.core.chat.prompt import build_messages
from bot.core.chat.reply_turn import reply_key, reply_turn_memories, reply_turn_of
from bot.core.chat.sentences import whole_sentences
from bot.core.chat.writing import Draft, ReplyWriter
from bot.core.chat_models import ModelPicker
from bot.core.errors import InferenceError, InvalidInput, StoreUnavailable
from bot.core.events import (
    AnsweredBefore,
    MessageReaction,
    Reaction,
    ReactionResult,
    Refusal,
    ReplyChunk,
    ReplyDone,
    ReplyEvent,
    UserMessage,
)
from bot.core.learning import RewardWeights, VariantPicker
from bot.core.memory import REPLY, Recalled, Scoring, distinct, fit_budget, hybrid_search
from bot.core.memory.ports import Embedder
from bot.core.models import Feedback, MessageLink, NewTurn, Turn, Vector
from bot.core.personas import PersonaPicker
from bot.core.proactive import ProactiveReplies
from bot.core.store import Store
from bot.core.text import EMBED_CHARS, clean_message
from bot.core.usage import Allowance, OutOfBudget, UsageMeter, UsageReport

log = logging.getLogger(__name__)

STORE_DOWN_NOTICE = (
    "(My memory store is unavailable right now, so I'm answering without it. "
    "I'm keeping your words and will save them as soon as it is back.)"
)
MODEL_FAILED = "Sorry, I couldn't finish a reply just now ({reason}). Your message is saved."


@dataclass(frozen=True, slots=True)
class ConversationPolicy:
    persona: str
    # Chosen with bench/reply_budget.py: the smallest budget at which a cut reply, trimmed to its
    # whole sentences, keeps over 90 % of what was written (the bundled model, greedy and sampled).
    max_new_tokens: int = 128
    recent_turns: int = 8
    memory_top_k: int = 5
    memory_token_budget: int = 400
    max_message_chars: int = 100_000
    reactions: Mapping[str, float] = field(default_factory=dict)
    scoring: Scoring = field(default_factory=Scoring)
    reward: RewardWeights = field(default_factory=RewardWeights)
    # The model replies come from, recorded with each ([canary]); a canary is for one base model.
    base_model: str = ""
    # n for a serving reward model's best-of-n (a canary's variant names its own).
    best_of: int = 4
    # Set only by the learning simulation: each reply's sampling fixed by (seed, message key).
    sample_seed: int | None = None


class Conversation:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        inference: Inference,
        policy: ConversationPolicy,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        after_turn: Callable[[Turn], None] | None = None,
        proactive: ProactiveReplies | None = None,
        personas: PersonaPicker | None = None,
        meter: UsageMeter | None = None,
        allowance: Allowance | None = None,
        access: Access | None = None,
        models: ModelPicker | None = None,
    ) -> None:
        self.store = store
        # Each chat's model ([personal] 3); None: `inference` everywhere.
        self.models = models
        # Each chat's persona ([personal] 2); None: `policy.persona` everywhere.
        self.personas = personas
        # Reads each stored message for "remind me …" and for how a proactive message was taken.
        self.proactive = proactive
        # Called once a person's turn and the reply to it are stored: queues memory extraction.
        # It must not block or raise; the reply is already on its way.
        self._after_turn = after_turn
        self.embedder = embedder
        self.inference = inference
        self.policy = policy
        self.outbox = Outbox()
        self._answering = Answering()
        # Replies whose delivery is unknown: recorded by the delivery, confirmed, told, sent again.
        self.doubts = DeliveryDoubts(store)
        self._clock = clock
        # Every reply's tokens, budget or none ([personal]): `kindred usage`, /usage.
        self.usage = meter or UsageMeter(store.usage, clock=clock)
        # The budgets, where the admin set any: a reply holds room for what it may use.
        self.room = ReplyRoom(allowance, access or Access(), policy)
        self.usage_report = UsageReport(
            store.usage, clock=clock, allowance=allowance, meter=self.usage, tier=self.room.access.tier
        )
        self.variants = VariantPicker(store, policy.base_model, policy.best_of)
        self.writer = ReplyWriter(
            inference, embedder, policy.max_new_tokens, base_model=policy.base_model, seed=policy.sample_seed
        )

    async def handle_message(self, message: UserMessage) -> AsyncIterator[ReplyEvent]:
        """Answer one message, streaming. The person's turn is stored before the model runs."""
        try:
            text = clean_message(message.text, self.policy.max_message_chars)
        except InvalidInput as exc:
            yield Refusal(str(exc))
            return
        key = message_key(message)
        async with self._answering.one_at_a_time(key):
            async for event in self._answer(message, text, key):
                yield event

    async def _answer(self, message: UserMessage, text: str, key: str) -> AsyncIterator[ReplyEvent]:
        vector = (await self.embedder.embed([text[:EMBED_CHARS]]))[0]
        user_turn = person_turn(message, text, key, vector, self.embedder.model_name)
        stored, recent = await self._save_and_load_history(user_turn)
        waiting = self.outbox.waits(reply_key(key))
        if waiting or (stored is not None and answered_before(stored, recent)):
            log.info("message %s was answered before: a second delivery, not answered again", key)
            yield AnsweredBefore(reply_key(key))
            return
        answer = None
        if stored is not None and self.proactive is not None:
            answer = await self.proactive.on_message(message.user_id, message.chat_id, text, message.sent_at)
        if answer is not None:
            async for event in self._answered(message, key, answer, stored):
                yield event
            return
        recalled = await self._recall(message, text, vector, recent, stored)
        persona = await self.personas.persona(message.chat_id) if self.personas else None
        try:
            writer = await self._writer(message, persona.model if persona else None)
        except InferenceError as exc:
            log.warning("the chat's model cannot answer: %s", exc)
            yield Refusal(MODEL_FAILED.format(reason=exc))
            return
        messages = build_messages(
            persona.prompt if persona else self.policy.persona,
            recalled,
            [turn for turn in recent if stored is None or turn.id != stored.id],
            text,
            budget_tokens=writer.inference.context_window - self.policy.max_new_tokens,
            count_tokens=writer.inference.count_tokens,
            photo=message.seen.description if message.seen else None,
        )
        # Another model than the adapters' base is outside the canary: the picker gives it none.
        draft = Draft(
            await self.variants.pick(message.user_id, key, model=writer.base_model, best_of=writer.best_of)
        )
        group = None if message.private else message.chat_id
        held = await self.room.hold(message, group, messages, draft.pick.n, writer)
        if isinstance(held, OutOfBudget):
            yield Refusal(held.text)  # the person's words are stored: nothing is lost
            return
        try:
            async for chunk in writer.write(messages, draft, key, vector):
                yield ReplyChunk(chunk)
            made = writer.generation(messages, draft)
            if persona is not None:  # the variant record names who spoke ([canary])
                made = replace(made, persona=persona.name)
            tokens_in, tokens_out, samples = writer.tokens(messages, draft)
            await self.usage.count(message.user_id, "reply", group_id=group, tokens_in=tokens_in,
                                   tokens_out=tokens_out, amount=samples, model=made.base_model)  # fmt: skip
        except InferenceError as exc:
            log.warning("generation failed: %s", exc)
            yield Refusal(MODEL_FAILED.format(reason=exc))
            return
        finally:
            await self.room.release(held)  # after the count: the use is never out of both
        reply = _shown("".join(draft.parts).strip(), made.cut)
        embedded = (await self.embedder.embed([reply[:EMBED_CHARS] or "…"]))[0], self.embedder.model_name
        reply_turn = await self._save(
            reply_turn_of(message, key, reply, recalled, stored, made, embedded, self._clock())
        )
        if stored is not None and self._after_turn is not None:
            self._after_turn(stored)
        notice = STORE_DOWN_NOTICE if (stored is None or reply_turn is None) else None
        turn_id = reply_turn.id if reply_turn else None
        yield ReplyDone(
            reply, turn_id, reply_turn_memories(recalled), notice, cut=made.cut, turn_key=reply_key(key),
            voice=persona.voice if persona else None,
        )  # fmt: skip

    async def _writer(self, message: UserMessage, persona_model: str | None) -> ReplyWriter:
        """The writer of this reply: the configured model's, or the chat's chosen model's, which
        its variant record names. Raises InferenceError when the chosen model cannot be built."""
        if self.models is None:
            return self.writer
        serving = await self.models.serving(message.chat_id, message.user_id, persona_model)
        if serving is None or serving.configured:
            return self.writer
        return self.writer.using(serving.inference, serving.model.model, best_of=serving.model.best_of)

    async def _answered(
        self, message: UserMessage, key: str, answer: str, stored: Turn | None
    ) -> AsyncIterator[ReplyEvent]:
        """The core's own answer instead of the model's (a reminder confirmed), stored as a reply
        with no generation: nothing to train on."""
        turn = NewTurn(
            message.user_id, message.chat_id, "assistant", answer,
            (await self.embedder.embed([answer[:EMBED_CHARS]]))[0], self.embedder.model_name, self._clock(),
            reply_to=stored.id if stored else None, idempotency_key=reply_key(key),
            meta={"chat_id": message.chat_id}, memory_kind=REPLY,
        )  # fmt: skip
        reply_turn = await self._save(turn)
        if stored is not None and self._after_turn is not None:
            self._after_turn(stored)
        yield ReplyChunk(answer)
        notice = None if reply_turn is not None else STORE_DOWN_NOTICE
        yield ReplyDone(
            answer, reply_turn.id if reply_turn else None, (), notice, turn_key=reply_key(key),
            voice=await self.voice_of(message.chat_id),
        )  # fmt: skip

    async def voice_of(self, chat_id: str) -> str | None:
        """The voice the chat's persona speaks in, for an answer the model did not write (None:
        the configured voice), so that every spoken reply in a chat sounds alike."""
        persona = await self.personas.persona(chat_id) if self.personas else None
        return persona.voice if persona else None

    async def handle_reaction(self, reaction: Reaction) -> float | None:
        """Record (or undo) a reaction. Returns its value, or None for an emoji with no meaning."""
        if reaction.removed:
            await self._write(RemoveFeedback(reaction.turn_id, reaction.user_id, reaction.source))
            return 0.0
        value = self._value(reaction.emoji)
        if value is None:
            return None
        if self.proactive is not None:
            await self.proactive.on_reaction(reaction.turn_id, value, reaction.sent_at)
        await self._write(
            Feedback(
                turn_id=reaction.turn_id,
                user_id=reaction.user_id,
                emoji=reaction.emoji,
                value=value,
                created_at=reaction.sent_at,
                source=reaction.source,
            )
        )
        return value

    async def link_reply(
        self, platform: str, chat_id: str, message_ids: Sequence[str], done: ReplyDone, user_id: str
    ) -> None:
        """Remember which platform messages show a stored reply, so reactions on them count."""
        for message_id in message_ids:
            if done.turn_id is not None:
                await self._write(MessageLink(platform, chat_id, message_id, done.turn_id, user_id))
            elif done.turn_key is not None:
                # The store was down when the reply was written: the outbox links it by its key once
                # it has stored it, so that a reaction on what the person saw still counts.
                await self._write(PendingLink(platform, chat_id, message_id, done.turn_key, user_id))

    async def handle_message_reaction(self, event: MessageReaction) -> ReactionResult:
        """A reaction on a platform message: find the reply it shows, then record or undo it."""
        await self.flush()  # the store is back: a link that waited is written first, then found
        link: MessageLink | PendingLink | None
        try:
            link = await self.store.turns.find_message(event.platform, event.chat_id, event.message_id)
        except StoreUnavailable:
            link = None
        # A link the store still refuses waits in the outbox: a reaction on it is on a reply
        # Kindred did link (bench/soak.py lost one so).
        link = link or self._pending_link(event)
        if not isinstance(link, PendingLink):
            # A reaction confirms a reply of unknown delivery; one on an id Kindred never learned is
            # on the chat's one such reply, when exactly one waits there.
            link = await self.doubts.confirmed_by(event.platform, event.chat_id, event.message_id, link)
        if link is None:
            return ReactionResult("unknown")
        emoji = event.emoji
        if event.additive and self._value(emoji or event.removed_emoji or "") is None:
            # One more (or one fewer) emoji without meaning leaves the meaningful one in place.
            return ReactionResult("ignored")
        value = self._value(emoji) if emoji is not None else None
        if isinstance(link, PendingLink):
            # On a reply shown while the store was down, not stored yet: the reaction waits behind it
            # (bench/soak.py's full disk lost one so).
            kept = emoji if value is not None else None
            await self._write(PendingFeedback(link.turn_key, event.user_id, event.source, kept, value or 0.0,
                                              event.sent_at))  # fmt: skip
        elif emoji is None or value is None:
            # Taken away, or (Telegram: the whole new set) replaced by nothing meaningful.
            await self._write(RemoveFeedback(link.turn_id, event.user_id, event.source))
        else:
            value = await self.handle_reaction(
                Reaction(event.user_id, link.turn_id, emoji, event.sent_at, event.source)
            )
        if value is None:
            return ReactionResult("removed" if emoji is None else "ignored")
        return ReactionResult("recorded", value)

    def _pending_link(self, event: MessageReaction) -> MessageLink | PendingLink | None:
        """The link of this platform message still waiting in the outbox: to a stored reply, or by
        its key to one not stored yet."""
        where = (event.platform, event.chat_id, event.message_id)
        waiting = (i for i in self.outbox.pending() if isinstance(i, MessageLink | PendingLink))
        return next((i for i in waiting if (i.platform, i.chat_id, i.message_id) == where), None)

    def _value(self, emoji: str) -> float | None:
        value = self.policy.reactions.get(emoji)
        return value if value is not None else self.policy.reactions.get(emoji.replace("\ufe0f", ""))

    async def _save_and_load_history(self, turn: NewTurn) -> tuple[Turn | None, list[Turn]]:
        stored = await self._save(turn)
        try:
            recent = await self.store.turns.recent_turns(
                turn.user_id, turn.chat_id, self.policy.recent_turns + 1
            )
        except StoreUnavailable:
            recent = []
        return stored, recent

    async def _recall(
        self, message: UserMessage, text: str, vector: Vector, recent: list[Turn], stored: Turn | None
    ) -> list[Recalled]:
        # Memories of turns already in the prompt as history would only repeat them.
        exclude = {turn.memory_id for turn in recent}
        if stored is not None:
            exclude.add(stored.memory_id)
        try:
            found = await hybrid_search(
                self.store,
                message.user_id,
                text,
                vector,
                self.policy.memory_top_k,
                exclude=exclude,
                # Others read this reply: what the person said elsewhere (a DM) must not surface here.
                only_chat=None if message.private else message.chat_id,
                scoring=self.policy.scoring,
                # Age is counted to when the person wrote, so a replayed or queued message weighs alike.
                now=message.sent_at,
            )
        except StoreUnavailable:
            return []
        return fit_budget(distinct(found), self.policy.memory_token_budget, self.inference.count_tokens)

    async def _save(self, turn: NewTurn) -> Turn | None:
        """Store a turn now, or keep it in the outbox. Earlier pending writes go first."""
        await self.flush()
        if len(self.outbox):
            self.outbox.add(turn)
            return None
        try:
            return await self.store.turns.add_turn(turn)
        except StoreUnavailable as exc:
            log.warning("keeping a turn for later: %s", exc)
            self.outbox.add(turn)
            return None

    async def _write(self, item: Pending) -> None:
        """Write now, or after what is already waiting when the store was unavailable."""
        if not len(self.outbox):
            try:
                await self.outbox.apply(self.store.turns, item)
                return
            except StoreUnavailable as exc:
                log.warning("keeping a write for later: %s", exc)
        self.outbox.add(item)
        await self.flush()

    async def flush(self) -> int:
        """Retry pending writes. Returns how many reached the store."""
        return await self.outbox.flush(self.store.turns) if len(self.outbox) else 0


def _shown(written: str, cut: bool) -> str:
    """The reply as the person gets it: one the budget cut ends at its last whole sentence (it
    keeps `Generation.cut`, so it is never trained as if it had ended there)."""
    return whole_sentences(written) if cut and written else written
