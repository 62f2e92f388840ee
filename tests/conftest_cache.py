"""Shared fixtures of the cache tests: a private redis-server per test, caches of both kinds.

Imported explicitly by tests/test_cache*.py (tests/conftest.py belongs to the lead). Without a
``redis-server`` binary the Redis tests are skipped, except when CI=true, where they fail.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cache import open_cache  # noqa: E402

REDIS_BIN = shutil.which("redis-server")


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def require_redis() -> None:
    """Skip the calling test without redis-server (fail instead when CI=true)."""
    if REDIS_BIN is None:
        message = "redis-server is not on PATH: install Redis to run the Redis cache tests"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + " (required when CI=true)")
        pytest.skip(message)


class RedisServer:
    """A private redis-server subprocess on a loopback port, with fault injection."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """redis:// URL of this server (database 0)."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server (again, on the same port) and wait until it answers PING."""
        self.proc = subprocess.Popen(
            [REDIS_BIN, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.workdir), "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}")
            try:
                if self.client().ping():
                    return
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not answer within 10 s")

    def client(self) -> redis.Redis:
        """A plain redis-py client on this server (raw bytes)."""
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def kill(self) -> None:
        """SIGKILL the server and reap it (its data is lost: no persistence)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP the server: connections open but nothing answers."""
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT a paused server."""
        self.proc.send_signal(signal.SIGCONT)


@pytest.fixture
def redis_server(tmp_path_factory):
    """A fresh private redis-server for one test; killed afterwards."""
    require_redis()
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    for attempt in range(3):
        try:
            server.start()
            break
        except RuntimeError:
            if attempt == 2:
                raise
            server.port = free_port()
    yield server
    server.kill()


FINGERPRINT = "testfp"


@pytest.fixture(params=["disk", pytest.param("layered", marks=pytest.mark.redis)])
def backend(request, tmp_path):
    """(kind, url, local_dir) for each backend; "layered" starts a private Redis."""
    if request.param == "disk":
        return "disk", f"disk:{tmp_path / 'cache'}", None
    server = request.getfixturevalue("redis_server")
    return "layered", server.url, str(tmp_path / "local")


@pytest.fixture
def any_cache(backend):
    """An open cache of each backend kind, closed afterwards."""
    kind, url, local_dir = backend
    cache = open_cache(url, FINGERPRINT, local_dir=local_dir)
    yield cache
    cache.close()
