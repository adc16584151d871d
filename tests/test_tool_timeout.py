"""Per-tool timeouts: ``@app.tool(timeout=...)`` and ``ServerOptions(tool_timeout=...)``.

Past its timeout a call is answered ``isError: true`` ("Tool 'NAME' timed out after N s"); an
async tool is cancelled (its ``finally`` runs before the answer), a sync tool's thread runs on
and its late result is dropped. Timeouts here are 0.05 s; every wait is on an event, and no
assertion is about how long anything took.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import threading
from typing import Any

import pytest
from features_support import HANDSHAKE, STATELESS, Client, era, run, text_of
from http_support import modern_call, modern_headers, post, serve
from stdio_support import serve_on_pipes

from mcpkit import App, Context, DefinitionError, ServerOptions
from mcpkit.protocol.methods.tools import _seconds

LIMIT = 0.05
WAIT = 10.0  # seconds a worker thread waits for its release before giving up (never reached)
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS,
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Seen:
    """What the tools of one test saw."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = 0
        self.finally_ran = False
        self.cancelled_twice = asyncio.Event()


def stuck_app(seen: Seen, **options: Any) -> App:
    """An App whose ``stuck`` tool waits until cancelled."""
    app = App("timeouts", "1", options=ServerOptions(**options))

    @app.tool(timeout=LIMIT)
    async def stuck() -> str:
        seen.started.set()
        try:
            await seen.release.wait()
        finally:
            seen.finally_ran = True
        return "released"

    return app


def timed_out(name: str, seconds: str = "0.05") -> dict[str, Any]:
    return {
        "content": [{"type": "text", "text": f"Tool {name!r} timed out after {seconds} s"}],
        "isError": True,
    }


def as_sent(version: str, result: dict[str, Any]) -> dict[str, Any]:
    """A ``tools/call`` result as the version's client receives it."""
    if version != STATELESS:
        return result
    server_info = {"io.modelcontextprotocol/serverInfo": {"name": "timeouts", "version": "1"}}
    return {**result, "resultType": "complete", "_meta": server_info}


# ----------------------------------------------------------------------------- async tools


@era
def test_an_async_tool_past_its_timeout_is_cancelled_and_answered_as_failed(version: str) -> None:
    seen = Seen()
    app = stuck_app(seen)

    async def scenario() -> tuple[Any, bool]:
        async with Client(app, protocol_version=version) as client:
            answer = await client.request("tools/call", {"name": "stuck", "arguments": {}})
            return answer, seen.finally_ran  # read when the answer came, not later

    answer, finally_ran = run(scenario)
    assert answer == as_sent(version, timed_out("stuck"))
    assert finally_ran  # really cancelled: its finally ran before the call was answered


def test_a_tool_that_finishes_in_time_is_unaffected() -> None:
    app = App("timeouts", "1")

    @app.tool(timeout=LIMIT)
    async def quick(x: int) -> int:
        return x + 1

    @app.tool(timeout=LIMIT)
    def quick_sync(x: int) -> int:
        return x + 2

    @app.tool
    async def plain(x: int) -> int:
        return x + 1

    async def scenario() -> list[Any]:
        async with Client(app, protocol_version=HANDSHAKE) as client:
            results = [
                await client.request("tools/call", {"name": name, "arguments": {"x": 1}})
                for name in ("quick", "quick_sync", "plain")
            ]
            # the finished call's deadline leaves nothing behind in the session
            return [*results, await client.request("ping")]

    timed, timed_sync, untimed, pong = run(scenario)
    assert timed == untimed
    assert timed == {
        "content": [{"type": "text", "text": '{"result":2}'}],
        "structuredContent": {"result": 2},
        "isError": False,
    }
    assert timed_sync["structuredContent"] == {"result": 3}
    assert pong == {}


def test_a_tools_own_timeout_error_is_its_failure_not_a_timeout() -> None:
    app = App("timeouts", "1")

    @app.tool(timeout=60)
    async def gives_up() -> str:
        raise TimeoutError("the upstream service did not answer")

    async def scenario() -> dict[str, Any]:
        async with Client(app) as client:
            result: dict[str, Any] = await client.request(
                "tools/call", {"name": "gives_up", "arguments": {}}
            )
            return result

    result = run(scenario)
    assert result["isError"] is True
    assert text_of(result).startswith("Tool 'gives_up' failed with an internal error (reference ")


# ------------------------------------------------------------------------------ sync tools


