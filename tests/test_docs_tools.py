"""``docs/tools.md``: every Python block runs, and every stated output is what it produces.

Blocks run in order in one module namespace. A ``json`` block right after a Python block states
the value of that block's last line (compared as JSON).
"""

from __future__ import annotations

import ast
import itertools
import json
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_jsonable_python

DOC = Path(__file__).resolve().parent.parent / "docs" / "tools.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str, int]]:
    """``(language, code, line)`` for every fenced block of the page."""
    text = DOC.read_text(encoding="utf-8")
    return [(m[1], m[2], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def run_block(code: str, namespace: dict[str, Any], line: int) -> Any:
    """Execute ``code``; return the value of its last line when that is an expression."""
    tree = ast.parse(code, filename=f"{DOC.name}:{line}")
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, f"{DOC.name}:{line}", "exec"), namespace)
    if last is None:
        return None
    expression = ast.Expression(last.value)
    return eval(compile(expression, f"{DOC.name}:{line}", "eval"), namespace)


def test_page_has_examples_with_outputs() -> None:
    languages = [language for language, _, _ in blocks()]
    assert languages.count("python") >= 8
    assert languages.count("json") >= 8
    for before, after in itertools.pairwise(languages):
        if after == "json":
            assert before == "python", "a json block states the output of the python block above"


def test_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("docs_tools_examples")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    pending: tuple[Any, int] | None = None
    checked = 0
    for language, code, line in blocks():
        if language == "python":
            pending = (run_block(code, namespace, line), line)
        elif language == "json" and pending is not None:
            value, where = pending
            assert to_jsonable_python(value) == json.loads(code), f"example at line {where}"
            checked += 1
            pending = None
    assert checked >= 8
