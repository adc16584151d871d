"""What every part of the harness shares: where things are, how long a read may take, the one
error that makes a run invalid, and running a bounded command."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "benchmarks" / "apps"
READ_TIMEOUT = 60.0  # seconds any single response may take


class BenchError(Exception):
    """A server misbehaved: the run is invalid."""


def run_bounded(argv: Sequence[str], timeout: float, what: str) -> str:
    """``argv``'s standard output; ``BenchError`` when it fails or takes over ``timeout``."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: took over {timeout:.0f} s") from None
    if done.returncode != 0:
        raise BenchError(f"{what}: exit code {done.returncode}\n{done.stderr[-3000:]}")
    return done.stdout
