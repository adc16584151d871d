"""protocol/versions.py: every rule that differs between protocol versions, as a named gate."""

from __future__ import annotations

import pytest

from mcpkit.protocol import versions


@pytest.mark.parametrize(
    ("gate", "first"),
    [
        (versions.progress_messages, "2025-03-26"),
        (versions.structured_output, "2025-06-18"),
        (versions.arguments_fail_as_results, "2025-11-25"),
        (versions.elicitation_modes, "2025-11-25"),
        (versions.sse_priming, "2025-11-25"),
    ],
)
def test_each_gate_opens_at_its_version_and_stays_open(gate: object, first: str) -> None:
    assert callable(gate)
    opened = [version for version in versions.ALL_VERSIONS if gate(version)]
    assert opened == list(versions.ALL_VERSIONS[versions.ALL_VERSIONS.index(first) :])


def test_versions_are_ordered_by_the_known_list_not_as_strings() -> None:
    assert versions.at_least("2026-07-28", "2025-11-25")
    assert not versions.at_least("2024-11-05", "2025-03-26")
    # A version this server does not know opens no gate (as text it would sort after all).
    assert not versions.at_least("2099-01-01", "2024-11-05")


def test_only_2025_03_26_has_batches() -> None:
    assert [v for v in versions.ALL_VERSIONS if versions.has_batches(v)] == ["2025-03-26"]
    assert not versions.has_batches(None)
