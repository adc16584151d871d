"""Tools and the App registry: decoration, definitions, injection, explicit schemas, the wire."""

from __future__ import annotations

import asyncio
import importlib.util
import re
import threading
from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpkit import App, Context, DefinitionError, ToolAnnotations
from mcpkit._signatures import is_name
from mcpkit._workers import Workers
from mcpkit.context import ContextBackend
from mcpkit.exceptions import InvalidArguments
from mcpkit.tools import Tool


class Opaque:
    """A plain class pydantic has no schema for."""


# ------------------------------------------------------------------- signature shapes


def star_args(*numbers: int) -> None: ...


def star_kwargs(**options: int) -> None: ...


def positional_only(a: int, /) -> None: ...


def private_name(_secret: int) -> None: ...


def unannotated(a: int, b) -> None: ...  # type: ignore[no-untyped-def]


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        pytest.param(star_args, "*numbers cannot be sent by a client", id="*args"),
        pytest.param(star_kwargs, "**options cannot be described by a schema", id="**kwargs"),
        pytest.param(positional_only, "parameter 'a' is positional-only", id="positional-only"),
        pytest.param(private_name, "parameter '_secret' starts with '_'", id="underscore"),
        pytest.param(unannotated, "parameter 'b' has no type annotation", id="no-annotation"),
    ],
)
def test_bad_signatures_fail_at_decoration(fn: Callable[..., Any], message: str) -> None:
    app = App("t", "1")
    with pytest.raises(DefinitionError, match="^tool '[a-z_]+': " + message.replace("*", r"\*")):
        app.tool(fn)
    assert dict(app.tools) == {}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("", id="empty"),
        pytest.param("a b", id="space"),
        pytest.param("a/b", id="slash"),
        pytest.param("é", id="non-ascii"),
        pytest.param("x" * 129, id="too-long"),
    ],
)
def test_bad_tool_names(name: str) -> None:
    with pytest.raises(DefinitionError, match="a tool name is 1-128 characters"):
        App("t", "1").tool(name=name)(lambda: None)


@given(st.text(st.sampled_from("aZ09_.-/ \né\x00"), max_size=130) | st.text(max_size=130))
def test_the_name_test_is_the_specs_pattern(name: str) -> None:
    """``is_name`` (a set, no regular expression at start-up) accepts what the pattern does;
    ``mcpkit.tools.TOOL_NAME`` is that pattern."""
    from mcpkit.tools import TOOL_NAME

    expected = re.fullmatch(r"[A-Za-z0-9_.\-]{1,128}", name) is not None
    assert is_name(name) is expected
    assert (TOOL_NAME.fullmatch(name) is not None) is expected


@pytest.mark.parametrize("name", ["a", "build-app", "ns.tool_v2", "X" * 128])
def test_good_tool_names(name: str) -> None:
    app = App("t", "1")
    app.tool(name=name)(lambda: None)
    assert list(app.tools) == [name]
    assert app.tools[name].definition["name"] == name


def test_lambda_needs_a_name() -> None:
    with pytest.raises(DefinitionError, match="tool '<lambda>'"):
        App("t", "1").tool(lambda: None)


def test_duplicate_names() -> None:
    app = App("t", "1")

    def ping() -> None: ...

    app.tool(ping)
    with pytest.raises(DefinitionError, match="tool 'ping' is defined twice"):
        app.tool(name="ping")(lambda: None)


# ------------------------------------------------------------------------ type failures


def unresolvable(a: int, b: Missing) -> None: ...  # type: ignore[name-defined]  # noqa: F821


def returns_unresolvable() -> Nowhere: ...  # type: ignore[name-defined]  # noqa: F821


def opaque_param(a: int, thing: Opaque) -> None: ...


def opaque_in_list(things: list[Opaque]) -> None: ...


