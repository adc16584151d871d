"""The machine a run happened on: load, the hypervisor's steal time, this Python's thread
round trip, and the versions each server runs with."""

from __future__ import annotations

import os
import platform
import queue
import statistics
import threading
import time
from collections.abc import Sequence

from harness.process import READ_TIMEOUT, run_bounded
from harness.specs import ServerSpec
from harness.venvs import installed_version


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):
        return "load average n/a"
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


CpuTimes = tuple[int, int]  # (steal, total) clock ticks


def cpu_times() -> CpuTimes | None:
    """(steal, total) in clock ticks over all CPUs since boot, from Linux's /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (fields[7], sum(fields)) if len(fields) == 8 else None


def steal_note(
    before: CpuTimes | None,
    after: CpuTimes | None,
    during: str = "since the previous table",
) -> str | None:
    """The share of CPU time the hypervisor gave to other guests between two readings (on a
    VM, the main cause of figures that jump between runs), when it is measurable."""
    if before is None or after is None or after[1] - before[1] < 100:
        return None
    share = (after[0] - before[0]) / (after[1] - before[1])
    return f"host steal {during}: {share:.1%} of CPU time"


def machine() -> str:
    pydantic = installed_version("pydantic") or "?"
    return (
        f"machine: {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.platform()}, pydantic {pydantic}"
    )


def thread_round_trip(trips: int = 5000) -> float:
    """Median microseconds for this Python to hand a lock to another thread and get it back:
    the least a sync tool run off the event loop costs over an async one on this machine."""
    jobs: queue.SimpleQueue[threading.Lock | None] = queue.SimpleQueue()

    def echo() -> None:
        while (lock := jobs.get()) is not None:
            lock.release()

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    times = []
    for _ in range(trips):
        lock = threading.Lock()
        lock.acquire()
        start = time.perf_counter_ns()
        jobs.put(lock)
        lock.acquire()
        times.append(time.perf_counter_ns() - start)
    jobs.put(None)
    thread.join()
    return statistics.median(times) / 1000


def versions(specs: Sequence[ServerSpec]) -> str:
    """The installed versions each server runs with (read in its own interpreter)."""
    code = (
        "from importlib import metadata as m; import sys\n"
        "for d in sys.argv[1:]:\n"
        "    try: print(d + ' ' + m.version(d))\n"
        "    except m.PackageNotFoundError: pass"
    )
    parts = []
    for spec in specs:
        if spec.venv is None and spec.name != "mcpkit":
            continue
        dists = [spec.name, "pydantic", "uvicorn"]
        out = run_bounded([spec.python, "-c", code, *dists], READ_TIMEOUT, "reading versions")
        parts.append(f"{spec.name}: " + ", ".join(out.split("\n")[:-1]))
    return "versions: " + "; ".join(parts)
