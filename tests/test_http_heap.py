"""``mcpkit run --transport http`` serves from a process that does nothing else: once warmed up,
it moves its heap out of the garbage collector's sight (``gc.freeze``), as stdio does; an
``HttpApp`` mounted in someone else's process leaves that process's heap alone."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from freeze_app import app
from http_support import free_port, post, serve
from test_stdio import Server

from mcpkit.cli.run import OPTIONS_ENV, TARGET_ENV, http_app_from_env

HEADERS = {"mcp-protocol-version": "2025-11-25"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "frozen"}}


def frozen(value: bool) -> dict[str, Any]:
    text = json.dumps({"result": value})
    result = {
        "content": [{"type": "text", "text": text.replace(" ", "")}],
        "structuredContent": {"result": value},
        "isError": False,
    }
    return {"jsonrpc": "2.0", "id": 2, "result": result}


def test_mcpkit_run_over_http_freezes_the_heap_once_warmed_up() -> None:
    port = free_port()
    args = ("--transport", "http", "--stateless", "--json-response", "--port", str(port))
    server = Server("tests/freeze_app.py:app", *args, "--log-level", "debug")
    try:
        server.stderr_until(b"Uvicorn running on")
        assert post(port, LIST, HEADERS).status == 200  # the warm-up starts after this answer
        server.stderr_until(b"warm-up done")
        assert post(port, CALL, HEADERS).json == frozen(True)
    finally:
        server.stop()


def test_each_worker_of_mcpkit_run_freezes_its_own_heap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TARGET_ENV, "tests/freeze_app.py:app")
    monkeypatch.setenv(OPTIONS_ENV, json.dumps({"stateless": True}))
    assert http_app_from_env().warming.freeze is True  # (freezes when its warm-up is done)
    assert app.asgi(stateless=True).warming.freeze is False  # (someone else's process)


def test_an_http_app_in_someone_elses_process_leaves_its_heap_alone() -> None:
    assert gc.get_freeze_count() == 0
    with serve(app.asgi(stateless=True, json_response=True)) as port:
        assert post(port, LIST, HEADERS).status == 200
        for _ in range(3):  # the warm-up's steps: one loop turn per definition, then one more
            assert post(port, CALL, HEADERS).json == frozen(False)
    assert gc.get_freeze_count() == 0


AFTER_THE_FREEZE = """
import asyncio, gc, json, sys, weakref
from asgi_support import Request
import http_app

V = {"mcp-protocol-version": "2025-11-25"}
HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c"}}
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}

async def main():
    asgi = http_app.app.asgi(owns_process=True)
    ids, sessions = [], []
    for _ in range(5):
        opened = Request("POST", INIT, V)
        await opened.serve(asgi)
        ids.append(opened.headers["mcp-session-id"])
        sessions.append(weakref.ref(asgi.sessions.live[ids[-1]]))
    listed = Request("POST", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                     {**V, "mcp-session-id": ids[0]})
    await listed.serve(asgi)  # the warm-up starts: it ends in gc.freeze()
    for _ in range(50):
        await asyncio.sleep(0)
    frozen = gc.get_freeze_count() > 0
    for session_id in ids:
        ended = Request("DELETE", None, {**V, "mcp-session-id": session_id})
        await ended.serve(asgi)
    gc.collect()
    print(json.dumps([frozen, sum(ref() is not None for ref in sessions)]))

asyncio.run(main())
"""


def test_sessions_open_when_the_heap_freezes_are_freed_when_they_end() -> None:
    """A frozen object in a reference cycle is never collected: the sessions alive at the
    freeze must end without one (in a process of their own: the freeze is for good)."""
    assert run_alone(AFTER_THE_FREEZE) == [True, 0]  # frozen; none of the 5 sessions left


def run_alone(script: str) -> Any:
    """Run ``script`` in a process of its own (with the tests' helpers importable); what it
    printed, as JSON."""
    tests = Path(__file__).resolve().parent
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tests,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tests), str(tests.parent)])},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


IN_FLIGHT_AT_THE_FREEZE = """
import asyncio, gc, json, weakref
from asgi_support import Request
import http_app
from mcpkit.transports.http import _exchange

made = []
plain_init = _exchange.Exchange.__init__
def init(self, *args):
    plain_init(self, *args)
    made.append(weakref.ref(self))
_exchange.Exchange.__init__ = init
V = {"mcp-protocol-version": "2025-11-25"}

def call(name, arguments):
    params = {"name": name, "arguments": arguments}
    return Request("POST", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, V)

async def main():
    asgi = http_app.app.asgi(stateless=True, json_response=True, owns_process=True)
    slow = [asyncio.ensure_future(call("slow", {"seconds": 0.3}).serve(asgi)) for _ in range(8)]
    await asyncio.sleep(0.05)  # 8 calls running, their disconnects watched
    await Request("POST", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, V).serve(asgi)
    for _ in range(50):
        await asyncio.sleep(0)
    frozen = gc.get_freeze_count() > 0
    await asyncio.gather(*slow)
    del slow
    await asyncio.sleep(0.05)
    gc.collect()
    print(json.dumps([frozen, sum(ref() is not None for ref in made)]))

asyncio.run(main())
"""


def test_requests_running_when_the_heap_freezes_are_freed_when_they_end() -> None:
    assert run_alone(IN_FLIGHT_AT_THE_FREEZE) == [True, 0]  # frozen; no request left
