"""A real ``redis-server`` for the fleet tests: started on a free loopback port in a temporary
directory, stopped by its pid. Missing binary: the test skips, saying why, except under
``CI=true``, where it fails (CI installs the ``redis-server`` package, see ``.ci/run``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest
from http_support import free_port

READY_S = 10.0


def redis_binary() -> str:
    """The ``redis-server`` path; skips (fails under ``CI=true``) when there is none."""
    found = shutil.which("redis-server")
    if found is not None:
        return found
    reason = "redis-server is not installed (Debian: apt-get install redis-server)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI=true requires it")
    pytest.skip(reason)


class RedisServer:
    """One ``redis-server`` process (no persistence unless ``aof``)."""

    def __init__(self, directory: Path, *, aof: bool = False) -> None:
        self.directory = directory
        self.aof = aof
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "yes" if self.aof else "no"]
        command += ["--dir", str(self.directory)]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + READY_S
        while not self.answers_ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.01)

    def answers_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, 15)
            self.process.wait(READY_S)
        self.process = None
