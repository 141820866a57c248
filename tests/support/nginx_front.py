"""docker-compose.yml's `front` as it runs there: nginx with the very configuration that service
writes, its upstreams (`bot`, `bot-replica`) pointed at replicas on this machine's loopback."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
from pathlib import Path

import yaml  # PyYAML comes with transformers

from tests.support.started import Started

ROOT = Path(__file__).resolve().parents[2]
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MISSING = "nginx is not installed: `scripts/test-tools.sh` installs it (`make test` runs it)"


def front_site(upstreams: list[int], port: int) -> str:
    """The site configuration `front` writes, for replicas on these loopback ports."""
    service = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["front"]
    script = service["command"][-1].replace("$$", "$")  # compose's escape for a literal $
    printed = script.split("printf '", 1)[1].split("'", 1)[0]
    servers = " ".join(f"server 127.0.0.1:{p};" for p in upstreams)
    site = printed.replace("server bot:8080; server bot-replica:8080;", servers)
    assert site != printed, "front's upstreams are no longer bot and bot-replica"
    return site.replace("listen 8080;", f"listen 127.0.0.1:{port};")


class NginxFront(Started):
    def __init__(self, upstreams: list[int], folder: Path) -> None:
        self.upstreams, self.folder = upstreams, folder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._process: subprocess.Popen[bytes] | None = None

    def _launch(self) -> subprocess.Popen[bytes]:
        assert Path(NGINX).exists(), MISSING
        (self.folder / "site.conf").write_text(front_site(self.upstreams, self.port))
        (self.folder / "nginx.conf").write_text(
            f"pid {self.folder}/nginx.pid; error_log {self.folder}/error.log;\n"
            f"events {{}}\nhttp {{ access_log off; include {self.folder}/site.conf; }}\n"
        )
        return subprocess.Popen(
            [NGINX, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"), "-g", "daemon off;"]
        )

    async def start(self) -> None:
        self._process = await asyncio.to_thread(self._launch)
        for _ in range(100):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            return
        raise AssertionError(f"nginx did not listen: {(self.folder / 'error.log').read_text()}")

    async def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=10)
            self._process = None