def opaque_return() -> Opaque:
    return Opaque()


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        pytest.param(
            unresolvable,
            "tool 'unresolvable': parameter 'b' cannot be resolved: name 'Missing' is not defined",
            id="forward-ref",
        ),
        pytest.param(
            returns_unresolvable,
            "tool 'returns_unresolvable': the return type cannot be resolved",
            id="forward-ref-return",
        ),
        pytest.param(
            opaque_param,
            "tool 'opaque_param': pydantic cannot build a schema for parameter 'thing' (Opaque)",
            id="opaque",
        ),
        pytest.param(
            opaque_in_list,
            "tool 'opaque_in_list': pydantic cannot build a schema for parameter 'things'",
            id="opaque-in-list",
        ),
        pytest.param(
            opaque_return,
            "tool 'opaque_return': pydantic cannot build a schema for its return type",
            id="opaque-return",
        ),
    ],
)
def test_types_fail_on_compile(fn: Callable[..., Any], message: str) -> None:
    app = App("t", "1")
    app.tool(fn)  # decoration only inspects the signature
    with pytest.raises(DefinitionError) as caught:
        app.compile()
    assert str(caught.value).startswith(message)


# -------------------------------------------------------------------------- decorator


def test_decorator_returns_the_function_unchanged() -> None:
    app = App("t", "1")

    def add(a: int, b: int) -> int:
        return a + b

    assert app.tool(add) is add
    assert app.tool(name="plus")(add) is add
    assert add(1, 2) == 3
    assert list(app.tools) == ["add", "plus"]


def test_bare_and_called_forms() -> None:
    app = App("t", "1")

    @app.tool
    def bare() -> None: ...

    @app.tool()
    def called() -> None: ...

    @app.tool(name="renamed", title="Renamed", description="Explicit.")
    def original() -> None:
        """Docstring loses to description=."""

    assert list(app.tools) == ["bare", "called", "renamed"]
    assert app.tools["renamed"].definition == {
        "name": "renamed",
        "title": "Renamed",
        "description": "Explicit.",
        "inputSchema": {"type": "object", "properties": {}},
    }


def test_definition_extras() -> None:
    app = App("t", "1")
    icons = [{"src": "https://example.com/i.png", "mimeType": "image/png"}]
    app.tool(
        name="a",
        annotations=ToolAnnotations(title="A", read_only_hint=True, open_world_hint=False),
        icons=icons,
        meta={"x": 1},
    )(lambda: None)
    app.tool(name="b", annotations={"destructiveHint": True})(lambda: None)
    assert app.tools["a"].definition == {
        "name": "a",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"title": "A", "readOnlyHint": True, "openWorldHint": False},
        "icons": icons,
        "_meta": {"x": 1},
    }
    assert app.tools["b"].definition["annotations"] == {"destructiveHint": True}


def test_unknown_annotation_key() -> None:
    with pytest.raises(DefinitionError, match=r"unknown annotation\(s\) \['readonly'\]"):
        App("t", "1").tool(name="a", annotations={"readonly": True})(lambda: None)


def test_add_and_remove_tool_notify() -> None:
    app = App("t", "1")
    seen: list[tuple[str, str | None]] = []
    unsubscribe = app.subscribe(lambda kind, uri: seen.append((kind, uri)))
    tool = app.add_tool(lambda: None, name="x")
    assert isinstance(tool, Tool)
    assert app.tools["x"] is tool
    app.remove_tool("x")
    unsubscribe()
    app.add_tool(lambda: None, name="y")
    assert seen == [("tools", None), ("tools", None)]
    with pytest.raises(KeyError, match="no tool named 'x'"):
        app.remove_tool("x")


# ------------------------------------------------------------------------- running


class FakeScope:
    def __init__(self) -> None:
        self.request_id: str | int | None = 7
        self.protocol_version = "2025-11-25"
        self.client_info: dict[str, Any] | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.state: Any = "lifespan-state"

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        return None

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        return None


def test_context_is_injected_and_hidden() -> None:
    seen: list[Any] = []

    def job(n: int, ctx: Context, other: Context | None = None) -> int:
        seen.append((ctx.request_id, ctx.state, other is ctx))
        return n

    tool = Tool(job)
    assert tool.input_schema == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
    context = Context(cast("ContextBackend", FakeScope()))  # only what this test needs
    assert asyncio.run(tool.run({"n": 3}, context, Workers())) == 3
    assert seen == [(7, "lifespan-state", True)]
    with pytest.raises(InvalidArguments):
        asyncio.run(tool.run({"n": 3, "ctx": 1}, context, Workers()))


def run(tool: Tool, arguments: dict[str, Any]) -> Any:
    return asyncio.run(tool.run(arguments, None, Workers()))


