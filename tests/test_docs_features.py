"""The feature pages of ``docs/`` (``PAGES``): every Python block runs, and every stated output
is what it produces.

Blocks of one page run in order in one module namespace. A ``json`` block right after a Python
block states the value of that block's last line (compared as JSON).
"""

from __future__ import annotations

import ast
import json
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import to_jsonable_python

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = (
    "resources.md",
    "prompts.md",
    "context.md",
    "middleware.md",
    "access.md",
    "http.md",
    "tasks.md",
    "extensions.md",
    "composition.md",
    "apps.md",
    "elicitation-url.md",
    "observability.md",
    "schemas.md",
)
# at least (Python, json) blocks; else (5, 4)
CHECKED = {"http.md": (6, 2), "extensions.md": (2, 2), "apps.md": (4, 4)}
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(page: str) -> list[tuple[str, str, int]]:
    """``(language, code, line)`` for every fenced block of the page."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [(m[1], m[2], text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def run_block(code: str, namespace: dict[str, Any], where: str) -> Any:
    """Execute ``code``; return the value of its last line when that is an expression."""
    tree = ast.parse(code, filename=where)
    last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    if last is not None:
        tree.body.pop()
    exec(compile(tree, where, "exec"), namespace)
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), where, "eval"), namespace)


@pytest.mark.parametrize("page", PAGES)
def test_examples(page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType(f"docs_{page.removesuffix('.md')}_examples")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.delenv("MCPKIT_STATE_KEY", raising=False)
    monkeypatch.chdir(DOCS.parent)  # pages name files from the repository's root
    namespace = module.__dict__
    pending: tuple[Any, str] | None = None
    checked = 0
    languages = []
    for language, code, line in blocks(page):
        languages.append(language)
        where = f"{page}:{line}"
        if language == "python":
            pending = (run_block(code, namespace, where), where)
        elif language == "json":
            assert pending is not None, f"{where}: a json block states the python block's value"
            value, source = pending
            assert to_jsonable_python(value) == json.loads(code), f"example at {source}"
            checked += 1
            pending = None
    blocks_at_least, outputs_at_least = CHECKED.get(page, (5, 4))
    assert languages.count("python") >= blocks_at_least
    assert checked >= outputs_at_least
