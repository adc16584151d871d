"""Pagination of every ``*/list`` method: pages of definitions behind an opaque cursor."""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from mcpkit.app import App
from mcpkit.exceptions import DefinitionError, InvalidParams
from mcpkit.protocol.access import listed
from mcpkit.protocol.methods.spec import Handler, Runtime
from mcpkit.protocol.request import RequestContext

__all__ = ["listing", "paginate"]

logger = logging.getLogger("mcpkit.server")


def listing(key: str, registry: Callable[[App], Mapping[str, Any]]) -> Handler:
    """The handler of a ``*/list`` method: a page of ``registry(app)``'s definitions."""

    async def handler(
        runtime: Runtime, ctx: RequestContext, params: dict[str, Any]
    ) -> dict[str, Any]:
        app = runtime.app
        items = listed(list(registry(app).values()), ctx, app)  # filtered, then paged
        return paginate(items, params, app.options.page_size, key)

    return handler


def paginate(
    items: Sequence[Any], params: dict[str, Any], page_size: int, key: str
) -> dict[str, Any]:
    """One page of ``items`` (their ``definition``) under ``key``, with an opaque cursor."""
    start = _cursor_offset(params.get("cursor"), len(items))
    end = start + page_size
    result: dict[str, Any] = {key: list(_definitions(items[start:end]))}
    if end < len(items):
        result["nextCursor"] = base64.urlsafe_b64encode(f"o:{end}".encode()).decode()
    return result


def _definitions(items: Sequence[Any]) -> Iterator[dict[str, Any]]:
    """The published definitions; one that cannot compile is left out (and logged), so a
    single broken definition does not take the whole list down with it."""
    for item in items:
        try:
            yield item.definition
        except DefinitionError as exc:
            logger.error("left out of the list: %s", exc)


def _cursor_offset(cursor: Any, total: int) -> int:
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(str(cursor).encode()).decode()
        offset = int(text.removeprefix("o:")) if text.startswith("o:") else -1
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset = -1
    if not 0 <= offset <= total:
        raise InvalidParams("Invalid params: unknown or expired cursor")
    return offset
