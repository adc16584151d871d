"""The tasks page (``docs/_drafts/tasks.md`` until it joins ``docs/``): every Python block runs
and states its output, as for the other feature pages."""

from __future__ import annotations

import pytest
import test_docs_features


def test_the_tasks_page_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(test_docs_features.DOCS.parent)
    test_docs_features.test_examples("_drafts/tasks.md", monkeypatch)
