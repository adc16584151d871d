"""The in-process scenario: a fresh interpreter turns N typed functions into complete
``tools/list`` definitions (``apps/compile_bench.py``), timed by wall clock and CPU."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from functools import partial

from harness.process import APPS, ROOT, BenchError
from harness.specs import Samples, ServerSpec, child_env, visit_in_turn


def compile_seconds(spec: ServerSpec, count: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one fresh process building ``count`` tools."""
    argv = [spec.python, str(APPS / "compile_bench.py"), str(spec.app), str(count)]
    try:
        done = subprocess.run(
            argv,
            env=child_env(spec),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{spec.name}: compiling {count} tools took over 300 s") from None
    if done.returncode != 0:
        raise BenchError(f"{spec.name}: compiling {count} tools failed:\n{done.stderr[-2000:]}")
    timing = json.loads(done.stdout.splitlines()[-1])
    return float(timing["seconds"]), float(timing["cpu_seconds"])


def compile_runs(specs: Sequence[ServerSpec], count: int, repeats: int) -> tuple[Samples, Samples]:
    """Wall-clock and CPU milliseconds to build ``count`` tools, ``repeats`` times each."""
    return visit_in_turn(specs, repeats, partial(compile_ms, count=count))


def compile_ms(spec: ServerSpec, count: int) -> tuple[float, float]:
    seconds, cpu_seconds = compile_seconds(spec, count)
    return seconds * 1000, cpu_seconds * 1000
