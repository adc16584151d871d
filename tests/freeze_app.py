"""An app served by ``mcpkit run`` that reports whether its process froze its heap (the
stdio transport does, once warmed up, in a process that only serves) and whether the garbage
collector ran while it loaded and runs now (paused from loading until the warm-up)."""

from __future__ import annotations

import asyncio
import gc

from mcpkit import App

app = App("freeze", "1")

COLLECTING_WHILE_LOADED = gc.isenabled()


@app.tool
async def frozen() -> bool:
    """Whether objects sit in the collector's permanent generation, a few loop turns on (the
    warm-up takes one turn per definition, and one more)."""
    for _ in range(10):
        await asyncio.sleep(0)
    return gc.get_freeze_count() > 0


@app.tool
def collecting() -> dict[str, bool]:
    """Whether the collector was on while this module loaded, and whether it is on now."""
    return {"loaded": COLLECTING_WHILE_LOADED, "now": gc.isenabled()}
