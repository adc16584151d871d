"""``python -m mcpkit``: the same as the ``mcpkit`` command."""

from __future__ import annotations

from mcpkit.cli import main

if __name__ == "__main__":
    main()
