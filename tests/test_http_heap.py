"""``mcpkit run --transport http`` serves from a process that does nothing else: once warmed up,
it moves its heap out of the garbage collector's sight (``gc.freeze``), as stdio does; an
``HttpApp`` mounted in someone else's process leaves that process's heap alone."""

from __future__ import annotations

import gc
import json
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
