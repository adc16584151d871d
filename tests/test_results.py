"""Return values -> ``outputSchema`` and ``CallToolResult`` (``Tool.to_result``)."""

from __future__ import annotations

import base64
import dataclasses
import datetime
from pathlib import Path
from typing import Any

import pytest
import typing_extensions
from pydantic import BaseModel, ValidationError

from mcpkit import Audio, EmbeddedResource, Image, ResourceLink, Text, ToolResult
from mcpkit.results import content_blocks, error_result
from mcpkit.schema import return_schema
from mcpkit.tools import Tool


class BuildResult(typing_extensions.TypedDict):
    exit_code: int
    output: str


class Report(BaseModel):
    ok: bool
    when: datetime.date


@dataclasses.dataclass
class Pair:
    left: int
    right: int


BUILD_SCHEMA = {
    "type": "object",
    "properties": {"exit_code": {"type": "integer"}, "output": {"type": "string"}},
    "required": ["exit_code", "output"],
}


def returning(annotation: Any, value: Any, **options: Any) -> Tool:
    def fn() -> Any:
        return value

    fn.__annotations__ = {"return": annotation}
    return Tool(fn, **options)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


SCHEMAS = [
    pytest.param(BuildResult, BUILD_SCHEMA, id="TypedDict"),
    pytest.param(
        Report,
        {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, "when": {"type": "string", "format": "date"}},
            "required": ["ok", "when"],
        },
        id="model",
    ),
    pytest.param(
        Pair,
        {
            "type": "object",
            "properties": {"left": {"type": "integer"}, "right": {"type": "integer"}},
            "required": ["left", "right"],
        },
        id="dataclass",
    ),
    pytest.param(
        dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}, id="dict"
    ),
    pytest.param(
        int,
        {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]},
        id="int-wrapped",
    ),
    pytest.param(
        list[str],
        {
            "type": "object",
            "properties": {"result": {"type": "array", "items": {"type": "string"}}},
            "required": ["result"],
        },
        id="list-wrapped",
    ),
    pytest.param(
        BuildResult | None,
        {
            "type": "object",
            "properties": {"result": {"anyOf": [BUILD_SCHEMA, {"type": "null"}]}},
            "required": ["result"],
        },
        id="optional-object-wrapped",
    ),
    pytest.param(str, None, id="str-unstructured"),
    pytest.param(None, None, id="None"),
    pytest.param(Image, None, id="Image"),
    pytest.param(list[Image | Text], None, id="content-list"),
    pytest.param(ToolResult, None, id="ToolResult"),
]


@pytest.mark.parametrize(("annotation", "schema"), SCHEMAS)
def test_output_schema(annotation: Any, schema: dict[str, Any] | None) -> None:
    tool = returning(annotation, None)
    assert tool.output_schema == schema
    assert ("outputSchema" in tool.definition) is (schema is not None)


def test_no_annotation_no_output_schema() -> None:
    def plain():  # type: ignore[no-untyped-def]
        return {"a": 1}

    tool = Tool(plain)
    assert tool.output_schema is None
    assert tool.to_result({"a": 1}) == {"content": [text('{"a":1}')], "isError": False}


RESULTS = [
    pytest.param(
        BuildResult,
        {"exit_code": 0, "output": "a.pkg"},
        {},
        {
            "content": [text('{"exit_code":0,"output":"a.pkg"}')],
            "structuredContent": {"exit_code": 0, "output": "a.pkg"},
            "isError": False,
        },
        id="TypedDict",
    ),
    pytest.param(
        Report,
        Report(ok=True, when=datetime.date(2024, 1, 2)),
        {},
        {
            "content": [text('{"ok":true,"when":"2024-01-02"}')],
            "structuredContent": {"ok": True, "when": "2024-01-02"},
            "isError": False,
        },
        id="model",
    ),
    pytest.param(
        int,
        3,
        {},
        {"content": [text('{"result":3}')], "structuredContent": {"result": 3}, "isError": False},
        id="int-wrapped",
    ),
    pytest.param(str, "hello", {}, {"content": [text("hello")], "isError": False}, id="str"),
    pytest.param(
        str,
        "hello",
        {"structured_output": True},
        {
            "content": [text('{"result":"hello"}')],
            "structuredContent": {"result": "hello"},
            "isError": False,
        },
        id="str-structured",
    ),
    pytest.param(
        BuildResult,
        {"exit_code": 1, "output": ""},
        {"structured_output": False},
        {"content": [text('{"exit_code":1,"output":""}')], "isError": False},
        id="structured_output=False",
    ),
    pytest.param(
        int,
        3,
        {"text_mirror": False},
        {"content": [], "structuredContent": {"result": 3}, "isError": False},
        id="text_mirror=False",
    ),
    pytest.param(None, None, {}, {"content": [], "isError": False}, id="None"),
]


