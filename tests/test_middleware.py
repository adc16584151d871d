"""Middleware (``@app.middleware``, ``App(middleware=[...])``): order, what it sees, what it may
answer, and how its failures travel, in both eras and on every transport."""

from __future__ import annotations

import asyncio
import json
import os
import re
from typing import Any

import pytest
from asgi_support import in_process
from features_support import ERAS, HANDSHAKE, STATELESS, era, rpc_error, run
from http_support import META, initialize, modern_headers, post
from stdio_support import serve_on_pipes

from mcpkit import App, Context, DefinitionError, ProtocolError, ToolError
from mcpkit.middleware import Call, CallNext
from mcpkit.testing import Client

MASKED = re.compile(r"Tool 'add' failed with an internal error \(reference [0-9a-f]{8}\)\.")


def make_app(*middleware: Any) -> App:
    app = App("mw", "1", middleware=middleware)

    @app.tool
    def add(a: int, b: int) -> int:
        """Adds."""
        return a + b

    @app.tool
    async def ask(ctx: Context) -> str:
        """Asks the user."""
        return (await ctx.elicit("ok?", {"type": "object", "properties": {}})).action

    @app.resource("memo://one")
    def one() -> str:
        return "one"

    @app.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    @app.completion
    def complete(ref: Any, argument: Any, value: str, context: Any) -> list[str]:
        return ["ada"]

    return app


class Recorder:
    """A middleware that writes down what it sees, then calls on."""

    def __init__(self, label: str = "", log: list[str] | None = None) -> None:
        self.label = label
        self.log: list[str] = [] if log is None else log
        self.calls: list[Call] = []

    async def __call__(self, call: Call, call_next: CallNext) -> dict[str, Any]:
        self.calls.append(call)
        self.log.append(f"{self.label}>{call.method}")
        try:
            return await call_next(call)
        finally:
            self.log.append(f"<{self.label}")


def client(app: App, version: str = HANDSHAKE, **options: Any) -> Client:
    return Client(app, protocol_version=version, **options)


# ----------------------------------------------------------------------------- order


def test_the_first_registered_is_the_outermost() -> None:
    log: list[str] = []
    first, second, third = Recorder("1", log), Recorder("2", log), Recorder("3", log)
    app = make_app(first, second)
    app.middleware(third)

    async def scenario() -> None:
        async with client(app) as c:
            log.clear()
            await c.call_tool("add", {"a": 1, "b": 2})

    run(scenario)
    assert log == ["1>tools/call", "2>tools/call", "3>tools/call", "<3", "<2", "<1"]


def test_the_decorator_returns_the_function_and_refuses_sync_ones() -> None:
    app = App("mw", "1")

    async def passing(call: Call, call_next: CallNext) -> dict[str, Any]:
        return await call_next(call)

    assert app.middleware(passing) is passing
    assert app.middleware_chain == (passing,)

    def blocking(call: Call, call_next: CallNext) -> dict[str, Any]:
        raise AssertionError("never called")

    with pytest.raises(DefinitionError, match="must be an async function"):
        app.middleware(blocking)  # type: ignore[type-var]
    with pytest.raises(DefinitionError, match="must be an async function"):
        App("mw", "1", middleware=[blocking])  # type: ignore[list-item]


# ----------------------------------------------------------------- every request, once


def test_every_handshake_request_passes_once_and_notifications_do_not() -> None:
    recorder = Recorder()
    app = make_app(recorder)

    async def scenario() -> None:
        async with client(app) as c:
            await c.request("ping")
            await c.request("logging/setLevel", {"level": "info"})
            await c.list_tools()
            await c.call_tool("add", {"a": 1, "b": 2})
            await c.list_resources()
            await c.request("resources/templates/list")
            await c.read_resource("memo://one")
            await c.request("prompts/list")
            await c.request("prompts/get", {"name": "greet", "arguments": {"name": "x"}})
            ref = {"type": "ref/prompt", "name": "greet"}
            argument = {"name": "name", "value": "a"}
            await c.request("completion/complete", {"ref": ref, "argument": argument})
            await c.notify("notifications/cancelled", {"requestId": 99})
            await c.send({"jsonrpc": "2.0", "id": 7, "method": "no/such"})  # not found: no

    run(scenario)
    assert [call.method for call in recorder.calls] == [
        "initialize",
        "ping",
        "logging/setLevel",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    ]


