"""``mcpkit docs``: golden pages, --check, -o, and the error paths.

The examples' goldens are the committed docs under docs/examples/ (tests/test_docs_examples.py
compares every format); regenerate one after an intended change with
``mcpkit docs examples/build_app.py:app --format markdown -o docs/examples/build_app.md`` and
review the diff. ``tests/golden/documented.*`` are the goldens of ``tests/cli_apps.py:documented``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_support import BUILD_APP, GOLDEN, ROOT, app, assert_usage_error, mcpkit

from mcpkit.cli.loader import load_app
from mcpkit.testing import Client


@pytest.mark.parametrize("suffix", ["md", "html"])
def test_documented_golden(suffix: str) -> None:
    fmt = "markdown" if suffix == "md" else "html"
    result = mcpkit("docs", app("documented"), "--format", fmt)
    assert result.stdout == (GOLDEN / f"documented.{suffix}").read_text(encoding="utf-8")


def test_markdown_shows_what_the_issue_asks_for() -> None:
    page = mcpkit("docs", BUILD_APP).stdout
    for text in ("`arm64`, `x86_64`", "`Debug`, `Release`", "`exit_code`", "`output`"):
        assert text in page
    assert "| `project_dir` | string | yes |" in page
    assert "| `configuration` | string | no |" in page


def test_json_is_what_a_client_receives() -> None:
    snapshot = json.loads(mcpkit("docs", BUILD_APP, "--format", "json").stdout)
    with Client(load_app(BUILD_APP)) as client:
        assert snapshot["tools/list"] == client.request("tools/list")["tools"]
        assert snapshot["server"] == client.initialize_result
    assert snapshot["resources/list"] == snapshot["prompts/list"] == []
    assert snapshot["resources/templates/list"] == []


def test_json_keys_are_sorted() -> None:
    text = mcpkit("docs", BUILD_APP, "--format", "json").stdout
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_stateless_version_reads_server_discover() -> None:
    text = mcpkit("docs", BUILD_APP, "--format", "json", "--protocol-version", "2026-07-28")
    server = json.loads(text.stdout)["server"]
    assert server["protocolVersion"] == "2026-07-28"
    assert server["serverInfo"] == {"name": "builder", "version": "1.0.0"}


class _Balance(HTMLParser):
    """Checks that every element is closed in order (void elements are written self-closed)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.ids: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack.append(tag)
        found = dict(attrs)
        self.ids += [found["id"] or ""] if "id" in found else []
        self.links += [(found["href"] or "")[1:]] if "href" in found else []

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        assert self.stack.pop() == tag


@pytest.mark.parametrize("target", [BUILD_APP, app("documented"), app("empty")])
def test_html_is_well_formed_and_self_contained(target: str) -> None:
    page = mcpkit("docs", target, "--format", "html").stdout
    ET.fromstring(page.removeprefix("<!DOCTYPE html>\n"))  # well-formed XML too
    parser = _Balance()
    parser.feed(page)
    assert parser.stack == []
    assert set(parser.links) <= set(parser.ids)
    assert '<meta name="viewport"' in page
    assert "<script" not in page
    assert "http" not in page.replace("http-equiv", "")


def test_html_escapes_every_user_string() -> None:
    page = mcpkit("docs", app("documented"), "--format", "html").stdout
    assert "<b>" not in page
    assert "<window>" not in page
    assert "Use &lt;b&gt;carefully&lt;/b&gt; &amp; read the docs." in page
    assert "documented &lt;&amp;&gt; app" in page


def test_empty_app() -> None:
    page = mcpkit("docs", app("empty")).stdout
    assert "This server publishes no tools, resources or prompts." in page


def test_output_file_and_check(tmp_path: Path) -> None:
    target = tmp_path / "tools.md"
    assert mcpkit("docs", BUILD_APP, "-o", str(target)).exit_code == 0
    assert target.read_text(encoding="utf-8") == (
        ROOT / "docs" / "examples" / "build_app.md"
    ).read_text("utf-8")
    fresh = mcpkit("docs", BUILD_APP, "--check", str(target))
    assert (fresh.exit_code, fresh.stdout) == (0, f"{target} is up to date\n")
    target.write_text(target.read_text("utf-8").replace("arm64", "armv7"), encoding="utf-8")
    stale = mcpkit("docs", BUILD_APP, "--check", str(target))
    assert stale.exit_code == 1
    assert stale.stdout.startswith(f"--- {target}\n+++ {target} (generated)\n")
    assert "-| `arch` | string | yes |  | `armv7`, `x86_64` |" in stale.stdout
    assert "+| `arch` | string | yes |  | `arm64`, `x86_64` |" in stale.stdout
    assert stale.stderr == f"mcpkit docs: {target} is out of date; regenerate it with -o {target}\n"


def test_committed_example_docs_are_fresh() -> None:
    for fmt, name in (("markdown", "build_app.md"), ("json", "build_app.json")):
        done = mcpkit(
            "docs", BUILD_APP, "--format", fmt, "--check", str(ROOT / "docs/examples" / name)
        )
        assert done.exit_code == 0, done.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["no/such/file.py:app"], "no such file: no/such/file.py"),
        ([f"{ROOT / 'examples' / 'build_app.py'}:nope"], "has no attribute 'nope'"),
        ([f"{ROOT / 'examples' / 'build_app.py'}:Arch"], "is not an mcpkit App"),
        (["not a module"], "not a module name"),
        ([BUILD_APP, "--check", "/no/such/file.md"], "cannot read /no/such/file.md"),
        ([BUILD_APP, "-o", "/no/such/dir/out.md"], "cannot write /no/such/dir/out.md"),
        ([BUILD_APP, "-o", "a.md", "--check", "b.md"], "either -o/--output or --check"),
    ],
    ids=[
        "no-file",
        "no-attr",
        "not-an-app",
        "bad-module",
        "check-unreadable",
        "unwritable",
        "both",
    ],
)
def test_usage_errors(args: list[str], fragment: str) -> None:
    assert_usage_error(mcpkit("docs", *args), "docs", fragment)


def test_definition_that_fails_to_compile() -> None:
    result = mcpkit("docs", app("flawed"))
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("mcpkit docs: error: tool 'broken': ")
    assert result.stderr.endswith("(mcpkit check lists every problem)\n")
