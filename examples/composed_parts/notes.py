"""A notes app: tools, a prompt, resources and a lifespan of its own.

Served alone (``mcpkit run examples/composed_parts/notes.py:app``) its tools are ``add`` and
``search``; included by ``examples/composed.py`` they are ``notes_add`` and ``notes_search``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from mcpkit import App, Context


@contextlib.asynccontextmanager
async def notes_store(app: App) -> AsyncIterator[dict[str, str]]:
    """The notes live as long as the server: this app's own lifespan state."""
    yield {"welcome": "Notes are kept in memory."}


app = App("notes", "1.0", lifespan=notes_store)


@app.tool
def add(title: str, text: str, ctx: Context) -> str:
    """Keep a note under a title."""
    ctx.state[title] = text
    return f"kept {title!r}"


@app.tool
def search(word: str, ctx: Context) -> list[str]:
    """The titles of the notes that mention a word."""
    return sorted(title for title, text in ctx.state.items() if word.lower() in text.lower())


def titles(value: str, given: dict[str, str]) -> list[str]:
    return [title for title in ("welcome", "todo") if title.startswith(value)]


@app.prompt(completions={"title": titles})
def summarize(title: str) -> str:
    """Ask for a summary of one note."""
    return f"Summarize the note {title!r} in one sentence."


@app.resource("notes://{title}", mime_type="text/plain")
def note(title: str, ctx: Context) -> str:
    """One note's text."""
    return str(ctx.state.get(title, ""))
