"""The ``mcpkit`` command line (layer L6): ``main`` is the console script's entry point."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from mcpkit import _collector

__all__ = ["cli", "main"]


def __getattr__(name: str) -> Any:
    """``mcpkit.cli.cli``, the click group, imported (with click) only when asked for."""
    if name == "cli":
        from mcpkit.cli.commands import cli

        return cli
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(args: Sequence[str] | None = None) -> None:
    """Run the ``mcpkit`` command (the console script and ``python -m mcpkit``).

    ``mcpkit run TARGET`` with no options is served without importing click (see
    :mod:`mcpkit.cli.serve`); everything else is the click group of :mod:`mcpkit.cli.commands`.
    """
    argv = sys.argv[1:] if args is None else list(args)
    target = _plain_run(argv)
    if target is None:
        from mcpkit.cli.commands import main as click_main

        click_main(argv)
        return
    _collector.pause()  # before mcpkit's modules load (the package imported none of them)
    try:
        from mcpkit.cli.serve import run_target

        code = run_target(target)
    except (KeyboardInterrupt, EOFError):  # as click reports them
        print("\nAborted!", file=sys.stderr, flush=True)
        code = 1
    finally:
        _collector.resume()
    sys.exit(code)


def _plain_run(argv: Sequence[str]) -> str | None:
    if len(argv) == 2 and argv[0] == "run" and not argv[1].startswith("-"):
        return argv[1]
    return None
