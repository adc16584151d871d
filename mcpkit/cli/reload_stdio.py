"""``mcpkit run --reload`` over stdio: the process and the client's session stay, the App behind
them changes.

A stdio client starts the server once and initializes once; a restarted process would wait for
an ``initialize`` the client never sends again. So the reload happens in process: when the
TARGET's files change, :func:`~mcpkit.cli.reloading.load_fresh` loads the new version, the
running :class:`~mcpkit.protocol.server.Server` serves it from its next request on
(:meth:`~mcpkit.protocol.server.Server.replace_app`; requests already running finish with the
old one), and the client is sent ``notifications/{tools,prompts,resources}/list_changed`` for
each list whose definitions changed. An edit that does not load leaves the last good version
serving and says why on stderr (``file:line: message``). The lifespan is the first version's:
it was entered once, for the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import BinaryIO

from mcpkit.cli.reloading import (
    LoadFailure,
    changed_lists,
    changes,
    failure_note,
    files_note,
    load_fresh,
    say,
    watching_note,
)
from mcpkit.cli.serve import LOG_FORMAT
from mcpkit.protocol.server import Server
from mcpkit.transports.stdio import protect_stdout, serve_stdio

__all__ = ["run_reloading"]


def run_reloading(target: str, log_level: str = "warning") -> int:
    """Serve ``target`` on stdin/stdout, reloading it when its files change; the exit code.

    A first version that does not load is one line on stderr and exit code 2.
    """
    logging.basicConfig(level=log_level.upper(), format=LOG_FORMAT)
    out = protect_stdout()  # before the user's module runs: its print()s go to stderr
    try:
        app = load_fresh(target)
    except LoadFailure as exc:
        say(f"mcpkit run: error: {exc}")
        return 2
    say(f"mcpkit: serving {app.summary} over stdio; waiting for a client on stdin")
    say(watching_note(target))
    asyncio.run(_serve(target, Server(app), out))
    return 0


async def _serve(target: str, server: Server, out: BinaryIO) -> None:
    following = asyncio.ensure_future(_follow(target, server))
    try:
        await serve_stdio(server, sys.stdin.buffer, out)
    finally:
        following.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await following


async def _follow(target: str, server: Server) -> None:
    async for changed in changes(target):
        reload(target, server, changed)


def reload(target: str, server: Server, changed: set[str]) -> None:
    """Load ``target`` again and serve it, telling the client which lists changed; on a
    failure keep the App being served and say why on stderr."""
    try:
        app = load_fresh(target)
    except LoadFailure as exc:
        say(failure_note(exc))
        return
    lists = changed_lists(server.app, app)
    server.replace_app(app)
    for kind in lists:
        app.notify_list_changed(kind)
    say(f"mcpkit: reloaded {app.summary} after changes to {files_note(changed)}")
