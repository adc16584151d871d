"""Shared test set-up: the hypothesis profile CI uses (no deadlines, derandomized), and the
``speedups`` fixture (a test run with and without ``mcpkit._speedups``)."""

from __future__ import annotations

import os
from importlib.util import find_spec

import pytest
from hypothesis import settings

from mcpkit import _eager_tasks, _workers
from mcpkit.transports import stdio

settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(params=["speedups on", "speedups off"])
def speedups(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Run a test with ``mcpkit._speedups`` in use, and as if it were deleted (its users then
    take the public-API path). The value: whether the speed-ups are in use."""
    if request.param == "speedups off":
        for user in (_eager_tasks, _workers, stdio):
            monkeypatch.setattr(user, "_speedups", None)
    return request.param == "speedups on" and find_spec("mcpkit._speedups") is not None
