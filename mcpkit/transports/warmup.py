"""What a transport (stdio, HTTP) does while its client reads the first answers.

After the first answer, every definition is compiled on a thread, so a broken one shows on
stderr at once. After the first answer past the handshake (``initialize``, ``server/discover``,
and over HTTP the 202 of ``notifications/initialized``) that is not a listing page with a next
one (usually the ``tools/list`` answer, its last page), the validators are built on the event
loop, one definition per callback; the first one imports pydantic (~40-70 ms), which the listing
did not need when every schema came from the fast path (:mod:`mcpkit._fast_schema`). The first
``tools/call`` then finds its validator built; one that arrives sooner builds its own, as it
always could.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
from collections import deque
from typing import Any

from mcpkit import _collector
from mcpkit.app import App
from mcpkit.exceptions import DefinitionError
from mcpkit.protocol import jsonrpc

__all__ = [
    "LOADED_ON_USE",
    "WarmUp",
    "compile_in_background",
    "time_to_warm_up",
    "warm_up",
]

logger = logging.getLogger("mcpkit.warmup")

PAUSE_ANSWERS = 64
"""The most answers a process that only serves writes with the collector paused
(:mod:`mcpkit._collector`): the warm-up, which resumes it, usually starts after the second or
third; a client that never leaves the handshake or its listings must not keep it off for good."""


def compile_in_background(app: App) -> None:
    """Compile every definition off the loop so a broken one shows on stderr at once."""

    def compile_all() -> None:
        for definition in app.definitions():
            try:
                definition.compile()
            except DefinitionError as exc:  # its message names the definition and the fix
                logger.error("%s cannot be compiled: %s", definition.label, exc)
            except Exception:
                logger.exception("%s cannot be compiled", definition.label)

    threading.Thread(target=compile_all, name="mcpkit-compile", daemon=True).start()


LOADED_ON_USE = (
    "pydantic",
    "pydantic_core._pydantic_core",  # the JSON codec (jsonrpc reads and writes with json till then)
    "datetime",  # with the codec
    "dataclasses",  # a frozen class's first look as a dataclass (pydantic's, or the caller's)
    "copy",  # with dataclasses, or a whole float retried as an integer argument
    "typing_extensions",
    "pathlib",
    "urllib.parse",
    "decimal",
    "uuid",
    "mimetypes",
    "mcpkit.settings",
    "mcpkit._directory",
    "mcpkit._included",
    "mcpkit._uritemplate",
    "mcpkit.prompts",  # a feature: its first definition (App.add_prompt, add_resource, ui)
    "mcpkit.resources",
    "mcpkit._ui",
    "mcpkit.protocol.methods.resources",  # a feature's handlers: its first method looked up
    "mcpkit.protocol.methods.prompts",
    "mcpkit.protocol.methods.completion",
    "mcpkit.protocol.methods.subscriptions",
    "mcpkit.protocol.methods.tasks",  # ... or a task tool's call
    "mcpkit.protocol.tasks.runner",  # the first task, tasks/* request or listen
    "mcpkit.protocol.tasks.store",
    "mcpkit.protocol.pipeline",  # the first request through middleware
)
"""Modules a server loads only when something needs them (a call's validator, the serializer's
first use, a feature): the warm-up's first debug lines say which were loaded before it began.
A server whose definitions need none of them answers ``initialize`` and its listings without
them (``tests/test_startup.py``)."""


_HANDSHAKE = frozenset({"initialize", "notifications/initialized", "server/discover"})
"""What a client sends before its listings: warming up after them would delay those (over
HTTP the ``notifications/initialized`` POST is answered too, with a 202)."""


def time_to_warm_up(message: Any, response: Any = None) -> bool:
    """Whether to warm up after answering ``message`` (decoded, or a request the core parsed)
    with ``response`` (``None`` where the transport does not hold it: HTTP): not after the
    handshake, and not after a listing page that has a next one (a client paging through a
    listing asks for the next page at once; the warm-up would delay it by the pydantic import).
    The answer to the last page, or to anything else, starts it."""
    method = message.get("method") if isinstance(message, dict) else getattr(message, "method", 0)
    if isinstance(method, str) and method in _HANDSHAKE:  # a bad one may be any JSON value
        return False
    result = response.get("result") if isinstance(response, dict) else None
    return not (isinstance(result, dict) and "nextCursor" in result)


class WarmUp:
    """One transport's warm-up: every definition compiled after its first answer, validators
    built when :func:`time_to_warm_up` says so. Once both are done (``done``), a transport pays
    one attribute read per answer."""

    __slots__ = ("answers", "compiled", "done", "freeze")

    def __init__(self, freeze: bool = False) -> None:
        self.answers = 0
        self.compiled = False
        self.done = False
        self.freeze = freeze  # a process that only serves: see ``warm_up``

    def answered(
        self, loop: asyncio.AbstractEventLoop, app: App, message: Any, response: Any = None
    ) -> None:
        """Call after ``message``'s answer is written (only while ``done`` is false)."""
        self.answers += 1
        if self.answers == PAUSE_ANSWERS:
            _collector.resume()
        if not self.compiled:
            self.compiled = True
            compile_in_background(app)
        if time_to_warm_up(message, response):
            self.done = True
            after = message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
            warm_up(loop, app, after, self.freeze)


def warm_up(
    loop: asyncio.AbstractEventLoop, app: App, after: Any = None, freeze: bool = False
) -> None:
    """Build every definition's validators (the first one imports pydantic) while the client
    reads the answer just written: one definition per loop callback, so a request that arrives
    meanwhile waits for one step at most. Not a thread: the import lock and the GIL would stall
    requests anyway. A call that comes first builds its own validator, as it always could.
    ``after``: the id of the request just answered (logged).

    ``freeze`` (a process that only serves): then move every object alive to the collector's
    permanent generation (``gc.freeze``) and resume the collector where
    ``mcpkit._collector.pause`` paused it. Its full collections walked the modules, pydantic and
    the definitions each time (~30,000 objects, 20-25 ms a time on a slow VM, every ~5,000
    calls of a flood); now they walk what requests made since. The price: a reference cycle
    among those objects that becomes garbage later is never freed. The definitions live as long
    as the process; a session or a request alive at that moment ends without one (HTTP
    sessions hold their send weakly, a connection drops its listener when it closes, a
    disconnect watch its watcher: ``tests/test_http_heap.py``)."""
    jsonrpc.serializer_in_use()  # pydantic brings what its first use imports: no point in waiting
    pending = deque(app.definitions())
    logger.debug(
        "warming up %d definitions' validators after answering %r (pydantic %s)",
        len(pending),
        after,
        "already loaded" if "pydantic" in sys.modules else "not loaded yet",
    )
    loaded = [name for name in LOADED_ON_USE if name in sys.modules]
    logger.debug("loaded on use, and loaded already: %s", ", ".join(loaded) or "none")

    def step() -> None:
        if not pending:
            logger.debug("warm-up done")
            if freeze:
                gc.freeze()
                _collector.resume()
            return
        definition = pending.popleft()
        try:
            definition.prepare()
        except Exception:  # reported by the compile above, and again by a call
            logger.debug("%s: validators not built in advance", definition.label, exc_info=True)
        loop.call_soon(step)

    loop.call_soon(step)
