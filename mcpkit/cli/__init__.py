"""The ``mcpkit`` command line (layer L6): ``main`` is the console script's entry point."""

from __future__ import annotations

from mcpkit.cli.main import cli, main

__all__ = ["cli", "main"]