class Recorder(logging.Handler):
    """Every record of the ``mcpkit`` loggers; ``dropped`` is set (on the loop, where the
    worker's result is settled) when the worker says it dropped a late result."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.dropped = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if "result dropped" in record.getMessage() and record.name == "mcpkit.workers":
            self.dropped.set()


@pytest.mark.parametrize("fails", [False, True], ids=["late value", "late exception"])
def test_a_sync_tool_is_answered_at_its_deadline_and_its_late_result_dropped(fails: bool) -> None:
    release, finished = threading.Event(), threading.Event()
    app = App("timeouts", "1")

    @app.tool(timeout=LIMIT)
    def blocking() -> str:
        release.wait(WAIT)
        finished.set()
        if fails:
            raise RuntimeError("too late to matter")
        return "late"

    recorder = Recorder()
    logger = logging.getLogger("mcpkit")
    level = logger.level

    async def scenario() -> tuple[Any, bool, list[Any], Any]:
        async with Client(app) as client:
            answer = await client.request("tools/call", {"name": "blocking", "arguments": {}})
            still_running = not finished.is_set()  # the thread cannot be stopped
            release.set()
            await recorder.dropped.wait()  # the late result reached the loop, and was dropped
            return answer, still_running, client.notifications, await client.request("ping")

    logger.addHandler(recorder)
    logger.setLevel(logging.DEBUG)
    try:
        answer, still_running, notifications, pong = run(scenario)
    finally:
        logger.removeHandler(recorder)
        logger.setLevel(level)
    assert answer == timed_out("blocking")
    assert still_running
    assert (notifications, pong) == ([], {})  # the late result is never sent
    assert [(r.levelname, r.getMessage()) for r in recorder.records if r.levelno > 10] == [
        ("WARNING", "Tool 'blocking' timed out after 0.05 s; its thread runs on, result dropped")
    ]


# ------------------------------------------------------------------- app default and opt-out


def test_the_app_default_applies_unless_a_tool_sets_its_own_or_opts_out() -> None:
    app = App("timeouts", "1", options=ServerOptions(tool_timeout=LIMIT))
    hold = asyncio.Event()

    @app.tool
    async def by_default() -> str:
        await hold.wait()
        return "released"

    @app.tool(timeout=0.1)
    async def own() -> str:
        await hold.wait()
        return "released"

    started = asyncio.Event()

    @app.tool(timeout=math.inf)
    async def unlimited() -> str:
        started.set()
        await hold.wait()
        return "released"

    async def scenario() -> list[Any]:
        async with Client(app) as client:
            calls = [
                client.request("tools/call", {"name": name, "arguments": {}})
                for name in ("unlimited", "by_default", "own")
            ]
            first = asyncio.ensure_future(calls[0])
            await started.wait()
            # both deadlines start after ``unlimited`` started: had it the App's, it was past
            answers = [await calls[1], await calls[2]]
            hold.set()
            return [await first, *answers]

    unlimited_answer, default_answer, own_answer = run(scenario)
    assert text_of(unlimited_answer) == "released"
    assert default_answer == timed_out("by_default")
    assert own_answer == timed_out("own", "0.1")


@pytest.mark.parametrize("value", [0, -1, math.nan, True, "5", math.inf, -math.inf], ids=repr)
def test_the_app_default_must_be_a_positive_finite_number(value: Any) -> None:
    with pytest.raises(ValueError, match="tool_timeout must be a positive, finite number"):
        ServerOptions(tool_timeout=value)


@pytest.mark.parametrize("value", [0, -0.5, math.nan, False, "5"], ids=repr)
def test_a_tools_timeout_must_be_positive(value: Any) -> None:
    app = App("timeouts", "1")
    with pytest.raises(DefinitionError, match=r"tool 'f': timeout must be a positive number"):
        app.tool(name="f", timeout=value)(lambda: None)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(5, "5"), (5.0, "5"), (0.25, "0.25"), (0.05, "0.05"), (90, "90"), (1e-05, "1e-05")],
)
def test_the_timeout_reads_as_written(seconds: float, text: str) -> None:
    assert _seconds(seconds) == text


# ---------------------------------------------------------------------- client cancellation


@era
def test_a_cancel_from_the_client_wins_over_the_timeout(version: str) -> None:
    seen = Seen()
    app = App("timeouts", "1")

    @app.tool(timeout=LIMIT)
    async def stubborn() -> str:
        seen.started.set()
        try:
            await seen.release.wait()
        except asyncio.CancelledError:  # the client's cancel or the deadline, whichever first
            try:
                await seen.release.wait()
            except asyncio.CancelledError:  # and then the other one
                seen.cancelled_twice.set()
            raise
        return "released"

    @app.tool
    async def stubborn_done() -> str:
        return "done"

    params: dict[str, Any] = {"name": "stubborn", "arguments": {}}
    if version == STATELESS:
        params["_meta"] = META

    async def scenario() -> tuple[Any, Any]:
        async with Client(app, protocol_version=version) as client:
            call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
            answer = asyncio.ensure_future(client.send(call))
            await seen.started.wait()
            cancel = {"requestId": 7, "reason": "user"}
            await client.notify("notifications/cancelled", cancel)
            await seen.cancelled_twice.wait()  # the deadline passed too
            after = await client.call_tool("stubborn_done")
            return await answer, after.text

    # a cancelled request is never answered; the session goes on
    assert run(scenario) == (None, "done")


# ----------------------------------------------------------------- 2026-07-28 input rounds


def test_each_input_required_round_has_its_own_timeout() -> None:
    app = App("timeouts", "1")
    asking, answer_now = asyncio.Event(), asyncio.Event()
    rounds: list[str] = []

    @app.tool(timeout=LIMIT)
    async def ask(ctx: Context, then_wait: bool) -> str:
        rounds.append("run")
        reply = await ctx.elicit("Name?", {"type": "object", "properties": {}}, key="name")
        if then_wait:
            await asyncio.Event().wait()
        return reply.action

    @app.tool(timeout=LIMIT)
    async def stuck() -> str:
        await asyncio.Event().wait()
        return "never"

    async def elicitation(params: Any) -> dict[str, Any]:
        asking.set()
        await answer_now.wait()
        return {"action": "accept", "content": {}}

    async def scenario() -> list[Any]:
        async with Client(app, protocol_version=STATELESS, elicitation=elicitation) as client:
            first = asyncio.ensure_future(client.call_tool("ask", {"then_wait": False}))
            await asyncio.wait_for(asking.wait(), WAIT)
            # a whole timeout passes while the client thinks between rounds: not counted
            waited = await client.call_tool("stuck")
            answer_now.set()
            asked = await first
            late = await client.call_tool("ask", {"then_wait": True})  # the second round waits
            return [waited.raw, asked.raw, late.raw]

    waited, asked, late = run(scenario)
    assert waited == as_sent(STATELESS, timed_out("stuck"))
    assert text_of(asked) == "accept"
    assert late == as_sent(STATELESS, timed_out("ask"))
    assert rounds == ["run", "run", "run", "run"]


def test_waiting_for_the_clients_answer_counts_in_the_handshake_era() -> None:
    app = App("timeouts", "1")
    answer_now = asyncio.Event()

    @app.tool(timeout=LIMIT)
    async def ask(ctx: Context) -> str:
        reply = await ctx.elicit("Name?", {"type": "object", "properties": {}})
        return reply.action

    async def elicitation(params: Any) -> dict[str, Any]:
        await answer_now.wait()  # the user is slow to answer
        return {"action": "accept", "content": {}}

    async def scenario() -> tuple[Any, Any]:
        async with Client(app, protocol_version=HANDSHAKE, elicitation=elicitation) as client:
            result = await client.request("tools/call", {"name": "ask", "arguments": {}})
            answer_now.set()  # the answer that comes too late is ignored
            return result, await client.request("ping")

    assert run(scenario) == (timed_out("ask"), {})


# ------------------------------------------------------------------------------ transports


def test_a_timeout_over_stdio() -> None:
    seen = Seen()
    app = stuck_app(seen)

    async def scenario() -> list[Any]:
        async with serve_on_pipes(app) as (server, in_write, reader):
            to_server = os.fdopen(in_write, "wb", 0)
            init = {"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t"}}
            answers = []
            for message in (
                {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "stuck"}},
            ):
                to_server.write(json.dumps(message).encode() + b"\n")
                answers.append(json.loads(await reader.readline()))
            to_server.close()
            await server
            return answers[1:]

    assert run(scenario) == [{"jsonrpc": "2.0", "id": 1, "result": timed_out("stuck")}]
    assert seen.finally_ran


def test_a_timeout_over_http() -> None:
    seen = Seen()
    app = stuck_app(seen)
    with serve(app.asgi()) as port:
        reply = post(port, modern_call(3, "stuck", {}), modern_headers("tools/call", "stuck"))
    assert reply.status == 200
    assert reply.messages == [
        {"jsonrpc": "2.0", "id": 3, "result": as_sent(STATELESS, timed_out("stuck"))}
    ]
    assert seen.finally_ran
