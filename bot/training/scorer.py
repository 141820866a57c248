"""What the evaluation gate measures of an adapter (`ports.AdapterScorer`), on the base model.

- implicit rewards: per held-out example, log π(completion | prompt) − log π_base(…), summed over
  the completion's tokens, tokenized as the trainer tokenized it (tokens.py: the end-of-turn
  token for a finished reply, none for a cut one);
- regression: on the shipped regression set, the mean token NLL of the reference answers and the
  mean per-token KL(π ‖ π_base) over the vocabulary at each answer token;
- agreement: the share of the shipped sycophancy probes where the agreeing answer is more likely
  than the disagreeing one: its mean log-probability per token is higher (a sum would let the
  shorter answer win whatever it says).

The base loads on the first call, once; torch and peft load with it (logprobs.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bot.core.learning_models import TrainingExample
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
        self._base_regression: list[RowStats] | None = None

    def implicit_rewards(self, adapter: Path | None, examples: Sequence[TrainingExample]) -> list[float]:
        if adapter is None:
            return [0.0] * len(examples)  # log π_base − log π_base
        rows = [self._tokens(e.prompt, e.completion, cut=e.cut) for e in examples]
        return [s.logp - s.base_logp for s in self._model().row_stats(adapter, rows)]

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

    def agreement(self, adapter: Path | None) -> float:
        if not self._probes:
            return 0.0
        model = self._model()
        agree = model.row_stats(adapter, [self._tokens(p.messages, p.agree, cut=False) for p in self._probes])
        disagree = model.row_stats(
            adapter, [self._tokens(p.messages, p.disagree, cut=False) for p in self._probes]
        )
        agreeing = sum(_mean(a) > _mean(d) for a, d in zip(agree, disagree, strict=True))
        return agreeing / len(self._probes)

    def _base_stats(self, rows: list[Tokenized]) -> list[RowStats]:
        # The base's regression numbers are asked for on every gate and never change.
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
