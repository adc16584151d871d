"""Every request is answered once, whatever its handler raises or returns.

A tool's ``sys.exit()`` or ``KeyboardInterrupt`` is its call's failure, not the server's end;
a result JSON cannot carry (an object it has no form for, NaN, Infinity) is answered as that
call's error; nothing but JSON reaches the wire. Through the in-memory client (the real wire
format); over HTTP in ``test_http_answers.py``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic_core import to_json

from mcpkit import App, Context, ServerOptions, Text, ToolResult, _codec, _workers
from mcpkit._workers import Workers
from mcpkit.exceptions import InvalidParams
from mcpkit.prompts import Message
from mcpkit.protocol import jsonrpc
from mcpkit.resources import Contents
from mcpkit.testing import Client, RPCError

# ----------------------------------------------------------------------------- tools


class Abort(BaseException):
    """A BaseException of the tool's own, as a library might define."""


def _exit() -> None:
    sys.exit(3)


def _raise(kind: type[BaseException]) -> Callable[[], None]:
    def throw() -> None:
        raise kind()

    return throw


def as_async(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as an async tool: same name, parameters and return type."""

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return run


def fault_app(*tools: Callable[..., Any], style: str, **options: Any) -> App:
    """``tools`` registered sync, async or inline (on the loop), next to ``add``."""
    app = App("faults", "1")

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    for fn in tools:
        app.add_tool(
            as_async(fn) if style == "async" else fn, blocking=style != "inline", **options
        )
    return app


def answers(app: App, name: str = "bad", version: str = "2025-11-25") -> list[Any]:
    """Call ``name`` then ``add`` through the in-memory client: both answers, as the client
    reads them. Whatever escapes the server fails the test (and not the test run)."""

    async def exchange() -> list[Any]:
        async with Client(app, protocol_version=version) as client:
            bad = await client.call_tool(name)
            return [bad, await client.call_tool("add", {"a": 1, "b": 2})]

    try:
        return asyncio.run(exchange())
    except BaseException as exc:
        raise AssertionError(f"{type(exc).__name__} escaped the server") from exc


def masked(text: str, tool: str = "bad") -> str:
    """The reference in a masked failure's text (checking the rest of the text)."""
    reference = text.rsplit("reference ", 1)[-1].rstrip(").")
    assert text == f"Tool {tool!r} failed with an internal error (reference {reference})."
    return reference


ADDED = {
    "content": [{"type": "text", "text": '{"result":3}'}],
    "structuredContent": {"result": 3},
    "isError": False,
}
STYLES = ["sync", "async", "inline"]


def raising(fault: Callable[[], None]) -> Callable[[], str]:
    def bad() -> str:
        fault()
        return "unreachable"

    return bad


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        pytest.param(_exit, SystemExit, id="sys.exit"),
        pytest.param(_raise(KeyboardInterrupt), KeyboardInterrupt, id="KeyboardInterrupt"),
        pytest.param(_raise(GeneratorExit), GeneratorExit, id="GeneratorExit"),
        pytest.param(_raise(Abort), Abort, id="own-BaseException"),
    ],
)
def test_a_base_exception_from_a_tool_fails_that_call_and_nothing_else(
    caplog: pytest.LogCaptureFixture, fault: Callable[[], None], kind: type, style: str
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        bad, add = answers(fault_app(raising(fault), style=style))
    assert bad["isError"] is True
    reference = masked(bad["content"][0]["text"])
    assert [r.getMessage() for r in caplog.records] == [
        f"tool 'bad' failed (reference {reference})"
    ]
    assert kind.__name__ in caplog.text  # its traceback, logged with the reference
    assert add == ADDED


@pytest.mark.parametrize("style", STYLES)
def test_a_cancelled_error_the_tool_raises_itself_is_its_failure(
    caplog: pytest.LogCaptureFixture, style: str
) -> None:
    """Nobody cancelled the call, so it is answered. Python 3.10 cannot tell this from a
    cancellation, and takes it for one: no answer."""
    app = fault_app(raising(_raise(asyncio.CancelledError)), style=style)
    if sys.version_info >= (3, 11):
        with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
            bad, add = answers(app)
        masked(bad["content"][0]["text"])
        assert add == ADDED
    else:
        with pytest.raises(AssertionError, match="CancelledError escaped"):
            answers(app)


class Unserializable:
    """A value pydantic's serializer has no JSON for."""


def returning(value: Callable[[], Any]) -> Callable[[], Any]:
    def bad() -> Any:
        return value()

    return bad


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    ("value", "reason"),
    [
        pytest.param(
            lambda: ToolResult(structured={"x": Unserializable()}),
            "Unable to serialize unknown type: <class 'test_answers.Unserializable'> "
            "at structuredContent.x",
            id="structured",
        ),
        pytest.param(
            lambda: ToolResult(content="hi", meta={"trace": [1, object()]}),
            "Unable to serialize unknown type: <class 'object'> at _meta.trace[1]",
            id="meta",
        ),
        pytest.param(
            lambda: Text("hi", annotations={"priority": object()}),
            "Unable to serialize unknown type: <class 'object'> at content[0].annotations.priority",
            id="annotations",
        ),
        pytest.param(
            lambda: "undecodable name: \udc80",
            "a string with a lone surrogate (not UTF-8) at content[0].text",
            id="lone-surrogate",
        ),
    ],
)
def test_a_result_json_cannot_carry_fails_that_call_masked(
    caplog: pytest.LogCaptureFixture, value: Callable[[], Any], reason: str, style: str
) -> None:
    app = fault_app(returning(value), style=style, structured_output=False)
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        bad, add = answers(app)
    assert bad["isError"] is True
    reference = masked(bad["content"][0]["text"])
    assert [r.getMessage() for r in caplog.records] == [
        f"tool 'bad' failed (reference {reference})"
    ]
    assert f"\nmcpkit.exceptions.Unencodable: {reason}\n" in caplog.text
    assert add == ADDED


