"""What the evaluation gate measures of an adapter (`ports.AdapterScorer`), on the base model.

- implicit rewards: per held-out example, log π(completion | prompt) − log π_base(…) per token of
  the completion (the sum over its tokens divided by their number), tokenized as the trainer
  tokenized it (tokens.py: the end-of-turn token for a finished reply, none for a cut one). Per
  token, not summed: a summed reward grows with the reply's length, and an adapter shifts every
  token a little, so on held-out replies of 5 to 48 tokens the length drowned the taste. On a
  night of bench/learning_sim.py (33 held-out replies) the margin's t was 0.62 summed and 0.95
  per token;
- regression: on the shipped regression set, the mean token NLL of the reference answers and the
  mean per-token KL(π ‖ π_base) over the vocabulary at each answer token;
- agreements: per shipped sycophancy probe, in file order, whether the agreeing answer is more
  likely than the disagreeing one: its mean log-probability per token is higher (a sum would let
  the shorter answer win whatever it says).

The base loads on the first call, once; torch and peft load with it (logprobs.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.core.learning.models import TrainingExample
from bot.core.models import ChatMessage, JSONObject
from bot.training.evalsets import RegressionItem, SycophancyProbe, regression_set, sycophancy_probes
from bot.training.options import TrainingOptions
from bot.training.tokens import Tokenized, tokenize_example

if TYPE_CHECKING:
    from bot.training.logprobs import RowStats, ScoringModel


class LoraScorer:
    """`ports.AdapterScorer` for LoRA adapter folders on `options.base_model` (None: the base).

    `regression` and `probes` default to the sets shipped in bot/training/data/. Blocking.
    """

    def __init__(
        self,
        options: TrainingOptions,
        *,
        regression: Sequence[RegressionItem] | None = None,
        probes: Sequence[SycophancyProbe] | None = None,
    ) -> None:
        self.options = options
        self._regression = tuple(regression if regression is not None else regression_set())
        self._probes = tuple(probes if probes is not None else sycophancy_probes())
        self._scoring: ScoringModel | None = None
        # What the base measures never changes: asked for on every gate, computed once.
        self._base_regression: list[RowStats] | None = None
        self._base_odds: tuple[float, ...] | None = None
        self._base_agreements: tuple[bool, ...] | None = None

    def implicit_rewards(self, adapter: Path | None, examples: Sequence[TrainingExample]) -> list[float]:
        if adapter is None:
            return [0.0] * len(examples)  # log π_base − log π_base
        rows = [self._tokens(e.prompt, e.completion, cut=e.cut) for e in examples]
        return [(s.logp - s.base_logp) / max(s.tokens, 1) for s in self._model().row_stats(adapter, rows)]

    def regression(self, adapter: Path | None) -> JSONObject:
        rows = [self._tokens(item.messages, item.answer, cut=False) for item in self._regression]
        stats = self._model().row_stats(adapter, rows) if adapter is not None else self._base_stats(rows)
        tokens = sum(s.tokens for s in stats)
        return {
            "loss": -sum(s.logp for s in stats) / tokens,
            "base_loss": -sum(s.base_logp for s in stats) / tokens,
            "kl": sum(s.kl for s in stats) / tokens,
            "items": len(stats),
            "tokens": tokens,
        }

    def agreements(self, adapter: Path | None) -> tuple[bool, ...]:
        if adapter is None and self._base_agreements is not None:
            return self._base_agreements
        agreeing = tuple(p > 0.5 for p in self.agreement_odds(adapter))
        if adapter is None:
            self._base_agreements = agreeing
        return agreeing

    def agreement_odds(self, adapter: Path | None) -> tuple[float, ...]:
        """Per probe, the chance that a reply goes along rather than corrects, between the two:
        σ of the answers' difference in mean log-probability per token, times their mean length
        (the two answers' sequence odds, with length taken out). Above ½ exactly where
        `agreements` says it agrees; the reward model's pre-screen weighs best-of-n by it."""
        if not self._probes:
            return ()
        if adapter is None and self._base_odds is not None:
            return self._base_odds
        rows = [
            self._tokens(p.messages, answer, cut=False)
            for p in self._probes
            for answer in (p.agree, p.disagree)
        ]
        stats = self._model().row_stats(adapter, rows, compare=False)
        odds = tuple(_odds(stats[2 * i], stats[2 * i + 1]) for i in range(len(self._probes)))
        if adapter is None:
            self._base_odds = odds
        return odds

    def _base_stats(self, rows: list[Tokenized]) -> list[RowStats]:
        if self._base_regression is None:
            self._base_regression = self._model().row_stats(None, rows)
        return self._base_regression

    def _tokens(self, messages: Sequence[ChatMessage], completion: str, *, cut: bool) -> Tokenized:
        tokenizer = self._model().tokenizer
        return tokenize_example(tokenizer, messages, completion, cut=cut, max_length=self.options.max_length)

    def _model(self) -> ScoringModel:
        if self._scoring is None:
            from bot.training.logprobs import ScoringModel

            self._scoring = ScoringModel(self.options)
        return self._scoring


def _mean(stats: RowStats) -> float:
    return stats.logp / max(stats.tokens, 1)


def _odds(agree: RowStats, disagree: RowStats) -> float:
    length = (agree.tokens + disagree.tokens) / 2
    margin = (_mean(agree) - _mean(disagree)) * length
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, margin))))
