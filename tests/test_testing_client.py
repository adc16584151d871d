"""``mcpkit.testing``: the in-memory client (sync and async, both eras) and the pytest fixture."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import typing_extensions
from pydantic import BaseModel

from mcpkit import App, Context, Image, ToolError, ToolResult
from mcpkit.schema import return_schema
from mcpkit.testing import CallToolResult, Client, RPCError, SyncClient
from mcpkit.testing.result import is_wrapper_schema

pytest_plugins = ["pytester"]

app = App("calc", "2.0", instructions="Adds numbers.")


@app.tool
async def add(a: int, b: int, ctx: Context) -> int:
    """Add two numbers."""
    await ctx.report_progress(1, 1)
    await ctx.info(f"adding {a} and {b}")
    return a + b


def test_sync_use_in_the_handshake_era() -> None:
    with Client(app) as client:
        assert isinstance(client, SyncClient)
        assert client.initialize_result == {
            "protocolVersion": "2025-11-25",
            "capabilities": {"logging": {}, "tools": {"listChanged": True}},
            "serverInfo": {"name": "calc", "version": "2.0"},
            "instructions": "Adds numbers.",
        }
        assert [tool["name"] for tool in client.list_tools()] == ["add"]
        result = client.call_tool("add", {"a": 1, "b": 2})
        assert result["structuredContent"] == {"result": 3}
        assert result["isError"] is False
        assert client.request("ping") == {}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_the_client_negotiates_the_version_it_is_given(version: str) -> None:
    with Client(app, protocol_version=version) as client:
        assert client.initialize_result is not None
        assert client.initialize_result["protocolVersion"] == version


def test_async_use_in_the_stateless_era() -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        async with Client(app, protocol_version="2026-07-28") as client:
            assert client.initialize_result is None  # no handshake in this era
            discovered = await client.request("server/discover")
            tools = await client.list_tools()
            called = await client.call_tool("add", {"a": 2, "b": 5})
            return discovered, tools, called

    discovered, tools, called = asyncio.run(scenario())
    assert discovered["supportedVersions"][-1] == "2026-07-28"
    assert discovered["resultType"] == "complete"
    assert [tool["name"] for tool in tools] == ["add"]
    assert called["structuredContent"] == {"result": 7}
    assert called["resultType"] == "complete"
    assert called["_meta"] == {
        "io.modelcontextprotocol/serverInfo": {"name": "calc", "version": "2.0"}
    }


def test_errors_raise_rpc_error_with_code_message_and_data() -> None:
    with Client(app, protocol_version="2025-06-18") as client:
        with pytest.raises(RPCError) as unknown:
            client.call_tool("nope")
        with pytest.raises(RPCError) as invalid:
            client.call_tool("add", {"a": "x", "b": 1})
    assert (unknown.value.code, unknown.value.message, unknown.value.data) == (
        -32602,
        "Unknown tool: nope",
        None,
    )
    assert invalid.value.code == -32602
    assert invalid.value.data["field"] == "a"
    assert str(invalid.value) == "-32602 Invalid params"


def test_notifications_are_collected_in_wire_form() -> None:
    with Client(app, protocol_version="2025-11-25") as client:
        client.request("logging/setLevel", {"level": "info"})
        client.call_tool("add", {"a": 1, "b": 1}, _meta={"progressToken": "t"})
        assert client.notifications == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "t", "progress": 1, "total": 1},
            },
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": "adding 1 and 1"},
            },
        ]


def test_raw_messages_and_no_initialize() -> None:
    with Client(app, initialize=False) as client:
        assert client.initialize_result is None
        assert (
            client.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')["error"]["code"]
            == -32602
        )
        assert client.send_raw("{oops") == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error"},
        }
        client.notify("notifications/initialized")


def test_using_the_client_outside_its_context_is_an_error() -> None:
    client = Client(app)
    with pytest.raises(RuntimeError, match="inside 'async with'"):
        asyncio.run(client.send({"jsonrpc": "2.0", "id": 1, "method": "ping"}))


def test_the_fixture_connects_and_closes(mcp_client: Any) -> None:
    client = mcp_client(app, protocol_version="2025-06-18")
    assert client.initialize_result["protocolVersion"] == "2025-06-18"
    assert client.call_tool("add", {"a": 3, "b": 4})["structuredContent"] == {"result": 7}
    stateless = mcp_client(app, protocol_version="2026-07-28")
    assert stateless.call_tool("add", {"a": 1, "b": 1})["resultType"] == "complete"


def test_the_plugin_offers_the_fixture_to_user_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from mcpkit import App

        app = App("user", "1.0")

        @app.tool
        def hello(name: str) -> str:
            \"\"\"Greet.\"\"\"
            return f"hello {name}"

        def test_hello(mcp_client):
            client = mcp_client(app)
            result = client.call_tool("hello", {"name": "ada"})
            assert result["content"] == [{"type": "text", "text": "hello ada"}]

        def test_fails(mcp_client):
            client = mcp_client(app)
            assert client.call_tool("hello", {"name": "ada"})["isError"] is True
        """
    )
    outcome = pytester.runpytest("-p", "no:cacheprovider")
    outcome.assert_outcomes(passed=1, failed=1)


# ------------------------------------------------------------------ CallToolResult

shapes = App("shapes", "1.0")


class Point(typing_extensions.TypedDict):
    x: int
    y: int


class Answer(BaseModel):
    result: int


class Tree(BaseModel):
    children: list[Tree]


@shapes.tool
def number() -> int:
    return 3


@shapes.tool
def numbers() -> list[int]:
    return [1, 2]


@shapes.tool
def nothing_maybe() -> int | None:
    return None


