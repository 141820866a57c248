"""docker-compose.yml (its gpu profile included) and the GPU-training override, checked by
docker-compose itself (1.29 works offline, with no engine)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml  # PyYAML comes with transformers
from pydantic import SecretStr
from pydantic_settings import BaseSettings

from bot.core.jobs import queue_for
from bot.inference.gpu_workers.reply_stream import GENERATE_JOB
from bot.wiring.backends import GPU_QUEUE
from bot.wiring.settings import InferenceSettings, Settings, WorkerSettings

pytestmark = pytest.mark.procs

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = shutil.which("docker-compose")
REQUIRED = {"POSTGRES_PASSWORD": "x", "KINDRED_FLOWER_USER": "admin", "KINDRED_FLOWER_PASSWORD": "pw"}
PROFILE = ("--profile", "gpu")  # replies on the GPU worker
GPU = (*PROFILE, "-f", "docker-compose.yml", "-f", "docker-compose.gpu.yml")  # and training on the GPU
GPU_FILE = "docker-compose.gpu.yml"
MISSING = "docker-compose is not installed: `apt-get install -y docker-compose` (.ci/run does it)"


def compose(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert COMPOSE is not None, MISSING
    return subprocess.run(
        [COMPOSE, "--project-directory", str(folder), *args], cwd=folder, capture_output=True, text=True,
        timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("docker-compose.yml", GPU_FILE, "Dockerfile"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / ".env").write_text("".join(f"{k}={v}\n" for k, v in REQUIRED.items()))
    return tmp_path


def resolved(project: Path, *files: str) -> dict[str, Any]:
    done = compose(project, *files, "config")
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = yaml.safe_load(done.stdout)
    return config


def test_the_file_is_valid(project: Path) -> None:
    for files in ((), PROFILE, GPU):
        done = compose(project, *files, "config", "-q")
        assert done.returncode == 0, (files, done.stderr)


def test_the_gpu_profile_adds_the_gpu_worker_and_the_bot_finds_it_unasked(project: Path) -> None:
    plain = resolved(project)["services"]
    profiled = resolved(project, *PROFILE)["services"]
    assert profiled["worker-gpu"]["profiles"] == ["gpu"]
    assert [name for name, service in profiled.items() if "gpu" in service.get("profiles", ())] == [
        "worker-gpu"
    ]
    assert "profiles" not in profiled["bot"] and "profiles" not in profiled["worker-cpu"]
    # The profile only adds a service: the bot is the same with it or without.
    assert profiled["bot"] == plain["bot"] == resolved(project, *GPU)["services"]["bot"]
    # The bot's settings as compose gives them: `auto` with Redis, so a reply goes to a worker on
    # the queue that worker-gpu consumes while one is there (tests/workers/test_auto_inference.py).
    bot = {k: str(v) for k, v in profiled["bot"]["environment"].items()}
    settings = Settings(workers=WorkerSettings(**bot), inference=InferenceSettings(**bot))  # type: ignore[arg-type]
    assert settings.inference.backend == "auto" and settings.workers.redis_url == "redis://redis:6379/0"
    gpu = profiled["worker-gpu"]
    assert gpu["command"][gpu["command"].index("--queues") + 1] == GPU_QUEUE == queue_for(GENERATE_JOB)
    assert gpu["environment"]["KINDRED_DEVICE"] == "cuda"
    assert gpu["environment"]["REDIS_URL"] == bot["REDIS_URL"]


def test_a_backend_chosen_in_env_is_kept(project: Path) -> None:
    (project / ".env").write_text(
        "".join(f"{k}={v}\n" for k, v in {**REQUIRED, "KINDRED_INFERENCE_BACKEND": "celery"}.items())
    )
    bot = resolved(project, *PROFILE)["services"]["bot"]
    assert bot["environment"]["KINDRED_INFERENCE_BACKEND"] == "celery"


def test_every_process_is_a_service_with_a_healthcheck(project: Path) -> None:
    services = resolved(project, *GPU)["services"]
    assert set(services) == {
        "postgres", "redis", "bot", "bot-replica", "front", "worker-gpu", "worker-cpu", "worker-train",
        "beat", "flower", "migrate",
    }  # fmt: skip
    # `migrate` is a one-shot: it runs `kindred migrate` and exits, and nothing waits on its health.
    assert all("healthcheck" in service for name, service in services.items() if name != "migrate")
    assert services["postgres"]["image"].startswith("pgvector/pgvector:")


def test_workers_take_their_queues_and_the_gpu_worker_reserves_a_gpu(project: Path) -> None:
    services = resolved(project, *GPU)["services"]
    gpu, cpu = services["worker-gpu"], services["worker-cpu"]
    assert gpu["command"][:7] == ["worker", "--name", "gpu", "--queues", "gpu", "--pool", "threads"]
    assert gpu["deploy"]["resources"]["reservations"]["devices"] == [
        {"driver": "nvidia", "count": 1, "capabilities": ["gpu"]}
    ]
    # Nightly training: on the CPU worker without a GPU, on its own GPU worker with one.
    plain_cpu = resolved(project)["services"]["worker-cpu"]
    assert plain_cpu["command"][:5] == ["worker", "--name", "cpu", "--queues", "build,default,train"]
    assert cpu["command"][:5] == ["worker", "--name", "cpu", "--queues", "build,default"]
    train = services["worker-train"]
    assert train["command"][:5] == ["worker", "--name", "train", "--queues", "train"]
    assert train["environment"]["KINDRED_TRAIN_DEVICE"] == "cuda"
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert train["deploy"]["resources"]["reservations"]["devices"] == devices
    assert services["beat"]["command"] == ["beat"]
    for name in ("bot", "bot-replica", "worker-gpu", "worker-cpu", "worker-train", "beat", "flower"):
        assert services[name]["environment"]["REDIS_URL"] == "redis://redis:6379/0"


def test_replicas_are_an_opt_in_profile_behind_one_front(project: Path) -> None:
    services = resolved(project)["services"]
    replica, front = services["bot-replica"], services["front"]
    assert replica["profiles"] == front["profiles"] == ["replicas"]
    assert "profiles" not in services["bot"], "`docker compose up` alone runs one bot, as before"
    assert replica["command"] == services["bot"]["command"] == ["run"]
    assert replica["environment"]["KINDRED_RUN_PLATFORMS"] == "telegram"
    same = ("KINDRED_INFERENCE_BACKEND", "REDIS_URL", "DATABASE_URL", "KINDRED_WEB_PORT")
    mine, bots = replica["environment"], services["bot"]["environment"]
    assert {k: mine[k] for k in same} == {k: bots[k] for k in same}, "a replica replies as the bot does"
    assert "ports" not in replica, "replicas are reached through front only, so they can be scaled"
    assert front["ports"] == ["127.0.0.1:8081:8080/tcp"], "the replicas' one address, on this host only"
    config = " ".join(front["command"])
    assert "server bot:8080; server bot-replica:8080;" in config
    assert "proxy_next_upstream error timeout http_502 http_503 non_idempotent" in config


def test_flower_cannot_start_without_its_password(project: Path) -> None:
    (project / ".env").write_text("POSTGRES_PASSWORD=x\nKINDRED_FLOWER_USER=admin\n")
    done = compose(project, "config", "-q")
    assert done.returncode != 0
    assert "KINDRED_FLOWER_PASSWORD" in done.stderr


def test_data_lives_in_named_volumes(project: Path) -> None:
    config = resolved(project)
    assert set(config["volumes"]) == {"pgdata", "redisdata", "kindred-data"}


def test_every_variable_the_file_reads_is_in_env_example() -> None:  # needs no docker-compose
    text = (ROOT / "docker-compose.yml").read_text() + (ROOT / GPU_FILE).read_text()
    used = set(re.findall(r"\$\{([A-Z_][A-Z0-9_]*)", text))
    example = (ROOT / ".env.example").read_text()
    listed = set(re.findall(r"^#? ?([A-Z_][A-Z0-9_]*)=", example, flags=re.MULTILINE))
    assert used - listed == set()
    workers = {
        "KINDRED_JOB_THREADS", "KINDRED_VISIBILITY_TIMEOUT_S", "KINDRED_UPKEEP_CRON",
        "KINDRED_BEAT_LOCK_TTL_S", "KINDRED_ENV", "KINDRED_FLOWER_PORT", "KINDRED_ADMIN_PASSWORD",
    }  # fmt: skip
    assert workers - listed == set()


# Which secrets each service is given (docker-compose.yml's table); every other one is held back.
DATABASE = "POSTGRES_PASSWORD"
NEEDS = {
    "bot": {"TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "DISCORD_BOT_TOKEN", "KINDRED_ADMIN_PASSWORD",
            "KINDRED_OPENAI_API_KEY", "KINDRED_EMBEDDING_API_KEY", "KINDRED_SPEECH_API_KEY",
            "KINDRED_VISION_API_KEY", "KINDRED_TTS_API_KEY", DATABASE},
    # The proactive beat runs on the default queue and sends through the platforms' APIs; the
    # memory jobs there embed.
    "worker-cpu": {"KINDRED_OPENAI_API_KEY", "KINDRED_EMBEDDING_API_KEY", "TELEGRAM_BOT_TOKEN",
                   "DISCORD_BOT_TOKEN", DATABASE},
    "worker-gpu": {DATABASE},
    "worker-train": {DATABASE},
    "migrate": {DATABASE},
    # Replicas serve Telegram's webhook; Discord's gateway stays with `bot`.
    "bot-replica": {"TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "KINDRED_ADMIN_PASSWORD",
                    "KINDRED_OPENAI_API_KEY", "KINDRED_EMBEDDING_API_KEY", "KINDRED_SPEECH_API_KEY",
                    "KINDRED_VISION_API_KEY", "KINDRED_TTS_API_KEY", DATABASE},
    "front": set(),
    "beat": set(),
    "flower": {"KINDRED_FLOWER_PASSWORD"},
    "postgres": {DATABASE},
    "redis": set(),
}  # fmt: skip


def secret_variables() -> set[str]:
    """Every secret Kindred's settings read (each SecretStr field's variable), and the database's."""
    found = {DATABASE}
    for section in Settings.model_fields.values():
        model = section.annotation
        assert isinstance(model, type) and issubclass(model, BaseSettings)
        prefix = model.model_config.get("env_prefix", "")
        for name, field in model.model_fields.items():
            if SecretStr in getattr(field.annotation, "__args__", (field.annotation,)):
                alias = field.validation_alias
                choices = getattr(alias, "choices", None)
                found.add(str(choices[0]) if choices else f"{prefix}{name}".upper())
    return found


