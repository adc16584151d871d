"""One server made of several apps: ``App.include`` (see ``docs/composition.md``).

``mcpkit run examples/composed.py:app`` serves ``about``, ``notes_add``, ``notes_search``,
``calc_add`` and ``calc_multiply``, the prompt ``notes_summarize`` and the template
``notes://{title}``. Each part keeps its own lifespan state; the main app's middleware runs
around every request, those of the parts included.
"""

from __future__ import annotations

import logging
from typing import Any

from composed_parts import calc, notes

from mcpkit import App
from mcpkit.middleware import Call, CallNext

logger = logging.getLogger("composed")

app = App("composed", "1.0", instructions="Notes and a calculator, in one server.")


@app.middleware
async def audit(call: Call, call_next: CallNext) -> dict[str, Any]:
    """Log every tool call, whichever part serves it."""
    if call.method == "tools/call":
        logger.info("calling %s", call.params.get("name"))
    return await call_next(call)


@app.tool
def about() -> str:
    """What this server is made of."""
    return "notes and calc, included from composed_parts/"


app.include(notes.app, prefix="notes")
app.include(calc.app, prefix="calc")
