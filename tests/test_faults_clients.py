"""Fault injection, the client's side: what a client gets when it is the one that misbehaves
(docs/protocol.md, "What each fault gives the client").

A call cancelled while it blocks, with an exact id and with look-alike ones; a client that
closes stdin or sends SIGTERM/SIGINT with calls in flight, one that never reads, one that
disconnects over HTTP; and messages that are not JSON, too large, too deep, or batches where
none may be. Over stdio against ``mcpkit run`` (a real process); over HTTP against ``HttpApp``
in process.
"""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import faults_app
import pytest
from asgi_support import Exchange, Request, request
from faults_support import (
    TARGET,
    TIMEOUT,
    VERSION,
    answers_in,
    call,
    cancel,
    http_started,
    open_session,
    ping,
    run,
    stdio_started,
)
from http_support import META as STATELESS_META
from stdio_support import Talk, mcpkit_run
from strict_json import parse_strict

MiB = 1024 * 1024


def released(request_id: Any, text: str) -> dict[str, Any]:
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


# --------------------------------------------------------------------- cancellations


@pytest.mark.parametrize("tool", ["block_async", "block_sync"])
def test_a_call_cancelled_while_it_blocks_is_never_answered_over_stdio(tool: str) -> None:
    """A cancelled request gets no response; an async tool sees CancelledError, a sync tool's
    result is discarded once it returns; the server serves on."""

    async def scenario() -> tuple[Any, Talk, int]:
        async with mcpkit_run(TARGET) as process:
            talk = Talk(process)
            await talk.initialize(VERSION)
            await talk.send(call(1, tool, _meta={"progressToken": "p"}))
            await stdio_started(talk, tool)
            await talk.send(cancel(1))
            assert await talk.request(ping(2)) == {"jsonrpc": "2.0", "id": 2, "result": {}}
            await talk.request(call("release", "release"))
            seen = (await talk.request(call("after", "seen")))["result"]["structuredContent"]
            while tool == "block_sync" and tool not in seen["finished"]:  # its result, discarded
                answer = await talk.request(call(f"after-{len(talk.answers)}", "seen"))
                seen = answer["result"]["structuredContent"]
            code, _ = await talk.end()
            return seen, talk, code

    seen, talk, code = run(scenario)
    assert 1 not in talk.answers
    assert seen["cancelled"] == (["block_async"] if tool == "block_async" else [])
    assert code == 0


@pytest.mark.parametrize("tool", ["block_async", "block_sync"])
def test_a_call_cancelled_while_it_blocks_is_never_answered_over_http(tool: str) -> None:
    """In a session, notifications/cancelled cancels the call: its POST carries no answer."""

    async def scenario() -> tuple[list[Any], Any]:
        asgi = faults_app.make_app().asgi()
        headers = await open_session(asgi)
        held = Exchange(asgi, "POST", call(1, tool, _meta={"progressToken": "p"}), headers)
        await http_started(asgi, headers, tool)
        assert (await request(asgi, "POST", cancel(1), headers)).status == 202
        assert (await request(asgi, "POST", ping(2), headers)).json["result"] == {}
        await request(asgi, "POST", call("release", "release"), headers)
        reply = await asyncio.wait_for(held.reply(), TIMEOUT)
        seen = (await request(asgi, "POST", call("seen", "seen"), headers)).json
        await asgi.aclose()
        messages = answers_in(reply.body, reply.headers.get("content-type", ""))
        return messages, seen["result"]["structuredContent"]

    messages, seen = run(scenario)
    assert [m for m in messages if "method" not in m] == []  # progress, perhaps; no answer
    assert seen["cancelled"] == (["block_async"] if tool == "block_async" else [])


LOOK_ALIKES = [
    pytest.param({"requestId": "7"}, id="string-7"),
    pytest.param({"requestId": 7.0}, id="float-7"),
    pytest.param({"requestId": True}, id="true-for-1"),
    pytest.param({"reason": "no requestId"}, id="no-request-id"),
]


