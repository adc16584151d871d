"""``mcpkit run --transport http --reload``: a supervisor process that restarts the server.

As uvicorn's own reload does, this process binds the listening socket and runs the server in a
child process that inherits it; when the TARGET's files change, the child is stopped (uvicorn's
graceful shutdown: requests already running finish) and a new one starts on the same socket, so
connections made meanwhile wait in the socket's backlog instead of being refused. Unlike
uvicorn's, the new version is loaded here first: an edit that does not load leaves the running
child serving the last good version and says why on stderr (``file:line: message``).

HTTP sessions live in the child, so they end with it: a client's next request with its old
``Mcp-Session-Id`` is answered 404 and a client that follows the specification initializes
again; stateless (2026-07-28) requests see nothing but the new version.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from typing import Any

from mcpkit.cli import reloading
from mcpkit.cli.reloading import LoadFailure, say
from mcpkit.cli.run import http_app_from_env

__all__ = ["serve_child", "supervise"]

SOCKET_ENV = "MCPKIT_RELOAD_SOCKET"
SETTINGS_ENV = "MCPKIT_RELOAD_UVICORN"
_STOP_SECONDS = 10.0  # uvicorn's graceful shutdown takes at most 3 s of it


def supervise(target: str, host: str, port: int, settings: dict[str, Any]) -> None:
    """Bind ``host:port`` and serve ``target`` from a child process restarted on changes
    (until SIGINT or SIGTERM). ``settings`` are uvicorn's; the TARGET and the endpoint's
    options reach the child in the environment ``mcpkit run`` set for workers."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.create_server((host, port), family=family, backlog=2048) as listening:
        env = dict(os.environ)
        env[SOCKET_ENV] = str(listening.fileno())
        env[SETTINGS_ENV] = json.dumps(settings)
        say(reloading.watching_note(target))
        with contextlib.suppress(asyncio.CancelledError):  # SIGINT or SIGTERM: stop
            asyncio.run(_supervise(target, listening, env))


async def _supervise(target: str, listening: socket.socket, env: dict[str, str]) -> None:
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    assert me is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, me.cancel)
    child = await _start(listening, env)
    try:
        async for changed in reloading.changes(target):
            if _loads(target):
                await _stop(child)
                child = await _start(listening, env)
                files = reloading.files_note(changed)
                say(f"mcpkit: restarted the server process after changes to {files}")
    finally:
        await _stop(child)


def _loads(target: str) -> bool:
    """Whether the TARGET loads now (the child loads it again); if not, say why."""
    try:
        reloading.load_fresh(target)
    except LoadFailure as exc:
        say(reloading.failure_note(exc))
        return False
    return True


async def _start(listening: socket.socket, env: dict[str, str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mcpkit.cli.reload_http", env=env, pass_fds=(listening.fileno(),)
    )


async def _stop(child: asyncio.subprocess.Process) -> None:
    if child.returncode is not None:
        return
    child.terminate()
    try:
        await asyncio.wait_for(child.wait(), _STOP_SECONDS)
    except asyncio.TimeoutError:
        child.kill()
        await child.wait()


def serve_child() -> None:
    """The child: serve the TARGET in the environment on the socket it inherited."""
    import uvicorn

    settings = json.loads(os.environ[SETTINGS_ENV])
    listening = socket.socket(fileno=int(os.environ[SOCKET_ENV]))
    server = uvicorn.Server(uvicorn.Config(http_app_from_env(), **settings))
    server.run(sockets=[listening])


if __name__ == "__main__":
    serve_child()
