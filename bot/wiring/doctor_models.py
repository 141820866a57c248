"""`kindred doctor`'s look at the models list ([personal] 3): the file parses, each server model is
listed by its server (`GET /v1/models`, once, with its key) and each local model's files are here.
Nothing is loaded, converted or downloaded."""

from __future__ import annotations

import asyncio

from bot.core.chat_models import ChatModel, parse_models
from bot.core.errors import ConfigError, KindredError
from bot.wiring.doctor import PROBE_TIMEOUT_S, Check, one_line, without_credentials
from bot.wiring.models import api_key, key_setting, models_path
from bot.wiring.settings import Settings


async def check_models(settings: Settings) -> Check:
    path = models_path(settings.data_dir, settings.inference.models_file)
    if not path.exists():
        return Check("models", "off", f"no {path}: the configured model answers everywhere")
    try:
        book = parse_models(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read ({exc})") from None
    found = await asyncio.gather(*(model_found(settings, model) for model in book.models))
    results = list(zip(book.models, found, strict=True))
    problems = [one_line(f"{model.name}: {problem}") for model, (ok, problem) in results if not ok]
    if problems:
        # Each failing model's reason whole, however many: the admin needs every one to fix.
        return Check("models", "fail", "; ".join(problems))
    return Check(
        "models", "ok", one_line(f"{path}: " + ", ".join(f"{m.name} ({said})" for m, (_, said) in results))
    )


async def model_found(settings: Settings, model: ChatModel) -> tuple[bool, str]:
    """(True, where it is) or (False, why not), for one listed model."""
    if model.backend == "local":
        from bot.inference.model_files import model_status

        try:
            return True, await asyncio.to_thread(
                model_status, model.model, settings.data_dir, f"models.toml {model.name}"
            )
        except KindredError as exc:
            return False, str(exc)
    from bot.inference.openai_compat import served_models

    assert model.url is not None
    where = without_credentials(model.url)
    try:
        served = await served_models(
            model.url, api_key=api_key(model), timeout_s=PROBE_TIMEOUT_S, key_setting=key_setting(model)
        )
    except KindredError as exc:
        return False, str(exc)
    if model.model not in served:
        return False, f"{where} does not list {model.model} (it lists {', '.join(served[:5]) or 'none'})"
    return True, f"{model.model} at {where}"