def test_each_service_is_given_only_the_secrets_it_needs(project: Path) -> None:
    secrets = {name: f"secret-value-of-{name.lower().replace('_', '-')}" for name in secret_variables()}
    assert set(secrets) == set().union(*NEEDS.values())  # a new secret must be placed in the table
    env = {**REQUIRED, **secrets}
    (project / ".env").write_text("".join(f"{k}={v}\n" for k, v in env.items()))
    for files in ((), PROFILE, GPU):
        services = resolved(project, *files)["services"]
        for name, service in services.items():
            shown = json.dumps(service)
            given = {secret for secret, value in secrets.items() if value in shown}
            assert given == NEEDS[name], name


def test_a_worker_healthcheck_does_not_depend_on_the_order_of_its_queues(project: Path) -> None:
    seen = []
    for queues in ("build,default,train", "train,default,build"):
        env = {**REQUIRED, "KINDRED_CPU_QUEUES": queues, "KINDRED_GPU_QUEUES": "train,gpu"}
        (project / ".env").write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        services = resolved(project, *GPU)["services"] | {
            "worker-cpu (no GPU)": resolved(project)["services"]["worker-cpu"]
        }
        for name in ("worker-cpu", "worker-gpu", "worker-train", "worker-cpu (no GPU)"):
            command, check = services[name]["command"], services[name]["healthcheck"]["test"][1]
            node = command[command.index("--name") + 1]
            assert f"--destination {node}@$$HOSTNAME" in check, name  # the node `kindred worker` names
            seen.append((name, node, check))
    assert seen[:4] == seen[4:]  # the same nodes and checks, whichever order the queues came in


def test_the_bot_is_given_the_time_its_graceful_stop_takes(project: Path) -> None:
    """bench/soak.py: a stop drains the updates the webhook accepted; killed before it ends, they are lost."""
    from bot.cli.run import STOP_TIMEOUT_S

    grace = resolved(project)["services"]["bot"]["stop_grace_period"]
    match = re.fullmatch(r"(\d+)s", str(grace))
    assert match is not None and int(match.group(1)) > STOP_TIMEOUT_S + 10, grace


def test_the_workers_start_after_kindred_migrate_has_run_once(project: Path) -> None:
    """A worker never migrates; one whose store is behind refuses its jobs. So compose runs
    `kindred migrate` once, and every worker waits for it to have finished well."""
    services = resolved(project, *GPU)["services"]
    migrate = services["migrate"]
    assert migrate["command"] == ["migrate"] and migrate["restart"] == "no"
    assert migrate["environment"]["DATABASE_URL"] == services["worker-cpu"]["environment"]["DATABASE_URL"]
    for name in ("worker-cpu", "worker-gpu", "worker-train"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert services[name]["depends_on"]["postgres"] == {"condition": "service_healthy"}
