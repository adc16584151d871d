"""``docs/_drafts/access.md``: every Python block runs, in order, in one namespace, and every
``json`` block right after one states the value of its last line (as ``docs/tools.md``)."""

from __future__ import annotations

import json
import re
import sys
import types
from pathlib import Path

import pytest
from pydantic_core import to_jsonable_python
from test_docs_tools import run_block

DOC = Path(__file__).resolve().parent.parent / "docs" / "_drafts" / "access.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_access_page_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("docs_access_examples")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    text = DOC.read_text(encoding="utf-8")
    checked, value, where = 0, None, 0
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        if match[1] == "python":
            value, where = run_block(match[2], module.__dict__, line), line
        elif match[1] == "json":
            assert to_jsonable_python(value) == json.loads(match[2]), f"example at line {where}"
            checked += 1
    assert checked == 6
