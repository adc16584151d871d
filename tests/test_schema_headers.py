"""``Header``: parameters mirrored into HTTP headers (``x-mcp-header``, 2026-07-28)."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from mcpkit import App, DefinitionError, Header
from mcpkit._param_headers import header_properties


def schema_of(fn: Any) -> dict[str, Any]:
    app = App("t", "1")
    app.add_tool(fn)
    schema: dict[str, Any] = app.tools[fn.__name__].input_schema
    return schema


def test_header_is_published_on_the_property() -> None:
    def route(
        region: Annotated[str, Header("Region")] = "eu",
        shard: Annotated[int, Header("Shard")] = 0,
        dry: Annotated[bool, Header("Dry-Run")] = False,
    ) -> str:
        """Route."""
        return region

    assert schema_of(route)["properties"] == {
        "region": {"type": "string", "default": "eu", "x-mcp-header": "Region"},
        "shard": {"type": "integer", "default": 0, "x-mcp-header": "Shard"},
        "dry": {"type": "boolean", "default": False, "x-mcp-header": "Dry-Run"},
    }


def not_a_token(region: Annotated[str, Header("Bad Name")]) -> str:
    """Bad."""
    return region


def duplicate(a: Annotated[str, Header("Region")], b: Annotated[str, Header("region")]) -> str:
    """Twice."""
    return a + b


def a_number(x: Annotated[float, Header("X")]) -> float:
    """Numbers are not allowed (only integers)."""
    return x


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (not_a_token, "tool 'not_a_token': parameter 'region': Header('Bad Name') is not an HTTP"),
        (duplicate, "Header('region') is already used by parameter 'a' (names ignore case)"),
        (a_number, "Header(...) needs a string, integer or boolean parameter"),
    ],
    ids=["token", "duplicate", "number"],
)
def test_bad_headers_fail_at_compile(fn: Any, message: str) -> None:
    app = App("t", "1")
    app.add_tool(fn)
    with pytest.raises(DefinitionError) as caught:
        app.compile()
    assert message in str(caught.value)


def test_header_properties_finds_every_mirrored_property() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "target": {
                "type": "object",
                "properties": {"shard": {"type": "integer", "x-mcp-header": "Shard"}},
            },
            "odd": {"type": "string", "x-mcp-header": 5},
        },
    }
    assert header_properties(schema) == [(("region",), "Region"), (("target", "shard"), "Shard")]
    assert header_properties({"type": "object"}) == []