def test_every_stateless_request_passes_once_and_each_input_round_is_a_request() -> None:
    recorder = Recorder()
    app = make_app(recorder)

    async def accept(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async def scenario() -> None:
        async with client(app, STATELESS, elicitation=accept) as c:
            await c.request("server/discover")
            await c.list_tools()
            result = await c.call_tool("ask", {})
            assert result.data == "accept"

    run(scenario)
    methods = [call.method for call in recorder.calls]
    assert methods == ["server/discover", "tools/list", "tools/call", "tools/call"]
    first, retry = recorder.calls[2:]
    assert "inputResponses" not in first.params
    assert retry.params["inputResponses"] == {"elicitation-1": {"action": "accept", "content": {}}}


def test_each_member_of_a_batch_passes_on_its_own() -> None:
    recorder = Recorder()
    app = make_app(recorder)

    async def scenario() -> Any:
        async with client(app, "2025-03-26") as c:
            recorder.calls.clear()
            return await c.send(
                [
                    {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                ]
            )

    answers = run(scenario)
    assert [answer["id"] for answer in answers] == [1, 2]
    assert sorted(call.method for call in recorder.calls) == ["ping", "tools/list"]


# ---------------------------------------------------------------- what a call carries


@era
def test_a_call_carries_the_request(version: str) -> None:
    recorder = Recorder()
    app = make_app(recorder)
    arguments = {"a": 1, "b": 2}

    async def scenario() -> None:
        async with client(app, version, principal={"sub": "ada"}) as c:
            await c.call_tool("add", arguments)

    run(scenario)
    call = recorder.calls[-1]
    assert (call.method, call.protocol_version, call.transport) == ("tools/call", version, "memory")
    assert call.params["arguments"] == arguments
    assert isinstance(call.context, Context)
    assert call.context.principal == {"sub": "ada"}
    assert call.context.request_id is not None
    with pytest.raises(AttributeError, match="Call is frozen"):
        call.method = "x"  # type: ignore[misc]


def test_initialize_is_seen_at_the_version_being_agreed() -> None:
    recorder = Recorder()

    async def scenario() -> None:
        async with client(make_app(recorder), "2025-06-18"):
            pass

    run(scenario)
    assert (recorder.calls[0].method, recorder.calls[0].protocol_version) == (
        "initialize",
        "2025-06-18",
    )


# ------------------------------------------------------------- answering and rewriting


@era
def test_a_middleware_may_answer_instead(version: str) -> None:
    async def canned(call: Call, call_next: CallNext) -> dict[str, Any]:
        if call.method == "tools/list":
            return {"tools": []}
        return await call_next(call)

    async def scenario() -> Any:
        async with client(make_app(canned), version) as c:
            return await c.request("tools/list")

    result = run(scenario)
    if version == STATELESS:  # the era's envelope is added after the middleware
        assert result["resultType"] == "complete"
        assert result["cacheScope"] == "public"
        assert result["ttlMs"] == 0
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mw"
        result = {k: v for k, v in result.items() if k == "tools"}
    assert result == {"tools": []}


@era
def test_a_middleware_may_rewrite_the_params(version: str) -> None:
    async def doubling(call: Call, call_next: CallNext) -> dict[str, Any]:
        if call.method == "tools/call":
            arguments = {k: v * 2 for k, v in call.params["arguments"].items()}
            call = call.replace(params={**call.params, "arguments": arguments})
        return await call_next(call)

    async def scenario() -> Any:
        async with client(make_app(doubling), version) as c:
            return await c.call_tool("add", {"a": 1, "b": 2})

    assert run(scenario).data == 6


def test_replace_takes_params_only_and_a_dict() -> None:
    call = Call("ping", {}, Context(None), HANDSHAKE, "memory")  # type: ignore[arg-type]
    assert call.replace(params={"x": 1}).params == {"x": 1}
    with pytest.raises(TypeError, match="params must be a dict, not list"):
        call.replace(params=[])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        call.replace(method="x")  # type: ignore[call-arg]


# ----------------------------------------------------------------------------- errors


def raising(exc: BaseException, only: str | None = None) -> Any:
    async def middleware(call: Call, call_next: CallNext) -> dict[str, Any]:
        if only is None or call.method == only:
            raise exc
        return await call_next(call)

    return middleware


@era
@pytest.mark.parametrize("method", ["tools/call", "tools/list"])
def test_a_protocol_error_is_that_json_rpc_error(version: str, method: str) -> None:
    error = ProtocolError("Too many requests", {"retryAfterS": 3}, code=-32000)
    app = make_app(raising(error, method))

    async def scenario() -> Any:
        async with client(app, version) as c:
            message = {"jsonrpc": "2.0", "id": 5, "method": method, "params": _params(method)}
            return await c.send(_with_meta(message, version))

    assert run(scenario) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32000, "message": "Too many requests", "data": {"retryAfterS": 3}},
    }