def test_unmasked_a_result_json_cannot_carry_says_what_and_where() -> None:
    app = fault_app(returning(lambda: ToolResult(structured={"x": object()})), style="sync")
    app.options = ServerOptions(mask_errors=False)
    bad, _ = answers(app)
    text = bad["content"][0]["text"]
    assert text.startswith(
        "Tool 'bad' failed: Unencodable: Unable to serialize unknown type: <class 'object'> "
        "at structuredContent.x (reference "
    )


NAN, INF = float("nan"), float("inf")


def mean(values: tuple[float, ...] = ()) -> float:
    return sum(values) / len(values) if values else NAN


def scores() -> dict[str, float]:
    return {"a": 1.0, "b": INF}


def series() -> list[float]:
    return [0.5, -INF]


def scored() -> ToolResult:
    return ToolResult(content="done", meta={"score": NAN})


def cannot_carry(value: str, where: str) -> dict[str, Any]:
    text = f"the tool returned a value JSON cannot carry: {value} at {where}"
    return {"content": [{"type": "text", "text": text}], "isError": True}


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mean", cannot_carry("NaN", "structuredContent.result")),
        ("scores", cannot_carry("Infinity", "structuredContent.b")),
        ("series", cannot_carry("-Infinity", "structuredContent.result[1]")),
        ("scored", cannot_carry("NaN", "_meta.score")),
    ],
)
def test_a_non_finite_number_in_a_result_is_that_calls_error(
    caplog: pytest.LogCaptureFixture, name: str, expected: dict[str, Any], style: str
) -> None:
    """JSON has no NaN or Infinity: the call fails, saying where, rather than writing a line
    strict clients drop (or silently turning the number into null)."""
    app = fault_app(mean, scores, series, scored, style=style)
    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        bad, add = answers(app, name)
    assert bad == expected
    assert [r.getMessage() for r in caplog.records] == [
        f"tool {name!r}: {expected['content'][0]['text']}"
    ]
    assert add == ADDED


def test_a_non_finite_number_in_a_stateless_result_keeps_the_eras_fields() -> None:
    bad, _ = answers(fault_app(mean, style="sync"), "mean", version="2026-07-28")
    assert bad == {
        **cannot_carry("NaN", "structuredContent.result"),
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "faults", "version": "1"}},
    }


# ---------------------------------------------------- resources, prompts, completions


def internal_error(request_id: int) -> dict[str, Any]:
    error = {"code": -32603, "message": "Internal error"}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def handler_app(fault: Callable[[], Any], style: str) -> App:
    """A resource, a prompt and a completion handler, each calling ``fault``."""
    app = App("handlers", "1")

    def here() -> Any:
        return fault()

    def complete(*args: Any) -> Any:
        return fault()

    if style == "async":
        here, complete = as_async(here), as_async(complete)
    app.add_resource("faults://here", here)
    app.add_prompt(here)
    app.completion(complete)
    return app


PARAMS = {
    "resources/read": {"uri": "faults://here"},
    "prompts/get": {"name": "here"},
    "completion/complete": {
        "ref": {"type": "ref/prompt", "name": "here"},
        "argument": {"name": "x", "value": ""},
    },
}