@pytest.mark.parametrize("params", LOOK_ALIKES)
def test_a_cancel_that_names_no_running_request_is_ignored_over_stdio(
    params: dict[str, Any],
) -> None:
    """Ids match by type and value, and messages take effect in the order read: a look-alike
    id, a missing one, or a cancel read before the request it names cancels nothing."""

    async def scenario() -> Talk:
        async with mcpkit_run(TARGET) as process:
            talk = Talk(process)
            await talk.initialize(VERSION)
            await talk.send(call(1, "hold"))
            await talk.send(call(7, "block_async"))
            await stdio_started(talk, "block_async")
            await talk.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
            )
            early = [cancel(8), call(8, "hold")]  # one write: the cancel is read first
            await talk.write(b"".join(json.dumps(m).encode() + b"\n" for m in early))
            assert await talk.request(ping(2)) == {"jsonrpc": "2.0", "id": 2, "result": {}}
            await talk.request(call("release", "release"))
            for request_id in (1, 7, 8):
                await talk.answer(request_id)
            await talk.end()
            return talk

    talk = run(scenario)
    assert talk.answers[1] == released(1, "held")
    assert talk.answers[7] == released(7, "released")
    assert talk.answers[8] == released(8, "held")


# -------------------------------------------------------------------- leaving clients


@pytest.mark.parametrize("how", ["eof", "sigterm", "sigint"])
def test_a_client_that_leaves_with_calls_in_flight_over_stdio(how: str) -> None:
    """Closing stdin, SIGTERM or SIGINT cancel the calls in flight (no responses are sent for
    them) and the process exits with code 0, even with a sync tool blocked in a thread; what
    was answered before arrives whole."""

    async def scenario() -> tuple[Talk, int, str]:
        async with mcpkit_run(TARGET) as process:
            talk = Talk(process)
            await talk.initialize(VERSION)
            answered = await talk.request(call(1, "big", arguments={"size": 300_000}))
            assert len(answered["result"]["content"][0]["text"]) == 300_000
            await talk.send(call(2, "block_async"))
            await talk.send(call(3, "block_sync"))
            await stdio_started(talk, "block_async")
            await stdio_started(talk, "block_sync")
            if how != "eof":
                process.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGINT)
            code, log = await talk.end(close=how == "eof")
            return talk, code, log

    talk, code, log = run(scenario)
    assert {2, 3}.isdisjoint(talk.answers)
    assert code == 0, log
    assert "Traceback" not in log, log


def test_a_client_that_never_reads_stops_the_server_reading_over_stdio() -> None:
    """While nobody reads its answers the server stops reading requests (finding 7), so the
    client's writes block, as a pipe pushes back, instead of the server's memory growing.
    Once the client reads, every request is answered once."""
    count, size, pad = 300, 32 * 1024, "p" * 4096

    async def scenario() -> tuple[bool, Talk]:
        # asyncio holds at most 128 KiB of unread answers for this client: it stops reading
        async with mcpkit_run(TARGET, limit=64 * 1024) as process:
            talk = Talk(process)
            await talk.initialize(VERSION)

            async def flood() -> None:
                for n in range(count):
                    await talk.send(call(n, "big", arguments={"size": size, "pad": pad}))

            writing = asyncio.ensure_future(flood())
            # With backpressure the writes cannot finish while nothing is read; without it
            # they finish at once (the server keeps ~10 MiB of answers). The wait only
            # bounds how long the defect is looked for: it cannot fail a correct server.
            done, _ = await asyncio.wait([writing], timeout=2.0)
            while len(talk.answers) < count + 1:
                assert await talk.read(), "the server ended"
            await writing
            await talk.end()
            return bool(done), talk

    finished_unread, talk = run(scenario)
    assert not finished_unread, "the server read every request while nobody read an answer"
    assert sorted(k for k in talk.answers if k != "init") == list(range(count))


@pytest.mark.parametrize("era", ["2026-07-28", "session"])
def test_an_http_client_that_disconnects_mid_call(era: str) -> None:
    """Closing the stream cancels a 2026-07-28 call (nothing is sent); in a handshake-era
    session a disconnect is no cancellation, and the call runs to its end."""

    async def scenario() -> tuple[Exchange, Any]:
        asgi = faults_app.make_app().asgi()
        if era == "session":
            headers = await open_session(asgi)
            sent = call(1, "block_async")
        else:
            headers = {"mcp-protocol-version": era, "mcp-method": "tools/call"}
            sent = call(1, "block_async", _meta=STATELESS_META)
        held = Exchange(asgi, "POST", sent, {**headers, "mcp-name": "block_async"})
        session = await open_session(asgi)  # asks `seen` in a session of its own
        await http_started(asgi, session, "block_async")
        held.close()
        if era != "session":
            await asyncio.wait_for(held.task, TIMEOUT)  # ends once the disconnect is seen
        await request(asgi, "POST", call("release", "release"), session)
        await asyncio.wait_for(held.task, TIMEOUT)
        seen = (await request(asgi, "POST", call("seen", "seen"), session)).json
        await asgi.aclose()
        return held, seen["result"]["structuredContent"]

    held, seen = run(scenario)
    if era == "session":
        assert seen["cancelled"] == []
        assert parse_strict(bytes(held.received)) == released(1, "released")
    else:
        assert seen["cancelled"] == ["block_async"]
        assert (held.status, bytes(held.received)) == (0, b"")


