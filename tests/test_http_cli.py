"""``mcpkit run --transport http`` as real processes: the URL line, stopping, the missing
extra, slow clients and the session cap, and scale-out over uvicorn workers in stateless
mode."""

from __future__ import annotations

import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from http_support import free_port, initialize, modern_call, modern_headers, post
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpkit.cli.commands import cli

ROOT = Path(__file__).resolve().parent.parent
APP = "tests/http_app.py:app"
START_TIMEOUT = 20.0


def start(*args: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    command = [sys.executable, "-m", "mcpkit", "run", APP, "--transport", "http"]
    command += ["--port", str(port), *args]
    process = subprocess.Popen(
        command, cwd=ROOT, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read() if process.stderr else b""
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process, port
        time.sleep(0.05)
    stop(process)
    raise AssertionError("the server did not listen")


def stop(process: subprocess.Popen[bytes]) -> bytes:
    """SIGTERM the process group, SIGKILL if it lingers; returns stderr."""
    with_timeout = [(signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)]
    for sig, wait in with_timeout:
        try:
            os.killpg(process.pid, sig)
            process.wait(wait)
            break
        except ProcessLookupError:
            break
        except subprocess.TimeoutExpired:
            continue
    if process.stderr is None or process.stderr.closed:
        return b""
    with process.stderr:
        return process.stderr.read()


@pytest.fixture
def served() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    process, port = start()
    try:
        yield process, port
    finally:
        stop(process)


SSL = ssl.create_default_context()  # built once: a context per client costs ~60 ms


async def call(port: int, name: str, arguments: dict[str, Any], mode: Any = "auto") -> Any:
    """One call from a new client over a new connection (a new ``AsyncClient``, new pool)."""
    url = f"http://127.0.0.1:{port}/mcp"
    with anyio.fail_after(15):
        async with (
            httpx2.AsyncClient(verify=SSL, timeout=15) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode, cache=None) as client,
        ):
            result = await client.call_tool(name, arguments)
            return result.content[0].text  # type: ignore[union-attr]


def test_run_serves_http_and_prints_the_url(served: tuple[subprocess.Popen[bytes], int]) -> None:
    process, port = served
    assert anyio.run(call, port, "echo", {"text": "hi"}) == "hi"
    assert anyio.run(call, port, "echo", {"text": "yo"}, "legacy") == "yo"
    stderr = stop(process).decode()
    assert f"http://127.0.0.1:{port}/mcp" in stderr
    assert process.returncode is not None


def test_run_http_without_uvicorn_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = CliRunner().invoke(cli, ["run", APP, "--transport", "http"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert 'pip install "mcpkit[http]"' in lines[0]


def test_run_http_with_a_bad_target_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["run", "tests/nope.py:app", "--transport", "http"])
    assert result.exit_code == 2
    assert "no such file" in result.output


HALF_SENT = {
    "nothing": b"",
    "half the headers": b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",
    "half the body": (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"
    ),
}


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closes ``sock`` (before the socket's own timeout runs out)."""
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_run_closes_connections_that_never_finish_a_request_but_not_slow_answers() -> None:
    process, port = start("--read-timeout", "1")
    slow: dict[str, socket.socket] = {}
    try:
        for name, data in HALF_SENT.items():
            slow[name] = socket.create_connection(("127.0.0.1", port), timeout=20)
            slow[name].sendall(data)
        call = modern_call(1, "slow", {"seconds": 2})  # longer than the read timeout
        reply = post(port, call, modern_headers("tools/call", "slow"))
        assert reply.json["result"]["content"] == [{"type": "text", "text": "slept"}]
        closed = {name: closed_by_server(sock) for name, sock in slow.items()}
        assert closed == dict.fromkeys(HALF_SENT, True)
    finally:
        for sock in slow.values():
            sock.close()
        stderr = stop(process).decode()
    assert "Traceback" not in stderr


def test_run_caps_sessions() -> None:
    process, port = start("--max-sessions", "1")
    try:
        session = initialize(port)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as stream:
            stream.sendall(  # the GET stream keeps the one session busy
                f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                f"Mcp-Session-Id: {session}\r\n\r\n".encode()
            )
            assert b" 200 " in stream.recv(1024)
            params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
            reply = post(
                port, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
            )
    finally:
        stop(process)
    text = "Service Unavailable: all 1 sessions are in use (max_sessions=1); try again later"
    error = {"code": -32603, "message": text}
    assert (reply.status, reply.json) == (503, {"jsonrpc": "2.0", "id": 0, "error": error})


def test_scale_out_over_two_stateless_workers() -> None:
    process, port = start("--stateless", "--workers", "2")
    try:
        pids, failures = anyio.run(_hammer, port)
    finally:
        stop(process)
    assert failures == []
    assert len(pids) == 2, pids
    assert process.pid not in pids  # the workers answered, not the supervisor


async def _hammer(port: int) -> tuple[set[int], list[str]]:
    """200 calls over fresh connections, 8 at a time; more (up to a time window) until both
    workers have answered, since the kernel picks the worker."""
    pids: set[int] = set()
    failures: list[str] = []
    limit = anyio.Semaphore(8)

    async def one() -> None:
        async with limit:
            try:
                text = await call(port, "pid", {}, "2026-07-28")
                pids.add(json.loads(text)["result"])
            except Exception as exc:
                failures.append(repr(exc))

    async with anyio.create_task_group() as group:
        for _ in range(200):
            group.start_soon(one)
    deadline = time.monotonic() + 20
    while len(pids) < 2 and time.monotonic() < deadline:
        await one()
    return pids, failures