@shapes.tool
def point() -> Point:
    return {"x": 1, "y": 2}


@shapes.tool
def counts() -> dict[str, int]:
    return {"result": 1}


@shapes.tool
def answer() -> Answer:
    return Answer(result=4)


@shapes.tool
def greeting() -> str:
    return "42"


@shapes.tool
def untyped():  # type: ignore[no-untyped-def]
    return {"a": 1}


@shapes.tool
def silent() -> None:
    return None


@shapes.tool
def picture():  # type: ignore[no-untyped-def]
    return ["a cat", Image(data=b"png", mime_type="image/png")]


@shapes.tool
def failing() -> int:
    raise ToolError("boom")


@shapes.tool
def explicit() -> ToolResult:
    return ToolResult(content=["one", "two"], structured={"n": 2})


IMAGE = {"type": "image", "data": "cG5n", "mimeType": "image/png"}


@pytest.mark.parametrize(
    ("tool", "data", "structured", "text"),
    [
        pytest.param("number", 3, {"result": 3}, '{"result":3}', id="wrapped-int"),
        pytest.param("numbers", [1, 2], {"result": [1, 2]}, '{"result":[1,2]}', id="wrapped-list"),
        pytest.param("nothing_maybe", None, {"result": None}, '{"result":null}', id="wrapped-none"),
        pytest.param("point", {"x": 1, "y": 2}, {"x": 1, "y": 2}, '{"x":1,"y":2}', id="object"),
        pytest.param("counts", {"result": 1}, {"result": 1}, '{"result":1}', id="dict-not-wrapped"),
        # The wire cannot tell a model whose one field is `result` from the wrapper.
        pytest.param("answer", 4, {"result": 4}, '{"result":4}', id="ambiguous-model"),
        pytest.param("greeting", "42", None, "42", id="text-not-parsed"),
        pytest.param("untyped", '{"a":1}', None, '{"a":1}', id="unannotated-json-text"),
        pytest.param("silent", None, None, "", id="no-content"),
        pytest.param(
            "picture", [{"type": "text", "text": "a cat"}, IMAGE], None, "a cat", id="blocks"
        ),
        pytest.param("failing", None, None, "boom", id="error"),
        pytest.param("explicit", {"n": 2}, {"n": 2}, "one\ntwo", id="tool-result"),
    ],
)
def test_call_tool_results_have_typed_views(
    tool: str, data: Any, structured: Any, text: str
) -> None:
    with Client(shapes) as client:
        result = client.call_tool(tool)
    assert isinstance(result, CallToolResult)
    assert (result.data, result.structured, result.text) == (data, structured, text)
    assert result.is_error is (tool == "failing")
    assert result.content == result["content"]
    assert type(result.raw) is dict
    assert result.raw == result


def test_the_result_is_still_the_wire_dict() -> None:
    with Client(shapes) as client:
        result = client.call_tool("number")
    wire = {
        "content": [{"type": "text", "text": '{"result":3}'}],
        "structuredContent": {"result": 3},
        "isError": False,
    }
    assert result == wire
    assert wire == result
    assert result["structuredContent"]["result"] == 3
    assert isinstance(result, dict)
    assert json.loads(json.dumps(result)) == wire


def test_the_async_client_answers_the_same_shape_in_the_stateless_era() -> None:
    async def scenario() -> CallToolResult:
        async with Client(shapes, protocol_version="2026-07-28") as client:
            return await client.call_tool("numbers")

    result = asyncio.run(scenario())
    assert (result.data, result.is_error, result["resultType"]) == ([1, 2], False, "complete")


def test_the_client_reads_the_published_schema_of_the_tool_it_calls() -> None:
    dynamic = App("dynamic", "1.0")

    def value() -> int:
        return 1

    def mapping() -> dict[str, int]:
        return {"result": 1}

    with Client(dynamic) as client:
        dynamic.add_tool(value, name="later")
        assert client.call_tool("later").data == 1
        dynamic.remove_tool("later")
        dynamic.add_tool(mapping, name="later")
        assert client.call_tool("later").data == {"result": 1}


@pytest.mark.parametrize(
    "annotation",
    [
        int,
        str,
        list[int],
        int | None,
        dict[str, int],
        Point,
        Point | None,
        tuple[int, str],
        list[Tree],  # the wrapper keeps the $defs of a recursive type
    ],
    ids=repr,
)
def test_the_wrapper_is_recognised_as_return_schema_builds_it(annotation: Any) -> None:
    built = return_schema(annotation, where="tool 't'", force=True)
    assert is_wrapper_schema(built.schema) is built.wrapped


@pytest.mark.parametrize(
    "schema",
    [
        None,
        {"type": "object", "properties": {"result": {}}, "required": ["result"], "title": "R"},
        {"type": "object", "properties": {"result": {}}},
        {"type": "object", "properties": {"result": {}, "more": {}}, "required": ["result"]},
        {"type": "array", "properties": {"result": {}}, "required": ["result"]},
    ],
    ids=["none", "extra-key", "not-required", "two-properties", "not-object"],
)
def test_other_schemas_are_not_the_wrapper(schema: Any) -> None:
    assert is_wrapper_schema(schema) is False


def test_every_async_method_has_a_blocking_twin_with_its_docs() -> None:
    asynchronous = {
        name
        for name, member in vars(Client).items()
        if asyncio.iscoroutinefunction(member) and not name.startswith("_")
    }
    blocking = {name for name in asynchronous if callable(getattr(SyncClient, name, None))}
    assert blocking == asynchronous
    for name in asynchronous:
        assert getattr(SyncClient, name).__doc__ == getattr(Client, name).__doc__
