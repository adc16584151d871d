"""The fleet seen by handshake-era sessions and by a replica on stdio: ``mcpkit run --store``
over stdio shares tasks and changes with two ``--transport http`` replicas (tests/test_fleet.py
has the fixtures)."""

from __future__ import annotations

import asyncio
import http.client
import json
from pathlib import Path
from typing import Any

import pytest
from http_support import initialize, post
from redis_support import RedisServer
from stdio_support import Talk, mcpkit_run
from tasks_support import META
from test_fleet import (  # noqa: F401 - the fixtures
    APP,
    WAIT_S,
    Replica,
    answer_name,
    fleet,
    redis,
    start,
    status_is,
    until,
)

HANDSHAKE = "2025-11-25"
UPDATED = {
    "jsonrpc": "2.0",
    "method": "notifications/resources/updated",
    "params": {"uri": "file:///shared.txt"},
}


def touch(replica: Replica, request_id: int) -> None:
    """``touch`` through ``replica``: it publishes an update of ``file:///shared.txt``."""
    call = {"name": "touch", "arguments": {"uri": "file:///shared.txt"}}
    touched = replica.ask(request_id, "tools/call", call, "touch")
    assert touched["result"]["content"] == [{"type": "text", "text": "touched"}]


def test_a_handshake_session_on_b_hears_a_resource_update_published_on_a(
    fleet: tuple[Replica, Replica, Path],  # noqa: F811
) -> None:
    a, b, _ = fleet
    session = initialize(b.port, HANDSHAKE)
    headers = {"mcp-session-id": session, "mcp-protocol-version": HANDSHAKE}
    subscribe = {"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe"}
    subscribe["params"] = {"uri": "file:///shared.txt"}
    assert post(b.port, subscribe, headers).messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    connection = http.client.HTTPConnection("127.0.0.1", b.port, timeout=WAIT_S)
    try:
        connection.request("GET", "/mcp", headers={**headers, "accept": "text/event-stream"})
        stream = connection.getresponse()
        assert stream.status == 200
        while (line := stream.readline()) != b"data: \n":  # the priming event: it is open
            assert line, "the stream ended"
        touch(a, 2)
        assert next_data(stream) == UPDATED
    finally:
        connection.close()


def next_data(stream: http.client.HTTPResponse) -> Any:
    """The next SSE event that carries a message."""
    while True:
        line = stream.readline()
        assert line, "the stream ended"
        if line.startswith(b"data:") and line[5:].strip():
            return json.loads(line[5:])


def test_mcpkit_run_store_over_stdio_shares_tasks_and_changes_with_the_http_replicas(
    fleet: tuple[Replica, Replica, Path],  # noqa: F811
    redis: RedisServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b, marks = fleet
    monkeypatch.setenv("MCPKIT_TASK_LEASE_S", "1")
    monkeypatch.setenv("FLEET_MARKS", str(marks))

    async def scenario() -> None:
        async with mcpkit_run(APP, "--store", redis.url) as process:
            talk = Talk(process, timeout=WAIT_S)
            await task_through_stdio(talk, b)
            await talk.initialize(HANDSHAKE)  # a handshake-era session on the same replica
            subscribe = {"jsonrpc": "2.0", "id": 3, "method": "resources/subscribe"}
            subscribe["params"] = {"uri": "file:///shared.txt"}
            assert await talk.request(subscribe) == {"jsonrpc": "2.0", "id": 3, "result": {}}
            await asyncio.to_thread(touch, a, 4)
            while not talk.notes:
                assert await talk.read(), "the server ended"
            assert talk.notes == [UPDATED]
            assert (await talk.end())[0] == 0

    asyncio.run(scenario())


async def task_through_stdio(talk: Talk, b: Replica) -> None:
    """A task started on the stdio replica, answered through HTTP replica B, read on stdio."""
    params = {"name": "greet", "arguments": {}, "_meta": META}
    created = await talk.request(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    )
    task_id = created["result"]["taskId"]
    asking = await asyncio.to_thread(until, status_is(b, task_id, "input_required"), "B reads")
    await asyncio.to_thread(answer_name, b, asking, "Stdio")
    get = {"jsonrpc": "2.0", "method": "tasks/get", "params": {"taskId": task_id, "_meta": META}}
    while True:
        got = await talk.request({**get, "id": f"get-{len(talk.answers)}"})
        if got["result"]["status"] == "completed":
            break
        await asyncio.sleep(0.05)  # as a client polls a task
    assert got["result"]["result"]["content"] == [{"type": "text", "text": "Hello, Stdio"}]
    assert got["result"] == await asyncio.to_thread(b.task, task_id)  # one record, both ways
