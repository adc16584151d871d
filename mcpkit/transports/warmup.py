"""What a transport (stdio, HTTP) does while its client reads the first answers.

After the first answer, every definition is compiled on a thread, so a broken one shows on
stderr at once. After the first answer past the handshake (``initialize``, ``server/discover``,
and over HTTP the 202 of ``notifications/initialized``; usually the ``tools/list`` answer) the
validators are built on the event loop, one definition per callback; the first one imports
pydantic (~40-70 ms), which the listing did not need when every schema came from the fast path
(:mod:`mcpkit._fast_schema`). The first ``tools/call`` then finds its validator built; one that
arrives sooner builds its own, as it always could.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
from collections import deque
from typing import Any

from mcpkit.app import App
from mcpkit.exceptions import DefinitionError

__all__ = ["WarmUp", "compile_in_background", "past_the_handshake", "warm_up"]

logger = logging.getLogger("mcpkit.warmup")


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


_HANDSHAKE = frozenset({"initialize", "notifications/initialized", "server/discover"})
"""What a client sends before its listings: warming up after them would delay those (over
HTTP the ``notifications/initialized`` POST is answered too, with a 202)."""


def past_the_handshake(message: Any) -> bool:
    """Whether ``message`` (decoded, or a request the core parsed) is past the handshake."""
    method = message.get("method") if isinstance(message, dict) else getattr(message, "method", 0)
    return method not in _HANDSHAKE


class WarmUp:
    """One transport's warm-up: every definition compiled after its first answer, validators
    built after its first answer past the handshake. Once both are done (``done``), a transport
    pays one attribute read per answer."""

    __slots__ = ("compiled", "done", "freeze")

    def __init__(self, freeze: bool = False) -> None:
        self.compiled = False
        self.done = False
        self.freeze = freeze  # a process that only serves: see ``warm_up``

    def answered(self, loop: asyncio.AbstractEventLoop, app: App, message: Any) -> None:
        """Call after ``message``'s answer is written (only while ``done`` is false)."""
        if not self.compiled:
            self.compiled = True
            compile_in_background(app)
        if past_the_handshake(message):
            self.done = True
            warm_up(loop, app, self.freeze)


def warm_up(loop: asyncio.AbstractEventLoop, app: App, freeze: bool = False) -> None:
    """Build every definition's validators (the first one imports pydantic) while the client
    reads the answer just written: one definition per loop callback, so a request that arrives
    meanwhile waits for one step at most. Not a thread: the import lock and the GIL would stall
    requests anyway. A call that comes first builds its own validator, as it always could.

    ``freeze`` (a process that only serves): then move every object alive to the collector's
    permanent generation (``gc.freeze``). Its full collections walked the modules, pydantic and
    the definitions each time (~30,000 objects, 20-25 ms a time on a slow VM, every ~5,000
    calls of a flood); now they walk what requests made since. The price: a reference cycle
    among those objects that becomes garbage later is never freed (none does while serving)."""
    pending = deque(app.definitions())
    logger.debug(
        "warming up %d definitions' validators (pydantic %s)",
        len(pending),
        "already loaded" if "pydantic" in sys.modules else "not loaded yet",
    )

    def step() -> None:
        if not pending:
            logger.debug("warm-up done")
            if freeze:
                gc.freeze()
            return
        definition = pending.popleft()
        try:
            definition.prepare()
        except Exception:  # reported by the compile above, and again by a call
            logger.debug("%s: validators not built in advance", definition.label, exc_info=True)
        loop.call_soon(step)

    loop.call_soon(step)