@era
def test_a_tool_error_around_a_call_is_its_is_error_result(version: str) -> None:
    app = make_app(raising(ToolError("quota used up"), "tools/call"))

    async def scenario() -> Any:
        async with client(app, version) as c:
            message = {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}
            return await c.send(_with_meta({**message, "params": _params("tools/call")}, version))

    response = run(scenario)
    result = response["result"]
    result.pop("_meta", None)
    result.pop("resultType", None)
    assert response["id"] == 5
    assert result == {"content": [{"type": "text", "text": "quota used up"}], "isError": True}


@era
@pytest.mark.parametrize(
    "exc", [ToolError("not here"), RuntimeError("boom"), SystemExit(3)], ids=repr
)
def test_anything_else_elsewhere_is_an_internal_error(
    version: str, exc: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(raising(exc, "tools/list"))

    async def scenario() -> Any:
        async with client(app, version) as c:
            message = {"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {}}
            return await c.send(_with_meta(message, version))

    assert run(scenario) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32603, "message": "Internal error"},
    }
    assert "internal error answering 'tools/list'" in caplog.text


@era
@pytest.mark.parametrize("exc", [RuntimeError("secret"), SystemExit(3)], ids=repr)
def test_a_failure_around_a_call_is_masked_like_the_tools_own(
    version: str, exc: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(raising(exc, "tools/call"))

    async def scenario() -> Any:
        async with client(app, version) as c:
            return await c.call_tool("add", {"a": 1, "b": 2})

    result = run(scenario)
    assert result.is_error
    assert MASKED.fullmatch(result.text), result.text
    reference = result.text.split("reference ")[1][:8]
    assert reference in caplog.text  # the log names the same failure
    assert "secret" not in result.text


@era
def test_a_result_that_is_not_a_dict_is_the_middlewares_failure(version: str) -> None:
    async def wrong(call: Call, call_next: CallNext) -> Any:
        result = await call_next(call)
        return ["not", "a", "result"] if call.method.startswith("tools/") else result

    async def scenario() -> tuple[Any, Any]:
        async with client(make_app(wrong), version) as c:
            called = await c.call_tool("add", {"a": 1, "b": 2})
            listed = await rpc_error(c.request("tools/list"))
            return called, listed

    called, listed = run(scenario)
    assert MASKED.fullmatch(called.text)
    assert (listed.code, listed.message) == (-32603, "Internal error")


def test_a_refused_envelope_never_reaches_middleware() -> None:
    recorder = Recorder()

    async def scenario() -> list[Any]:
        async with client(make_app(recorder), STATELESS) as c:
            bad_meta = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {}}}
            wrong = {"_meta": {**META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}}
            unknown = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": wrong}
            return [await c.send(bad_meta), await c.send(unknown), await c.send_raw(b"{")]

    answers = run(scenario)
    assert [answer["error"]["code"] for answer in answers] == [-32602, -32022, -32700]
    assert recorder.calls == []


@era
def test_a_middleware_waiting_on_a_cancelled_call_sends_no_answer(version: str) -> None:
    entered = asyncio.Event()
    left: list[str] = []

    async def watching(call: Call, call_next: CallNext) -> dict[str, Any]:
        if call.method != "tools/call":
            return await call_next(call)
        entered.set()
        try:
            return await call_next(call)
        finally:
            left.append(call.method)

    app = make_app(watching)

    @app.tool
    async def forever() -> None:
        """Never ends."""
        await asyncio.Event().wait()

    async def scenario() -> Any:
        async with client(app, version) as c:
            message = {"jsonrpc": "2.0", "id": 9, "method": "tools/call"}
            params = {"name": "forever", "arguments": {}}
            answer = asyncio.ensure_future(
                c.send(_with_meta({**message, "params": params}, version))
            )
            await entered.wait()
            await c.notify("notifications/cancelled", _with_meta_params({"requestId": 9}, version))
            return await answer

    assert run(scenario) is None
    assert left == ["tools/call"]


# ------------------------------------------------------------------ every transport


