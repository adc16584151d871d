"""The tasks and extensions pages (``docs/_drafts/`` until they join ``docs/``): every Python
block runs and states its output, as for the other feature pages."""

from __future__ import annotations

import pytest
import test_docs_features


def test_the_tasks_page_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(test_docs_features.DOCS.parent)
    test_docs_features.test_examples("_drafts/tasks.md", monkeypatch)


def test_the_extensions_page_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(test_docs_features.CHECKED, "_drafts/extensions.md", (2, 2))
    test_docs_features.test_examples("_drafts/extensions.md", monkeypatch)
