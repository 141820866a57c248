"""Weights packed once for oneDNN, so that a CPU step of a few rows costs about what one row does.

A decode step multiplies a few rows (a batch's replies, best-of-n's candidates) by every weight.
`F.linear` (MKL's sgemm) lays the weight out afresh on each call once there is more than one row:
a step of 2 to 8 rows took ~1.6 times a step of one (SmolLM2-135M, float32, one thread, AMD EPYC
with AVX512). oneDNN's linear over a weight reordered once for it took 4 rows in ~1.1 times one row
and sped up prefill a little. Its results differ from `F.linear`'s in the last bits only (another
order of summation), as another BLAS would.

Only on the CPU, and only where the ops are there and agree with `F.linear` on a probe; elsewhere
nothing is packed and `linear` is `F.linear`. Packing copies the weights (the model's size once
more, ~0.2 s for SmolLM2-135M); the memory-mapped originals are then no longer read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

import torch
import torch.nn.functional as F

# The rows the packed layout is chosen for: 8 served 1 to 8 rows and prefill well.
PACK_FOR_ROWS = 8
_PROBE_TOLERANCE = 1e-3

log = logging.getLogger(__name__)


def pack(weights: Mapping[str, torch.Tensor], names: Iterable[str]) -> dict[str, torch.Tensor]:
    """The named 2-d weights packed for `linear`, or nothing where packing does not apply."""
    names = list(names)
    if not names or not _applies(weights[names[0]]):
        return {}
    try:
        reorder = torch.ops.mkldnn._reorder_linear_weight
        packed = {name: reorder(weights[name], PACK_FOR_ROWS) for name in names}
        first = weights[names[0]]
        # Its own generator: packing must not move torch's global one (an unseeded reply's draws).
        probe = torch.randn(3, first.shape[1], dtype=first.dtype, generator=torch.Generator().manual_seed(0))
        expected = F.linear(probe, weights[names[0]])
        agrees = torch.allclose(
            linear(probe, weights[names[0]], packed[names[0]]), expected, atol=_PROBE_TOLERANCE
        )
    except (AttributeError, RuntimeError) as exc:  # an op missing from this torch build, or refused
        log.info("weights not packed for oneDNN (%s); using F.linear", exc)
        return {}
    if not agrees:
        log.warning("oneDNN's packed linear disagrees with F.linear here; using F.linear")
        return {}
    return packed


def linear(x: torch.Tensor, weight: torch.Tensor, packed: torch.Tensor | None) -> torch.Tensor:
    """`F.linear(x, weight)`, through `packed` (weight's packed copy) when there is one."""
    if packed is None:
        return F.linear(x, weight)
    out: torch.Tensor = torch.ops.mkldnn._linear_pointwise(x, packed, None, "none", [], "")
    return out


def _applies(weight: torch.Tensor) -> bool:
    return (
        weight.device.type == "cpu"
        and weight.dtype in (torch.float32, torch.bfloat16)
        and bool(torch.backends.mkldnn.is_available())  # type: ignore[no-untyped-call]
    )
