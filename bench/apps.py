"""Mini-app builds: cold-build p50/p95 per kind, and the cached build of an identical request.

    python -m bench.apps                      # rules only, 20 builds per kind, SQLite
    python -m bench.apps --model bundled      # with the default CPU model's pass (SmolLM2-135M)
    python -m bench.apps --builds 3           # a smoke run
    python -m bench.apps --screenshots docs/apps   # the README's pictures instead: each kind,
                                                   # light and dark, in headless Chromium

A cold build is a new person's request (no cache to hit); the cached one repeats a request the same
person already built. Each is `core/miniapps/build.py: build_app` end to end: classify, fill, the model's
pass when asked, render, check, store. Prints one JSON object, last, on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.parts.common import log, machine, millis, now_iso, open_store
from bot.core.chat.ports import Inference
from bot.core.miniapps.build import BuildPolicy, BuildRequest, build_app
from bot.core.miniapps.kinds import KINDS
from bot.web.miniapps.render import TemplateRenderer

# One request of each kind, as people ask for it; the tests build the same ones.
REQUESTS = {
    "checklist": "a packing checklist for my beach trip",
    "tracker": "track how much water I drink",
    "ranking": "rank this week's hottest cities",
    "timer": "a pomodoro timer",
    "countdown": "a countdown to Christmas",
    "quiz": "spanish flashcards",
    "converter": "convert celsius to fahrenheit",
    "notes": "a gratitude journal",
}
TARGETS = {"cold_build_p95_ms": 60_000.0, "cached_build_p95_ms": 1_000.0}


def _model(name: str) -> Inference | None:
    if name == "none":
        return None
    from bot.wiring.backends import load_local_inference
    from bot.wiring.settings import InferenceSettings, Settings

    return load_local_inference(Settings(inference=InferenceSettings(model=name)))


async def measure(builds: int, inference: Inference | None) -> dict[str, Any]:
    renderer, policy = TemplateRenderer(), BuildPolicy(max_concurrent=2)
    cold: dict[str, dict[str, float]] = {}
    sources: dict[str, list[str]] = {}
    async with open_store("sqlite") as opened:
        apps = opened.store.miniapps
        for kind in KINDS:
            samples: list[float] = []
            for n in range(builds):
                request = BuildRequest(f"{kind}-{n}", f"bench:{kind}:{n}", "bench", REQUESTS[kind])
                started = time.perf_counter()
                built = await build_app(apps, renderer, request, [], datetime.now(UTC), policy=policy,
                                        inference=inference)  # fmt: skip
                samples.append(time.perf_counter() - started)
                assert not built.cached
                sources.setdefault(kind, []).append(built.source)
            cold[kind] = millis(samples)
            log(f"{kind}: cold p50 {cold[kind]['p50_ms']:.1f} ms")
        cached: list[float] = []
        for n in range(max(builds, 5)):
            request = BuildRequest(f"again-{n}", "bench:checklist:0", "bench", REQUESTS["checklist"])
            started = time.perf_counter()
            built = await build_app(apps, renderer, request, [], datetime.now(UTC), policy=policy,
                                    inference=inference)  # fmt: skip
            cached.append(time.perf_counter() - started)
            assert built.cached
    return {
        "cold": cold,
        "cached": millis(cached),
        "model_used": {kind: kinds.count("model") / len(kinds) for kind, kinds in sources.items()},
        "checks": {
            "cold_build_p95_ms": {
                "value": max(cold[kind]["p95_ms"] for kind in KINDS),
                "target": TARGETS["cold_build_p95_ms"],
            },
            "cached_build_p95_ms": {
                "value": millis(cached)["p95_ms"],
                "target": TARGETS["cached_build_p95_ms"],
            },
        },
    }


async def screenshots(directory: Path) -> list[str]:
    """Each kind built from its request, served, drawn by Debian's chromium (as the browser tests
    do) light and dark, saved as 64-colour PNGs: a third of the bytes, no visible loss."""
    from PIL import Image

    from tests.support.app_web import app_site
    from tests.support.browser import Watched, chromium, light_and_dark

    paths: list[Path] = []
    with tempfile.TemporaryDirectory() as scratch:
        async with app_site(Path(scratch)) as site, chromium() as browser:
            tab = await Watched.open(browser)
            for kind in KINDS:
                built = await site.build(REQUESTS[kind])
                await tab.page.goto(site.url(built))
                await tab.page.locator("html[data-ready]").wait_for(state="attached")
                paths += await light_and_dark(tab.page, directory, kind)
                log(f"{kind}: drawn")
            if tab.problems:
                raise SystemExit(f"the apps logged errors: {tab.problems}")
    for path in paths:
        Image.open(path).convert("RGB").quantize(colors=64).save(path, optimize=True)
    return [str(path) for path in paths]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=int, default=20, help="cold builds per kind")
    parser.add_argument("--model", default="none", help="none (rules only), bundled, or a model path")
    parser.add_argument("--screenshots", type=Path, help="draw each kind light and dark into this folder")
    args = parser.parse_args()
    if args.screenshots is not None:
        args.screenshots.mkdir(parents=True, exist_ok=True)
        print(json.dumps({"date": now_iso(), "screenshots": asyncio.run(screenshots(args.screenshots))}))
        return
    inference = _model(args.model)
    result = asyncio.run(measure(args.builds, inference))
    settings = {"builds": args.builds, "model": args.model}
    report = {"date": now_iso(), "machine": machine(), "settings": settings, **result}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
