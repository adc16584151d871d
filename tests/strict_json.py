"""Parse JSON as strict clients do: ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON."""

from __future__ import annotations

import json
from typing import Any


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_strict(data: bytes | str) -> Any:
    """Parse JSON, refusing ``NaN``, ``Infinity`` and ``-Infinity`` (and integers of more
    than 4,300 digits, as Python's parser does by default)."""
    return json.loads(data, parse_constant=_reject_constant)
