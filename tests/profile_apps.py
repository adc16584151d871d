"""Apps for ``mcpkit check --target``: one tool as derived, and the same tool in each profile."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mcpkit import App, ServerOptions


def search(
    query: Annotated[str, Field(min_length=1, max_length=50)],
    limit: int | None = 5,
    tags: list[str] | None = None,
) -> str:
    """Search the catalogue.

    Args:
        query: What to look for.
        limit: How many results at most.
        tags: Only results with all these tags.
    """
    return query


derived = App("derived", "1")
derived.add_tool(search)

portable = App("portable", "1", options=ServerOptions(schema_profile="portable"))
portable.add_tool(search)

strict = App("strict", "1", options=ServerOptions(schema_profile="openai-strict"))
strict.add_tool(search)

titled = App("titled", "1")
titled.add_tool(search, input_schema={"type": "object", "title": "Search", "properties": {}})


def report(
    period: Annotated[int, Field(gt=0, le=50, multiple_of=5)] = 5,
    link: Annotated[str, Field(json_schema_extra={"format": "uri"})] = "https://example.com",
    tags: set[str] | None = None,
) -> str:
    """Report on a period.

    Args:
        period: Days covered.
        link: Where to post it.
        tags: Labels.
    """
    return str(period)


bounded = App("bounded", "1")
bounded.add_tool(report)

bounded_portable = App("bounded", "1", options=ServerOptions(schema_profile="portable"))
bounded_portable.add_tool(report)
