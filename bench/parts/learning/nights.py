"""What a night trained and how its candidate was decided, as the simulation's JSON tells it.

A night's candidate ends in one decision:
- "promoted", "harm" or "expired": it passed the pre-screen, served its canary day, and the
  canary's test (core/learning/canary.py) decided, with its reason and its bounds;
- "refused": something was trained, and nothing of it passed its pre-screen or validation (the
  reason names each failed check);
- "none": nothing was trained (not enough data, or the run was skipped).
A canary the store stopped (its adapter's files gone) keeps the product's "stopped".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.core.learning.models import Canary, RewardModelRecord
from bot.core.models import JSONObject
from bot.core.store import Store

METRICS = ("steps", "loss", "kl", "margin", "bf16")
REWARD_MODEL_REPORT = ("auc", "auc_low", "auc_high", "usable", "message", "liked", "disliked")
# Of the reward model's sycophancy pre-screen (core/learning/rm_screen.py; the sign test's counts
# where no scorer weighs the probes).
SYCOPHANCY = ("passed", "message", "candidate", "serving", "b", "c", "p", "alpha", "prefers_agreeing",
              "prefers_correcting")  # fmt: skip


@dataclass(slots=True)
class Night:
    night: int
    status: str
    message: str
    examples: dict[str, Any] = field(default_factory=dict)
    heldout: dict[str, Any] = field(default_factory=dict)
    adapter: dict[str, Any] | None = None
    reward_model: dict[str, Any] | None = None
    candidate: str | None = None  # the canary's variant, described
    candidate_rate: float | None = None
    served_rate: float = 0.0
    decision: dict[str, Any] = field(default_factory=dict)
    minutes: dict[str, float] = field(default_factory=dict)


async def trained(store: Store, night: int, result: JSONObject) -> Night:
    """The night as the nightly job's result and the registry recorded it."""
    dataset: Any = result.get("dataset", {})
    record = Night(
        night=night,
        status=str(result.get("status")),
        message=str(result.get("message", "")),
        examples=dict(dataset.get("examples", {})),
        heldout=dict(dataset.get("heldout", {})),
    )
    version = result.get("version")
    if isinstance(version, int):
        metrics: Any = result.get("metrics", {})
        record.adapter = {
            "version": version,
            "passed": bool(_gate(result).get("passed")),
            "checks": _checks(_gate(result)),
            "metrics": {key: metrics.get(key) for key in METRICS},
        }
    run = result.get("run")
    reward_model = await _reward_model_of(store, run) if isinstance(run, int) else None
    if reward_model is not None:
        report = dict(reward_model.report)
        sycophancy: Any = report.get("sycophancy")
        record.reward_model = {
            "version": reward_model.version,
            "status": reward_model.status,
            **{key: report.get(key) for key in REWARD_MODEL_REPORT},
            "sycophancy": None
            if not isinstance(sycophancy, dict)
            else {key: sycophancy[key] for key in SYCOPHANCY if key in sycophancy},
        }
    return record


def decision(night: Night, canary: Canary | None, passed: JSONObject | None) -> dict[str, Any]:
    """The night's decision (module docstring)."""
    if canary is not None and passed is not None:
        return {
            "decision": str(passed.get("decision")),
            "reason": str(passed.get("reason", "")),
            "bound": dict(passed.get("bounds") or {}),
            "candidate": canary.candidate.describe(),
        }
    if night.adapter is None and night.reward_model is None:
        return {"decision": "none", "reason": night.message, "bound": None, "candidate": None}
    reasons, bounds = [], {}
    if night.adapter is not None and not night.adapter["passed"]:
        for name, check in night.adapter["checks"].items():
            if check["gates"] and not check["passed"]:
                reasons.append(f"adapter v{night.adapter['version']}, {name}: {check['message']}")
                bounds[name] = {"value": check["value"], "bound": check["bound"]}
    rm = night.reward_model
    if rm is not None and rm["status"] == "failed":
        sycophancy = rm["sycophancy"]
        if sycophancy is not None and not sycophancy["passed"]:
            reasons.append(f"reward model r{rm['version']}, sycophancy: {sycophancy['message']}")
            bounds["reward_model_sycophancy"] = {k: v for k, v in sycophancy.items() if k != "message"}
        else:
            reasons.append(f"reward model r{rm['version']}: {rm['message']}")
            bounds["reward_model_auc"] = {"value": rm["auc_low"], "bound": "the AUC's lower 95 % end"}
    return {
        "decision": "refused",
        "reason": "; ".join(reasons) or night.message,
        "bound": bounds,
        "candidate": None,
    }


def _gate(result: JSONObject) -> dict[str, Any]:
    gate = result.get("gate")
    return dict(gate) if isinstance(gate, dict) else {}


def _checks(gate: dict[str, Any]) -> dict[str, Any]:
    checks = gate.get("checks")
    if not isinstance(checks, dict):
        return {}
    return {name: _check(check) for name, check in checks.items() if isinstance(check, dict)}


def _check(check: dict[str, Any]) -> dict[str, Any]:
    keys = ("passed", "gates", "value", "bound", "message")
    found = {key: check.get(key) for key in keys}
    found["gates"] = check.get("gates", True) is not False
    return found


async def _reward_model_of(store: Store, run_id: int) -> RewardModelRecord | None:
    return next((rm for rm in await store.trials.list_reward_models(20) if rm.run_id == run_id), None)