def test_run_validates_at_once_and_returns_the_call_to_await() -> None:
    """Arguments are checked when ``run`` is called (no coroutine to await, none left
    unawaited); the call itself happens when its coroutine is awaited."""
    calls: list[int] = []

    async def add(a: int, b: int) -> int:
        calls.append(a)
        return a + b

    tool = Tool(add)
    with pytest.raises(InvalidArguments):
        _ = tool.run({"a": "1", "b": 2}, None, Workers())
    running = tool.run({"a": 1, "b": 2}, None, Workers())
    assert calls == []
    assert asyncio.run(running) == 3
    assert calls == [1]


def test_where_tools_run() -> None:
    loop_thread = threading.get_ident()

    def sync() -> int:
        return threading.get_ident()

    async def asynchronous() -> int:
        return threading.get_ident()

    assert run(Tool(sync), {}) != loop_thread
    assert run(Tool(sync, blocking=False), {}) == loop_thread
    assert run(Tool(asynchronous), {}) == loop_thread


def test_run_validates_before_calling() -> None:
    called: list[int] = []

    def record(n: int) -> None:
        called.append(n)

    with pytest.raises(InvalidArguments):
        run(Tool(record), {"n": "1"})
    assert called == []
    run(Tool(record), {"n": 1})
    assert called == [1]


# --------------------------------------------------------------------- explicit schemas

SCHEMA = {
    "type": "object",
    "properties": {
        "arch": {"type": "string", "enum": ["arm64", "x86_64"]},
        "jobs": {"type": "integer", "minimum": 1},
    },
    "required": ["arch"],
    "additionalProperties": False,
}
OUTPUT = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def explicit(**arguments: Any) -> dict[str, Any]:
    return {"ok": arguments["arch"] == "arm64"}


def test_explicit_schemas_are_published_verbatim() -> None:
    tool = Tool(explicit, input_schema=SCHEMA, output_schema=OUTPUT)
    assert tool.input_schema is SCHEMA
    assert tool.output_schema == OUTPUT
    assert run(tool, {"arch": "arm64", "jobs": 2}) == {"ok": True}
    assert tool.to_result({"ok": True})["structuredContent"] == {"ok": True}


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        pytest.param(
            {"arch": "ARM"},
            {"field": "arch", "expected": ["arm64", "x86_64"], "received": "ARM"},
            id="enum",
        ),
        pytest.param({}, {"field": "arch", "expected": "required", "received": None}, id="missing"),
        pytest.param(
            {"arch": "arm64", "x": 1},
            {"field": "x", "expected": "no such argument", "received": 1},
            id="unknown",
        ),
        pytest.param(
            {"arch": "arm64", "jobs": 0},
            {"field": "jobs", "expected": ">= 1", "received": 0},
            id="minimum",
        ),
        pytest.param(
            {"arch": "arm64", "jobs": "2"},
            {"field": "jobs", "expected": "integer", "received": "2"},
            id="type",
        ),
    ],
)
def test_explicit_input_schema_is_enforced(arguments: dict[str, Any], detail: Any) -> None:
    tool = Tool(explicit, input_schema=SCHEMA)
    with pytest.raises(InvalidArguments) as caught:
        tool.validate(arguments)
    assert caught.value.detail == detail


def test_explicit_output_schema_is_enforced() -> None:
    tool = Tool(explicit, input_schema=SCHEMA, output_schema=OUTPUT)
    with pytest.raises(ValueError, match="returned a value its output schema rejects"):
        tool.to_result({"ok": "yes"})


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param({"type": "array"}, id="array-root"),
        pytest.param({"properties": {}}, id="no-type"),
    ],
)
def test_explicit_schemas_need_an_object_root(schema: dict[str, Any]) -> None:
    with pytest.raises(DefinitionError, match="output_schema must be a JSON Schema object"):
        Tool(explicit, input_schema=SCHEMA, output_schema=schema)
    with pytest.raises(DefinitionError, match="input_schema must be a JSON Schema object"):
        Tool(explicit, input_schema=schema)


def test_explicit_schema_without_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name == "jsonschema" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(DefinitionError, match=r'pip install "mcpkit\[jsonschema\]"'):
        Tool(explicit, input_schema=SCHEMA)
