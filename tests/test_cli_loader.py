"""Loading a TARGET, shared by every command: a definition the user's module gets wrong while it
imports is one line naming file, line, definition and parameter, and exit code 2."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import assert_usage_error, forget_imported_modules, mcpkit  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("forget_imported_modules")


BAD_TOOL = """\
from mcpkit import App

app = App("bad", "1.0")


@app.tool
def add(*numbers: int) -> int:
    return sum(numbers)
"""

BAD_TOOL_SAYS = "tool 'add': *numbers cannot be sent by a client; list each argument"
BAD_TOOL_LINE = f"bad.py:6: {BAD_TOOL_SAYS}"


def run_mcpkit(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("target", ["bad.py:app", "bad.py", "bad:app"])
@pytest.mark.parametrize(
    "options",
    [(), ("--log-level", "warning"), ("--transport", "http")],
    ids=["no-click", "click-stdio", "click-http"],
)
def test_run_reports_a_bad_definition_in_one_line(
    tmp_path: Path, target: str, options: tuple[str, ...]
) -> None:
    (tmp_path / "bad.py").write_text(BAD_TOOL)
    done = run_mcpkit(tmp_path, "run", target, *options)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [f"mcpkit run: error: {BAD_TOOL_LINE}"]


@pytest.mark.parametrize(
    "command",
    [("docs",), ("inspect",), ("call", "add"), ("check",)],
    ids=lambda command: command[0],
)
def test_every_command_that_loads_a_target_says_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    (tmp_path / "bad.py").write_text(BAD_TOOL)
    monkeypatch.chdir(tmp_path)
    result = mcpkit(command[0], "bad.py:app", *command[1:])
    assert_usage_error(result, command[0])
    assert result.stderr == f"mcpkit {command[0]}: error: {BAD_TOOL_LINE}\n"


SIBLING = """\
from mcpkit import App

app = App("split", "1.0")
"""

DEFINITIONS = """\
import functools

from app_module import app


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


{definition}
"""
"""A module of definitions; ``{definition}`` starts on line 14."""


@pytest.mark.parametrize(
    ("definition", "says"),
    [
        pytest.param(
            """
            @app.tool(
                name="fine",
            )
            def _hidden(_secret: int) -> int:
                return _secret
            """,
            "defs.py:14: tool 'fine': parameter '_secret' starts with '_'; rename it "
            "(a client cannot see private parameters)",
            id="decorator-call",
        ),
        pytest.param(
            """
            @app.tool
            @logged
            def untyped(value) -> int:
                return value
            """,
            "defs.py:14: tool 'untyped': parameter 'value' has no type annotation; add one "
            "(e.g. 'value: str') so mcpkit can publish its schema",
            id="under-another-decorator",
        ),
        pytest.param(
            """
            def ask(topic, /) -> str:
                return topic


            app.add_prompt(ask)
            """,
            "defs.py:14: prompt 'ask': parameter 'topic' is positional-only; clients send "
            "arguments by name, so remove the '/'",
            id="add-call-names-the-function",
        ),
        pytest.param(
            """
            @app.resource("data://{key}")
            def read(other: str) -> str:
                return other
            """,
            "defs.py:14: resource template 'data://{key}': the function's parameters must "
            "match the template's variables exactly (missing parameters: ['key']; parameters "
            "not in the template: ['other'])",
            id="resource",
        ),
        pytest.param(
            """
            @app.tool
            def twice() -> int:
                return 1


            app.add_tool(lambda: 2, name="twice")
            """,
            "defs.py:19: tool 'twice' is defined twice; pass name=... to one",
            id="duplicate",
        ),
        pytest.param(
            """
            app.add_tool(functools.partial(print), name="has space")
            """,
            "defs.py:14: tool 'has space': a tool name is 1-128 characters of "
            "A-Z a-z 0-9 _ - . (pass name=... to choose another)",
            id="no-function-the-call-line",
        ),
        pytest.param(
            """
            class Loop:
                __call__ = print
            loop = Loop()
            loop.__wrapped__ = loop
            app.add_tool(loop, name="has space")
            """,
            "defs.py:18: tool 'has space': a tool name is 1-128 characters of "
            "A-Z a-z 0-9 _ - . (pass name=... to choose another)",
            id="wrapper-loop-the-call-line",
        ),
    ],
)
def test_the_line_is_where_the_definition_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, definition: str, says: str
) -> None:
    (tmp_path / "app_module.py").write_text(SIBLING)
    (tmp_path / "defs.py").write_text(
        DEFINITIONS.format(definition=textwrap.dedent(definition).strip() + "\n")
    )
    (tmp_path / "entry.py").write_text("import defs\nfrom app_module import app\n")
    monkeypatch.chdir(tmp_path)
    result = mcpkit("inspect", "entry.py:app")
    assert_usage_error(result, "inspect")
    assert result.stderr == f"mcpkit inspect: error: {says}\n"


def test_a_definition_outside_the_current_directory_keeps_its_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bad.py").write_text(BAD_TOOL)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = mcpkit("inspect", str(tmp_path / "bad.py"))
    assert result.stderr == f"mcpkit inspect: error: {tmp_path / 'bad.py'}:6: {BAD_TOOL_SAYS}\n"