def test_stdio_calls_say_stdio_and_carry_no_headers() -> None:
    recorder = Recorder()
    seen: list[tuple[Any, ...]] = []

    async def facts(call: Call, call_next: CallNext) -> dict[str, Any]:
        ctx = call.context
        seen.append((ctx.transport, ctx.headers, ctx.session_id, dict(ctx.meta), ctx.principal))
        return await call_next(call)

    app = make_app(recorder, facts)

    async def scenario() -> list[Any]:
        async with serve_on_pipes(app) as (server, in_write, reader):
            to_server = os.fdopen(in_write, "wb", 0)
            meta = {**META, "progressToken": "p"}
            messages = [
                {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}},
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "add", "arguments": {"a": 2, "b": 3}, "_meta": META},
                },
            ]
            answers = []
            for message in messages:
                to_server.write(json.dumps(message).encode() + b"\n")
                answers.append(json.loads(await reader.readline()))
            to_server.close()
            await server
            return answers

    answers = run(scenario)
    assert answers[1]["result"]["structuredContent"] == {"result": 5}
    assert [call.transport for call in recorder.calls] == ["stdio", "stdio"]
    assert seen[0] == ("stdio", None, None, {**META, "progressToken": "p"}, None)


def test_http_calls_carry_headers_and_the_session_id() -> None:
    seen: list[tuple[Any, ...]] = []

    async def facts(call: Call, call_next: CallNext) -> dict[str, Any]:
        ctx = call.context
        headers = ctx.headers
        assert headers is not None
        seen.append(
            (
                call.method,
                ctx.transport,
                headers["X-Tenant"],
                headers.get_all("x-multi"),
                "X-TENANT" in headers,
                ctx.session_id,
            )
        )
        return await call_next(call)

    asgi = make_app(facts).asgi(json_response=True)
    with in_process(asgi) as server:
        session = initialize(server, **{"x-tenant": "acme"})
        body = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
        reply = post(server, body, {"mcp-session-id": session, "x-tenant": "acme"})
        assert reply.status == 200
        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": META}}
        reply = post(server, call, {**modern_headers("tools/list"), "x-tenant": "beta"})
        assert reply.status == 200, reply.body
    assert seen == [
        ("initialize", "http", "acme", [], True, None),
        ("tools/list", "http", "acme", [], True, session),
        ("tools/list", "http", "beta", [], True, None),
    ]


@pytest.mark.parametrize("version", ERAS)
def test_the_test_client_plays_an_authenticated_http_caller(version: str) -> None:
    app = App("facts", "1")

    @app.tool
    def whoami(ctx: Context) -> dict[str, Any]:
        """Says who asks."""
        headers = ctx.headers
        assert headers is not None
        return {
            "principal": ctx.principal["sub"],
            "tenant": headers["X-Tenant"],
            "transport": ctx.transport,
            "session": ctx.session_id,
            "meta": dict(ctx.meta),
        }

    async def scenario() -> Any:
        principal = {"sub": "ada", "scope": "notes:read"}
        async with Client(
            app, protocol_version=version, principal=principal, headers={"X-Tenant": "acme"}
        ) as c:
            return (await c.call_tool("whoami", {})).data

    data = run(scenario)
    meta = {} if version == HANDSHAKE else data["meta"]
    assert data == {
        "principal": "ada",
        "tenant": "acme",
        "transport": "memory",
        "session": None,
        "meta": meta,
    }
    if version == STATELESS:
        assert meta["io.modelcontextprotocol/protocolVersion"] == STATELESS


def test_context_meta_is_read_only() -> None:
    app = App("facts", "1")

    @app.tool
    def poke(ctx: Context) -> str:
        """Tries to change _meta."""
        try:
            ctx.meta["x"] = 1  # type: ignore[index]
        except TypeError:
            return "read-only"
        return "changed"

    async def scenario() -> Any:
        async with client(app, STATELESS) as c:
            return (await c.call_tool("poke", {})).data

    assert run(scenario) == "read-only"


# -------------------------------------------------------------------------- helpers


def _params(method: str) -> dict[str, Any]:
    return {"name": "add", "arguments": {"a": 1, "b": 2}} if method == "tools/call" else {}


def _with_meta(message: dict[str, Any], version: str) -> dict[str, Any]:
    if version != STATELESS:
        return message
    return {**message, "params": _with_meta_params(message.get("params", {}), version)}


def _with_meta_params(params: dict[str, Any], version: str) -> dict[str, Any]:
    if version != STATELESS:
        return params
    return {**params, "_meta": META}


def test_a_listen_stream_passes_once_and_call_next_lasts_as_long_as_the_stream() -> None:
    log: list[str] = []
    recorder = Recorder("mw", log)
    app = make_app(recorder)
    listen = {
        "jsonrpc": "2.0",
        "id": "listen-1",
        "method": "subscriptions/listen",
        "params": {"_meta": META, "notifications": {"toolsListChanged": True}},
    }

    async def scenario() -> list[str]:
        async with Client(app, protocol_version=STATELESS) as c:
            stream = asyncio.ensure_future(c.send(listen))
            while not c.notifications:  # the acknowledgement: the stream is open
                await asyncio.sleep(0)
            app.add_tool(lambda: "x", name="extra", description="Added.")
            while len(c.notifications) < 2:
                await asyncio.sleep(0)
            heard = [note["method"] for note in c.notifications]
            assert log == ["mw>subscriptions/listen"]  # still open: call_next has not returned
        await asyncio.gather(stream, return_exceptions=True)  # the client left: stream ended
        return heard

    assert run(scenario) == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    assert log == ["mw>subscriptions/listen", "<mw"]


