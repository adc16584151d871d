"""docs/settings.md and docs/distribution.md show real output: each ``console`` block's
``$ [VAR=value ...] mcpkit ...`` runs (in process, from the repository's root, with no
``WEATHER_*`` variable but those it sets) and prints exactly what the page shows."""

from __future__ import annotations

import os
import re
import shlex

import pytest
from cli_support import ROOT, mcpkit
from distribution_support import NO_TOMLLIB

PAGES = ("settings.md", "distribution.md")
BLOCK = re.compile(
    r"```console\n\$ (?P<env>(?:[A-Z_]+=\S+ )*)mcpkit (?P<command>[^\n]*)\n(?P<output>.*?)```",
    re.DOTALL,
)
CASES = [
    pytest.param(m["env"], m["command"], m["output"], id=f"{page}:{n}")
    for page in PAGES
    for n, m in enumerate(BLOCK.finditer((ROOT / "docs" / page).read_text(encoding="utf-8")))
]


@pytest.mark.parametrize(("env", "command", "shown"), CASES)
def test_page_shows_real_output(
    env: str, command: str, shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    for key in [k for k in os.environ if k.startswith("WEATHER_")]:
        monkeypatch.delenv(key)
    for pair in env.split():
        key, _, value = pair.partition("=")
        monkeypatch.setenv(key, value)
    result = mcpkit(*shlex.split(command))
    if NO_TOMLLIB and command.split()[0] in ("bundle", "registry"):
        assert "needs Python 3.11 or later" in result.stderr
        return
    assert result.output == shown


def test_both_pages_have_console_blocks() -> None:
    assert len(CASES) == 6