def test_what_a_tool_its_threads_and_children_write_to_stdout_goes_to_stderr() -> None:
    async def scenario() -> tuple[int, str]:
        async with mcpkit_run(TARGET) as process:
            talk = Talk(process)
            await talk.initialize(VERSION)
            assert await talk.request(call(1, "noisy")) == released(1, "printed")
            for n in range(2, 50):  # while the thread writes on
                assert (await talk.request(ping(n)))["result"] == {}
            return await talk.end()  # every stdout line was strict JSON-RPC (Talk checks)

    code, log = run(scenario)
    assert code == 0
    for text in ("print() from a tool", "sys.stdout.write", "os.write(1) from a tool"):
        assert text in log
    assert "a child process line" in log
    assert "a thread's line 199" in log


# ------------------------------------------------------------------- faulty messages


def _error(code: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": text}}


def _line(sent: Any) -> bytes:
    return json.dumps(sent).encode()


def _nested(levels: int) -> Any:
    nested: Any = "x"
    for _ in range(levels):
        nested = [nested]
    return nested


PARSE_ERROR = _error(-32700, "Parse error")
NO_BATCHES = _error(-32600, "Invalid Request: batches exist only in protocol version 2025-03-26")
FAULTY_MESSAGES = [
    pytest.param(b'{"jsonrpc":"2.0","id":1,', VERSION, PARSE_ERROR, 400, id="broken-json"),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}',
        VERSION,
        PARSE_ERROR,
        400,
        id="invalid-utf8",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
        VERSION,
        PARSE_ERROR,
        400,
        id="nan-literal",
    ),
    pytest.param(
        _line({**ping(1), "params": {"deep": _nested(130)}}),
        VERSION,
        _error(-32600, "Invalid Request: nesting too deep (limit 128)"),
        400,
        id="nested-too-deep",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * 16 * MiB + b'"}}',
        VERSION,
        _error(-32600, "Invalid Request: message larger than 16777216 bytes"),
        413,  # over HTTP: "body larger than", from max_body_bytes
        id="too-large",
    ),
    pytest.param(
        _line([call(1, "block_async")]), VERSION, NO_BATCHES, 400, id="batch-where-none-exist"
    ),
    pytest.param(
        _line([call(n, "block_async") for n in range(1001)]),
        "2025-03-26",
        _error(-32600, "Invalid Request: a batch holds at most 1000 messages (1001 sent)"),
        400,
        id="batch-of-1001",
    ),
]


@pytest.mark.parametrize(("line", "version", "expected", "status"), FAULTY_MESSAGES)
def test_a_faulty_message_over_stdio(line: bytes, version: str, expected: Any, status: int) -> None:
    """One error with id null; the rest of the line is skipped, nothing in it runs, and the
    next line is read as usual."""

    async def scenario() -> tuple[Talk, Any]:
        async with mcpkit_run(TARGET) as process:
            talk = Talk(process)
            await talk.initialize(version)
            await talk.write(line + b"\n")
            await talk.answer(None)
            assert await talk.request(ping(2)) == {"jsonrpc": "2.0", "id": 2, "result": {}}
            seen = await talk.request(call(3, "seen"))
            await talk.end()
            return talk, seen["result"]["structuredContent"]

    talk, seen = run(scenario)
    assert talk.answers[None] == expected
    assert seen["started"] == []


@pytest.mark.parametrize(("line", "version", "expected", "status"), FAULTY_MESSAGES)
def test_a_faulty_message_over_http(line: bytes, version: str, expected: Any, status: int) -> None:
    async def scenario() -> tuple[int, Any, Any]:
        asgi = faults_app.make_app().asgi()
        headers = await open_session(asgi, version)
        sent = Request("POST", headers=headers, raw=line)
        await sent.serve(asgi)
        assert (await request(asgi, "POST", ping(2), headers)).json["result"] == {}
        seen = (await request(asgi, "POST", call(3, "seen"), headers)).json
        await asgi.aclose()
        return sent.status, parse_strict(bytes(sent.received)), seen["result"]["structuredContent"]

    got_status, answer, seen = run(scenario)
    assert got_status == status
    if status == 413:
        expected = _error(-32600, "Invalid Request: body larger than 16777216 bytes")
    assert answer == expected
    assert seen["started"] == []