# ------------------------------------------------- the same answers on every transport


async def gatekeeper(call: Call, call_next: CallNext) -> dict[str, Any]:
    """Answers ``tools/list`` itself, refuses ``prompts/list``, fails ``add`` with a ToolError,
    and lets the rest through (outermost), after an inner one doubles ``add``'s arguments."""
    if call.method == "tools/list":
        return {"tools": []}
    if call.method == "prompts/list":
        raise ProtocolError("Not today", {"why": "maintenance"}, code=-32001)
    if call.method == "tools/call" and call.params.get("arguments") == {"a": 0, "b": 0}:
        raise ToolError("zero is not allowed")
    return await call_next(call)


async def doubler(call: Call, call_next: CallNext) -> dict[str, Any]:
    if call.method == "tools/call":
        arguments = {k: v * 2 for k, v in call.params["arguments"].items()}
        call = call.replace(params={**call.params, "arguments": arguments})
    return await call_next(call)


GATED_MESSAGES: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}},
    {"jsonrpc": "2.0", "id": 2, "method": "prompts/list", "params": {"_meta": META}},
    {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 0, "b": 0}, "_meta": META},
    },
    {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": META},
    },
]


def gated_summary(answers: list[dict[str, Any]]) -> list[Any]:
    """What each answer says, without the era's envelope fields."""
    summary: list[Any] = []
    for answer in answers:
        if "error" in answer:
            summary.append(answer["error"])
            continue
        result = answer["result"]
        summary.append({k: v for k, v in result.items() if k in ("tools", "content", "isError")})
    return summary


GATED_EXPECTED = [
    {"tools": []},
    {"code": -32001, "message": "Not today", "data": {"why": "maintenance"}},
    {"content": [{"type": "text", "text": "zero is not allowed"}], "isError": True},
    {"content": [{"type": "text", "text": '{"result":6}'}], "isError": False},
]


def test_middleware_answers_alike_over_the_test_client() -> None:
    async def scenario() -> list[Any]:
        async with client(make_app(gatekeeper, doubler), STATELESS) as c:
            return [await c.send(message) for message in GATED_MESSAGES]

    assert gated_summary(run(scenario)) == GATED_EXPECTED


def test_middleware_answers_alike_over_stdio() -> None:
    async def scenario() -> list[Any]:
        async with serve_on_pipes(make_app(gatekeeper, doubler)) as (server, in_write, reader):
            to_server = os.fdopen(in_write, "wb", 0)
            answers = []
            for message in GATED_MESSAGES:
                to_server.write(json.dumps(message).encode() + b"\n")
                answers.append(json.loads(await reader.readline()))
            to_server.close()
            await server
            return answers

    assert gated_summary(run(scenario)) == GATED_EXPECTED


def test_middleware_answers_alike_over_http() -> None:
    with in_process(make_app(gatekeeper, doubler).asgi(json_response=True)) as server:
        answers = []
        for message in GATED_MESSAGES:
            params = message["params"]
            headers = modern_headers(message["method"], params.get("name"))
            reply = post(server, message, headers)
            assert reply.status == 200, reply.body
            answers.append(reply.json)
    assert gated_summary(answers) == GATED_EXPECTED


def test_logging_the_headers_never_writes_credentials() -> None:
    """``repr``/``str`` of ``ctx.headers`` (what a log line of them shows) masks the values of
    credential headers; reading one by name still gives it."""
    seen: list[tuple[str, str]] = []

    async def logs_headers(call: Call, call_next: CallNext) -> dict[str, Any]:
        headers = call.context.headers
        assert headers is not None
        seen.append((repr(headers), headers["authorization"]))
        return await call_next(call)

    async def scenario() -> None:
        headers = {"Authorization": "Bearer s3cret", "Cookie": "id=s3cret", "X-Tenant": "acme"}
        async with client(make_app(logs_headers), STATELESS, headers=headers) as c:
            await c.list_tools()

    run(scenario)
    shown, read = seen[-1]
    assert "s3cret" not in shown
    assert shown == (
        "RequestHeaders({'authorization': '***', 'cookie': '***', 'x-tenant': 'acme'})"
    )
    assert read == "Bearer s3cret"
