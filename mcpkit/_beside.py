"""A helper thread woken on the CPU of the thread that hands it work (Linux).

The worker hand-off's threads (:mod:`mcpkit._workers`: the express thread, and a pool worker
the loop thread wakes) run jobs for a loop thread that holds the GIL they need. Woken on an idle
CPU of a VM that halts its idle CPUs, a thread runs ~50 us later; on the busy CPU that woke it,
~2 us; and the kernel wakes a thread on an idle CPU when there is one. So the thread that
hands a helper a job pins it to its own CPU just before waking it, and the helper, once woken
there, works with the CPU set it had (what a job starts, a process or a thread, inherits that
set, never the pin; and the kernel may move a long job to another CPU). Where the CPU cannot
be read or set (not Linux, no libc ``sched_getcpu``, a CPU set that refuses), nothing is
pinned, for good: only speed changes.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

__all__ = ["Beside"]

logger = logging.getLogger("mcpkit.workers")

_OFF = -2  # Beside.cpu once pinning failed (or cannot be done here)
_getcpu: Any = None  # libc's sched_getcpu (through ctypes, loaded on first use), or False
_loading = threading.Lock()


def _current_cpu() -> int:
    """The CPU the calling thread runs on, or -1 where that cannot be read."""
    global _getcpu
    if _getcpu is None:
        with _loading:  # (the import lets other threads run: none may read "no CPU" meanwhile)
            if _getcpu is None:
                _getcpu = _load_getcpu()
    return int(_getcpu()) if _getcpu else -1


def _load_getcpu() -> Any:
    if hasattr(os, "sched_setaffinity"):
        try:
            import ctypes  # (~3 ms, at the first sync call a loop thread hands over)

            return ctypes.CDLL(None).sched_getcpu
        except (ImportError, OSError, AttributeError):
            pass
    return False


class Beside:
    """One helper thread's pin. :meth:`follow` is called by the thread that hands it a job
    (before waking it), :meth:`working` by the helper once woken. The pin is taken off at the
    start of the job, not put back at its end: re-pinning itself there, the helper (still
    holding the GIL) lost its CPU to the loop thread it had just answered, which then slept on
    the GIL and, woken by the helper, was moved to the other CPU: a move or two a call."""

    __slots__ = ("_lock", "_mask", "_native_id", "cpu")

    def __init__(self, native_id: int | None) -> None:
        self._native_id = native_id
        self._lock = threading.Lock()
        self._mask: set[int] | None = None  # the helper's own CPU set, for its jobs
        self.cpu = -1 if native_id else _OFF  # where the helper is pinned (-1: nowhere)

    def follow(self) -> bool:
        """Pin the helper to the calling thread's CPU; whether it will be woken there. Raises
        nothing but what a signal handler raises (pinning changes only speed)."""
        with self._lock:
            if self.cpu == _OFF:
                return False
            try:
                cpu = _current_cpu()
                if cpu < 0:
                    raise OSError("the CPU cannot be read")
                if self.cpu < 0:  # not pinned: its CPU set is its own (read anew: it may change)
                    self._mask = os.sched_getaffinity(self._native_id or 0)
                self.cpu = cpu  # (first: if the pin is interrupted, working() still undoes it)
                os.sched_setaffinity(self._native_id or 0, {cpu})
            except Exception:
                self._give_up()
                return False
            return True

    def working(self) -> None:
        """In the helper, woken for a job: its own CPU set back while it works."""
        with self._lock:
            if self.cpu >= 0 and self._mask is not None:
                try:
                    os.sched_setaffinity(0, self._mask)
                except Exception:
                    self._give_up()
                else:
                    self.cpu = -1

    def _give_up(self) -> None:
        """Under the lock: no more pins; the helper gets its own CPU set back (else every CPU,
        which the kernel narrows to those it may use)."""
        self.cpu = _OFF
        if self._mask is not None:
            for cpus in (self._mask, set(range(os.cpu_count() or 1))):
                try:
                    os.sched_setaffinity(self._native_id or 0, cpus)
                    return
                except (OSError, ValueError):
                    pass
            logger.debug("could not give a helper thread its CPU set back")