def asked(app: App, method: str) -> list[Any]:
    """``method`` then ``ping``, as the client reads the answers; whatever escapes the server
    fails the test (and not the test run)."""

    async def exchange() -> list[Any]:
        async with Client(app) as client:
            answer = await client.send(
                {"jsonrpc": "2.0", "id": 7, "method": method, "params": PARAMS[method]}
            )
            return [answer, await client.send({"jsonrpc": "2.0", "id": 8, "method": "ping"})]

    try:
        return asyncio.run(exchange())
    except BaseException as exc:
        raise AssertionError(f"{type(exc).__name__} escaped the server") from exc


PONG = {"jsonrpc": "2.0", "id": 8, "result": {}}


@pytest.mark.parametrize("style", ["sync", "async"])
@pytest.mark.parametrize("method", list(PARAMS))
@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        pytest.param(_exit, SystemExit, id="sys.exit"),
        pytest.param(_raise(KeyboardInterrupt), KeyboardInterrupt, id="KeyboardInterrupt"),
        pytest.param(_raise(Abort), Abort, id="own-BaseException"),
    ],
)
def test_a_base_exception_from_any_handler_is_that_calls_internal_error(
    caplog: pytest.LogCaptureFixture,
    fault: Callable[[], None],
    kind: type,
    method: str,
    style: str,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        answer, pong = asked(handler_app(fault, style), method)
    assert answer == internal_error(7)
    assert [r.getMessage() for r in caplog.records] == [f"internal error answering {method!r}"]
    assert kind.__name__ in caplog.text
    assert pong == PONG


@pytest.mark.parametrize(
    ("method", "value", "reason"),
    [
        (
            "resources/read",
            Contents(text="ok", meta={"weights": [0.5, NAN]}),
            "NaN at result.contents[0]._meta.weights[1]",
        ),
        (
            "resources/read",
            Contents(text="ok", meta={"owner": Unserializable()}),
            "Unable to serialize unknown type: <class 'test_answers.Unserializable'> "
            "at result.contents[0]._meta.owner",
        ),
        (
            "prompts/get",
            Message(Text("hi", annotations={"priority": object()})),
            "Unable to serialize unknown type: <class 'object'> "
            "at result.messages[0].content.annotations.priority",
        ),
        (
            "prompts/get",
            Message(Text("hi", annotations={"priority": INF})),
            "Infinity at result.messages[0].content.annotations.priority",
        ),
    ],
)
def test_a_result_json_cannot_carry_answers_internal_error_for_its_id(
    caplog: pytest.LogCaptureFixture, method: str, value: Any, reason: str
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        answer, pong = asked(handler_app(lambda: value, "sync"), method)
    assert answer == internal_error(7)
    assert [r.getMessage() for r in caplog.records] == [f"internal error answering {method!r}"]
    assert f"\nmcpkit.exceptions.Unencodable: {reason}\n" in caplog.text
    assert pong == PONG


def test_a_result_json_cannot_carry_answers_internal_error_in_the_stateless_era_too() -> None:
    app = handler_app(lambda: Contents(text="ok", meta={"x": Unserializable()}), "sync")

    async def exchange() -> None:
        async with Client(app, protocol_version="2026-07-28") as client:
            with pytest.raises(RPCError) as raised:
                await client.request("resources/read", {"uri": "faults://here"})
            assert raised.value.error == {"code": -32603, "message": "Internal error"}
            assert await client.list_resources() == [{"uri": "faults://here", "name": "here"}]

    asyncio.run(exchange())


def test_an_error_whose_data_json_cannot_carry_is_answered_without_the_data(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def shelf() -> str:
        raise InvalidParams("Invalid params: no such shelf", {"shelf": Unserializable()})

    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        answer, pong = asked(handler_app(shelf, "sync"), "resources/read")
    error = {"code": -32602, "message": "Invalid params: no such shelf"}
    assert answer == {"jsonrpc": "2.0", "id": 7, "error": error}
    assert [r.getMessage() for r in caplog.records] == [
        "the error answering 'resources/read' lost its data: Unable to serialize unknown type: "
        "<class 'test_answers.Unserializable'> at error.data.shelf"
    ]
    assert pong == PONG


def test_an_error_whose_data_holds_infinity_keeps_its_code_without_the_data(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A number past a float's range (``1e400``) reads as infinity: echoed back as the value
    received, it would be ``Infinity`` on the wire."""
    app = fault_app(style="sync")
    raw = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add",'
    raw += b'"arguments":{"a":1e400,"b":2}}}'

    async def exchange() -> Any:
        async with Client(app, protocol_version="2025-06-18") as client:
            return await client.send_raw(raw)

    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        answer = asyncio.run(exchange())
    assert answer == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32602, "message": "Invalid params"},
    }
    assert [r.getMessage() for r in caplog.records] == [
        "the error answering 'tools/call' lost its data: Infinity at error.data.received"
    ]


# ------------------------------------------------------------------------ notifications


def test_a_notification_json_cannot_carry_is_dropped_and_the_call_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = App("notes", "1")

    @app.tool
    async def chatty(ctx: Context) -> str:
        await ctx.report_progress(NAN)
        await ctx.report_progress(0.5, total=INF)
        await ctx.info({"ratio": -INF})
        await ctx.warning({"owner": Unserializable()})
        await ctx.report_progress(1.0, total=2.0)
        await ctx.info("done")
        return "ok"

    async def exchange() -> tuple[Any, list[dict[str, Any]]]:
        async with Client(app) as client:
            await client.request("logging/setLevel", {"level": "info"})
            call = {"name": "chatty", "arguments": {}, "_meta": {"progressToken": "p"}}
            answer = await client.send(
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call}
            )
            return answer, client.notifications

    with caplog.at_level(logging.WARNING, logger="mcpkit.server"):
        answer, notes = asyncio.run(exchange())
    assert answer["result"]["content"] == [{"type": "text", "text": "ok"}]
    assert notes == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": 1.0, "total": 2.0},
        },
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": "done"},
        },
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "dropped notifications/progress: NaN at params.progress",
        "dropped notifications/progress: Infinity at params.total",
        "dropped notifications/message: -Infinity at params.data.ratio",
        "dropped notifications/message: Unable to serialize unknown type: "
        "<class 'test_answers.Unserializable'> at params.data.owner",
    ]


def test_a_request_to_the_client_json_cannot_carry_fails_the_tool_that_sends_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = App("asks", "1")

    @app.tool
    async def ask(ctx: Context) -> str:
        schema = {"type": "object", "properties": {"n": {"type": "number", "maximum": INF}}}
        await ctx.elicit("How many?", schema)
        return "asked"

    async def exchange() -> Any:
        async with Client(app, elicitation=lambda params: {"action": "decline"}) as client:
            return await client.call_tool("ask"), client.server_requests

    with caplog.at_level(logging.ERROR, logger="mcpkit.server"):
        answer, asked_client = asyncio.run(exchange())
    reference = masked(answer["content"][0]["text"], "ask")
    assert [r.getMessage() for r in caplog.records] == [
        f"tool 'ask' failed (reference {reference})"
    ]
    assert "Unencodable: Infinity at params.requestedSchema.properties.n.maximum" in caplog.text
    assert asked_client == []


# --------------------------------------------------------------------------- the workers


@pytest.mark.parametrize("wait_here", [5.0, 0.0], ids=["in-place", "through-outbox"])
@pytest.mark.parametrize("kind", [SystemExit, KeyboardInterrupt, Abort])
def test_a_base_exception_in_a_worker_reaches_its_caller_and_the_worker_lives_on(
    monkeypatch: pytest.MonkeyPatch, wait_here: float, kind: type[BaseException]
) -> None:
    monkeypatch.setattr(_workers, "WAIT_HERE", wait_here)

    async def scenario() -> None:
        workers = Workers(max_threads=1)
        # A result ready at once is taken in place even with no time to wait: the outbox path
        # is the one a loop with more at hand (busy) takes.
        workers.busy(asyncio.get_running_loop(), wait_here == 0)
        first = await workers.run(threading.get_ident)
        with pytest.raises(kind):
            await workers.run(_raise(kind))
        assert await workers.run(threading.get_ident) == first

    asyncio.run(scenario())


# ------------------------------------------------------------------------------ encoding


def test_an_answer_is_encoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where it is built (so that a failure can still answer its id), and not again by the
    transport; a call whose result cannot be encoded is encoded twice: the result, then the
    error that answers instead."""
    encoded: list[Any] = []  # the ids of the answers encoded

    def counting(value: Any, **options: Any) -> bytes:
        if (
            isinstance(value, dict)
            and value.get("jsonrpc")
            and ("result" in value or "error" in value)
        ):
            encoded.append(value["id"])
        return to_json(value, **options)

    opaque = returning(lambda: ToolResult(structured={"x": object()}))

    async def exchange() -> None:
        async with Client(fault_app(opaque, style="sync", structured_output=False)) as client:
            encoded.clear()
            await client.call_tool("add", {"a": 1, "b": 2})
            assert encoded == [2]
            await client.call_tool("bad")
            assert encoded == [2, 3, 3]

    monkeypatch.setattr(jsonrpc, "_plain_first", False)  # small answers: json's bytes, as fast
    monkeypatch.setattr(_codec, "to_json", counting)
    asyncio.run(exchange())
