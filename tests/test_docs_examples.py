"""The generated docs committed under docs/examples/ are exactly what ``mcpkit docs`` writes.

These are the golden files for the two examples (the seed's build_app and the conformance
fixtures in everything); ``.ci/run`` checks the same files with ``mcpkit docs --check``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mcpkit.cli.commands import cli

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("example", ["build_app", "everything"])
@pytest.mark.parametrize(
    ("fmt", "suffix"), [("markdown", "md"), ("json", "json"), ("html", "html")]
)
def test_committed_docs_are_fresh(example: str, fmt: str, suffix: str) -> None:
    target = str(ROOT / "examples" / f"{example}.py") + ":app"
    result = CliRunner().invoke(cli, ["docs", target, "--format", fmt])
    assert result.exit_code == 0, result.stderr
    committed = (ROOT / "docs" / "examples" / f"{example}.{suffix}").read_text(encoding="utf-8")
    assert result.stdout == committed


def test_everything_docs_show_every_kind_of_definition() -> None:
    text = (ROOT / "docs" / "examples" / "everything.md").read_text(encoding="utf-8")
    for expected in (
        "test_simple_text",
        "test://static-text",
        "test://template/{id}/data",
        "test_prompt_with_arguments",
        "Mcp-Param-Region",
    ):
        assert expected.replace("_", "\\_") in text, expected  # Markdown escapes "_"