@pytest.mark.parametrize(("annotation", "value", "options", "result"), RESULTS)
def test_results(annotation: Any, value: Any, options: dict[str, Any], result: Any) -> None:
    assert returning(annotation, value, **options).to_result(value) == result


def test_structured_output_false_publishes_no_schema() -> None:
    assert returning(BuildResult, None, structured_output=False).output_schema is None


def test_force_mirror_keeps_the_text_block() -> None:
    tool = returning(int, 3, text_mirror=False)
    assert tool.to_result(3, force_mirror=True) == {
        "content": [text('{"result":3}')],
        "structuredContent": {"result": 3},
        "isError": False,
    }


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        pytest.param(int, "three", id="int"),
        pytest.param(BuildResult, {"exit_code": "x", "output": ""}, id="TypedDict-field"),
        pytest.param(BuildResult, {"output": ""}, id="TypedDict-missing"),
        pytest.param(Report, {"ok": True}, id="model"),
    ],
)
def test_output_schema_violations_raise(annotation: Any, value: Any) -> None:
    with pytest.raises(ValidationError):
        returning(annotation, value).to_result(value)


def test_return_schema_dumps_checked_json_data() -> None:
    """What a structured result carries: the checked value as JSON data, wrapped when the
    schema is not an object's; a value the schema rejects raises."""
    assert return_schema(int, where="t").dump(3) == {"result": 3}
    when = datetime.datetime(2026, 12, 4, 5, 0)
    assert return_schema(dict[str, datetime.datetime], where="t").dump({"at": when}) == {
        "at": "2026-12-04T05:00:00"
    }
    with pytest.raises(ValidationError):
        return_schema(int, where="t").dump("three")


PNG = b"\x89PNG\r\n\x1a\n"
B64 = base64.b64encode(PNG).decode()


def test_content_helpers(tmp_path: Path) -> None:
    (tmp_path / "clip.mp3").write_bytes(PNG)
    value = [
        "first",
        Image(data=PNG),
        Audio(path=tmp_path / "clip.mp3"),
        ResourceLink("file:///r", "r"),
        EmbeddedResource("file:///e", text="e"),
    ]
    assert returning(list[Any], value, structured_output=False).to_result(value) == {
        "content": [
            text("first"),
            {"type": "image", "data": B64, "mimeType": "image/png"},
            {"type": "audio", "data": B64, "mimeType": "audio/mpeg"},
            {"type": "resource_link", "uri": "file:///r", "name": "r"},
            {"type": "resource", "resource": {"uri": "file:///e", "text": "e"}},
        ],
        "isError": False,
    }


def test_single_image_return() -> None:
    tool = returning(Image, Image(data=PNG))
    assert tool.to_result(Image(data=PNG)) == {
        "content": [{"type": "image", "data": B64, "mimeType": "image/png"}],
        "isError": False,
    }


TOOL_RESULTS = [
    pytest.param(ToolResult(content="x"), {"content": [text("x")], "isError": False}, id="text"),
    pytest.param(
        ToolResult(content="bad", is_error=True),
        {"content": [text("bad")], "isError": True},
        id="error",
    ),
    pytest.param(
        ToolResult(structured={"a": 1}),
        {"content": [text('{"a":1}')], "structuredContent": {"a": 1}, "isError": False},
        id="structured-mirrored",
    ),
    pytest.param(
        ToolResult(content="summary", structured={"a": 1}, meta={"m": 1}),
        {
            "content": [text("summary")],
            "structuredContent": {"a": 1},
            "isError": False,
            "_meta": {"m": 1},
        },
        id="structured-with-content",
    ),
    pytest.param(
        ToolResult(content=[Text("a"), "b"]),
        {"content": [text("a"), text("b")], "isError": False},
        id="list",
    ),
]


@pytest.mark.parametrize(("value", "result"), TOOL_RESULTS)
def test_tool_result(value: ToolResult, result: dict[str, Any]) -> None:
    assert returning(ToolResult, value).to_result(value) == result
    # A ToolResult wins even where the annotation promised structured data.
    assert returning(int, value).to_result(value) == result


def test_tool_result_without_mirror() -> None:
    value = ToolResult(structured={"a": 1})
    assert returning(ToolResult, value, text_mirror=False).to_result(value) == {
        "content": [],
        "structuredContent": {"a": 1},
        "isError": False,
    }


@pytest.mark.parametrize(
    ("value", "blocks"),
    [
        pytest.param(None, [], id="None"),
        pytest.param("a", [text("a")], id="str"),
        pytest.param(["a", "b"], [text("a"), text("b")], id="str-list"),
        pytest.param({"k": [1]}, [text('{"k":[1]}')], id="json"),
        pytest.param([1, 2], [text("[1,2]")], id="json-list"),
    ],
)
def test_content_blocks(value: Any, blocks: list[dict[str, Any]]) -> None:
    assert content_blocks(value) == blocks


def test_error_result() -> None:
    assert error_result("nope") == {"content": [text("nope")], "isError": True}
