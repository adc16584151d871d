"""docs/cli.md shows real output: each ``console`` block's ``$ mcpkit ...`` is run and compared.

Refresh the page after an intended change with ``python tests/test_docs_cli_page.py``.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

import pytest
from cli_support import ROOT, mcpkit

PAGE = ROOT / "docs" / "cli.md"
BLOCK = re.compile(r"```console\n\$ mcpkit (?P<command>[^\n]*)\n(?P<output>.*?)```", re.DOTALL)


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m["command"], m["output"]) for m in BLOCK.finditer(text)]


def output_of(command: str) -> str:
    return mcpkit(*shlex.split(command)).output


@pytest.mark.parametrize(("command", "shown"), blocks(PAGE.read_text(encoding="utf-8")))
def test_page_shows_real_output(command: str, shown: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert output_of(command) == shown


def test_every_command_is_shown() -> None:
    shown = {command.split()[0] for command, _ in blocks(PAGE.read_text(encoding="utf-8"))}
    assert shown == {"docs", "inspect", "call", "check", "diff"}


def refresh(page: Path) -> None:
    os.chdir(ROOT)
    text = BLOCK.sub(
        lambda m: f"```console\n$ mcpkit {m['command']}\n{output_of(m['command'])}```",
        page.read_text(encoding="utf-8"),
    )
    page.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    refresh(PAGE)
