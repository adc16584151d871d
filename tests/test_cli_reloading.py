"""Loading a TARGET again after an edit (``mcpkit run --reload``, ``mcpkit dev``): the new code is
served, helper modules under the TARGET's folder are imported afresh, and whatever breaks is one
``file:line: message`` naming the user's file."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from cli_support import forget_imported_modules  # noqa: F401 (fixture)

from mcpkit.cli.reloading import LoadFailure, changes, load_fresh, watched_folder
from mcpkit.testing import Client

pytestmark = pytest.mark.usefixtures("forget_imported_modules")


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Work in tmp_path (the error messages show paths relative to it)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


SERVER = """\
from mcpkit import App
from helper import GREETING

app = App("reloaded", "1.0")


@app.tool
def greet() -> str:
    return GREETING
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def greeting(target: str) -> object:
    with Client(load_fresh(target)) as client:
        return client.call_tool("greet").data


def test_an_edited_helper_module_is_imported_again(in_tmp: Path) -> None:
    write(in_tmp / "server.py", SERVER)
    write(in_tmp / "helper.py", 'GREETING = "hello"\n')
    assert greeting("server.py:app") == "hello"
    write(in_tmp / "helper.py", 'GREETING = "hello again, longer"\n')
    assert greeting("server.py:app") == "hello again, longer"


def test_a_tool_added_to_the_target_is_served(in_tmp: Path) -> None:
    write(in_tmp / "helper.py", 'GREETING = "hello"\n')
    write(in_tmp / "server.py", SERVER)
    assert sorted(load_fresh("server.py:app").tools) == ["greet"]
    write(in_tmp / "server.py", SERVER + "\n\n@app.tool\ndef added() -> int:\n    return 1\n")
    assert sorted(load_fresh("server.py:app").tools) == ["added", "greet"]


def test_a_module_target_reloads_its_package(in_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(in_tmp))
    write(in_tmp / "pkg" / "__init__.py", "")
    write(in_tmp / "pkg" / "helper.py", 'GREETING = "one"\n')
    write(in_tmp / "pkg" / "server.py", SERVER.replace("from helper", "from pkg.helper"))
    assert watched_folder("pkg.server:app") == in_tmp / "pkg"
    assert greeting("pkg.server:app") == "one"
    write(in_tmp / "pkg" / "helper.py", 'GREETING = "two, longer"\n')
    assert greeting("pkg.server:app") == "two, longer"


def failure(target: str) -> LoadFailure:
    with pytest.raises(LoadFailure) as caught:
        load_fresh(target)
    return caught.value


def test_a_syntax_error_names_its_file_and_line(in_tmp: Path) -> None:
    write(in_tmp / "server.py", SERVER)
    write(in_tmp / "helper.py", 'GREETING = "hello"\n\nif True\n    pass\n')
    with pytest.raises(SyntaxError) as parsed:
        compile((in_tmp / "helper.py").read_text(), "helper.py", "exec")
    said = f"SyntaxError: {parsed.value.msg}"  # this Python's words for it
    got = failure("server.py:app")
    assert (got.file, got.line, got.message) == ("helper.py", 3, said)
    assert str(got) == f"helper.py:3: {said}"


BAD_TOOL = """\
from mcpkit import App

app = App("bad", "1.0")


@app.tool
def add(*numbers: int) -> int:
    return sum(numbers)
"""


def test_a_definition_error_names_the_definition_line(in_tmp: Path) -> None:
    write(in_tmp / "bad.py", BAD_TOOL)
    got = failure("bad.py:app")
    assert str(got) == (
        "bad.py:6: tool 'add': *numbers cannot be sent by a client; list each argument"
    )
    assert (got.file, got.line) == ("bad.py", 6)


def test_an_exception_while_importing_names_the_innermost_user_line(in_tmp: Path) -> None:
    write(in_tmp / "server.py", SERVER)
    write(in_tmp / "helper.py", "def half(n):\n    return n / 0\n\n\nGREETING = half(1)\n")
    got = failure("server.py:app")
    assert str(got) == "helper.py:2: ZeroDivisionError: division by zero"


def test_a_missing_import_names_the_import_line(in_tmp: Path) -> None:
    write(in_tmp / "server.py", "import mcpkit\nimport not_a_module_anywhere\n")
    got = failure("server.py")
    assert str(got) == ("server.py:2: ModuleNotFoundError: No module named 'not_a_module_anywhere'")


def test_a_target_without_an_app_has_no_line_to_blame(in_tmp: Path) -> None:
    write(in_tmp / "server.py", "X = 1\n")
    got = failure("server.py")
    assert (got.file, got.line) == (None, None)
    assert str(got) == "server.py: name the App as MODULE:ATTR (Apps found: none)"


def test_after_a_broken_edit_the_fixed_file_loads(in_tmp: Path) -> None:
    write(in_tmp / "helper.py", 'GREETING = "hello"\n')
    write(in_tmp / "server.py", "from helper import GREETING\nraise RuntimeError('half-saved')\n")
    assert str(failure("server.py")) == "server.py:2: RuntimeError: half-saved"
    write(in_tmp / "server.py", SERVER)
    assert greeting("server.py") == "hello"


# ---------------------------------------------------------------------------- changes


async def first_change(target: str, edit: Path) -> set[str]:
    """The first set ``changes`` yields while ``edit`` is written again and again.

    The watcher starts on the first iteration and says nothing when it is ready, so the edit
    repeats until it is seen; what is asserted is the set, not how long it took.
    """
    watching: AsyncIterator[set[str]] = changes(target)
    seen = asyncio.ensure_future(anext(watching))
    try:
        for count in range(200):
            write(edit.parent / "notes.txt", f"not watched {count}")
            write(edit.parent / "__pycache__" / "x.py", f"# not watched {count}")
            write(edit, f"VALUE = {count}\n")
            done, _ = await asyncio.wait({seen}, timeout=0.1)
            if done:
                return seen.result()
        raise AssertionError("no change seen in 20 s")
    finally:
        seen.cancel()
        await watching.aclose()  # type: ignore[attr-defined]


@pytest.mark.parametrize("watcher", ["watchfiles", "poll"])
def test_changes_yields_the_edited_python_files(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, watcher: str
) -> None:
    if watcher == "poll":
        monkeypatch.setitem(sys.modules, "watchfiles", None)  # as if the extra were missing
    write(in_tmp / "server.py", "")
    edited = in_tmp / "sub" / "helper.py"
    assert asyncio.run(first_change("server.py:app", edited)) == {str(edited)}
