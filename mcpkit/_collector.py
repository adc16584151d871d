"""The cyclic garbage collector in a process that only serves (``mcpkit run``, ``App.run()``).

Such a process pauses the collector (:func:`pause`) before mcpkit's modules and the user's app
load, and the stdio transport resumes it (:func:`resume`) once the warm-up has frozen the heap
(``gc.freeze``, see :mod:`mcpkit.transports.warmup`), after at most ``PAUSE_ANSWERS`` answers
there, and when serving ends. Loading, compiling and the first listings make tens of thousands
of objects that live as long as the server and almost no garbage cycles, yet each collection
walked them all again: ~5% of a 4-tool server's start-up and ~3% of a 1,000-tool one's
(instructions to the last ``tools/list`` page). Nothing else in mcpkit touches the collector,
and code that imports mcpkit into its own process keeps its collector as it was.

This module imports nothing of mcpkit, so the console script can pause before the rest loads.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "resume"]

_paused = False  # pause() turned the collector off (there is one per process)


def pause() -> None:
    """Turn the collector off until :func:`resume`; nothing changes where it is off already."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Turn the collector back on if :func:`pause` turned it off."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
