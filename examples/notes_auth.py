"""Notes behind JWT bearer tokens: two scopes and one admin-only tool (docs/http.md walks
through it).

- ``list_notes`` and ``read_note`` need the scope ``notes:read``;
- ``add_note`` needs ``notes:write``;
- ``delete_all_notes`` needs ``notes:write`` and is visible only to a principal whose token
  carries the role ``admin``.

A caller sees only what it may call; a call to anything else is answered like a call to a tool
that does not exist. Run it against your authorization server (``pip install "mcpkit[http,jwt]"``)::

    export NOTES_ISSUER=https://auth.example.com/
    export NOTES_AUDIENCE=http://127.0.0.1:8000/mcp
    export NOTES_JWKS_URL=https://auth.example.com/.well-known/jwks.json
    uvicorn --app-dir examples --factory notes_auth:make_asgi
"""

from __future__ import annotations

import os
from typing import Any

from mcpkit import App, Context, ServerOptions, ToolAnnotations, ToolError
from mcpkit.transports.http import BearerAuth, HttpApp, JWTVerifier

app = App(
    "notes",
    version="1.0.0",
    instructions="Personal notes. Reading needs notes:read, writing notes:write.",
    options=ServerOptions(on_missing_scope="challenge"),  # HTTP: ask for the missing scope
)
NOTES: dict[str, str] = {}
READ_ONLY = ToolAnnotations(read_only_hint=True)


def is_admin(ctx: Context) -> bool:
    """Whether the caller's token carries the role ``admin`` (a claim of your server's)."""
    principal = ctx.principal
    return isinstance(principal, dict) and "admin" in principal.get("roles", ())


@app.tool(scopes=["notes:read"], annotations=READ_ONLY)
def list_notes() -> list[str]:
    """The titles of every note."""
    return sorted(NOTES)


@app.tool(scopes=["notes:read"], annotations=READ_ONLY)
def read_note(title: str) -> str:
    """One note's text.

    Args:
        title: The note's title, as list_notes gives it.
    """
    if title not in NOTES:
        raise ToolError(f"No note titled {title!r}; list_notes gives the titles.")
    return NOTES[title]


@app.tool(scopes=["notes:write"])
def add_note(title: str, text: str, ctx: Context) -> str:
    """Save a note (replacing one of the same title).

    Args:
        title: A short title.
        text: The note.
    """
    NOTES[title] = text
    return f"saved {title!r} for {ctx.principal['sub']}"


@app.tool(scopes=["notes:write"], visible=is_admin, tags={"admin"})
def delete_all_notes() -> int:
    """Delete every note; answers how many there were. Admins only."""
    count = len(NOTES)
    NOTES.clear()
    return count


def make_asgi(verifier: Any = None) -> HttpApp:
    """The authenticated endpoint for the authorization server ``NOTES_ISSUER``, as the
    resource ``NOTES_AUDIENCE``; ``verifier`` defaults to a :class:`JWTVerifier` of that
    issuer's keys at ``NOTES_JWKS_URL``."""
    issuer, audience = os.environ["NOTES_ISSUER"], os.environ["NOTES_AUDIENCE"]
    if verifier is None:
        jwks_url = os.environ["NOTES_JWKS_URL"]
        verifier = JWTVerifier(issuer=issuer, audience=audience, jwks_url=jwks_url)
    auth = BearerAuth(verifier, authorization_servers=(issuer,), resource=audience)
    return app.asgi(auth=auth)
