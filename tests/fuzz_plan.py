"""What a fuzzed conversation is owed: per request id, an answer exactly once, at most once
(cancelled, perhaps after it finished), never (cancelled while it blocked), or once at shutdown;
a number of answers with ``id: null``; and the tags that must never run."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str, Any]
"""An id as JSON-RPC compares it: by type and value (``1`` and ``"1"`` differ)."""


def key_of(value: Any) -> Key | None:
    """The id's key when it is a valid MCP id (a string or an integer), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, str):
        return ("str", value)
    return None


HIDDEN_TAG = "hidden"
"""The tag of every call to the fuzz app's ``guarded`` tool (hidden by its scope): never runs."""


class Expect(enum.Enum):
    ONCE = "exactly once"
    MAYBE = "at most once (cancelled, perhaps after it finished)"
    NEVER = "never (cancelled while it blocked)"
    AT_END = "exactly once, when the server shuts down"


@dataclass
class Owed:
    """What one request with a valid id must get."""

    expect: Expect
    blocking: bool = False
    tag: str | None = None  # a successful answer means this tag ran exactly once


@dataclass
class Plan:
    """Everything a conversation is owed, filled in as its messages are drawn."""

    requests: dict[Key, Owed] = field(default_factory=dict)
    nulls: int = 0  # answers with ``id: null`` (parse errors, unreadable ids, ...)
    forbidden: set[str] = field(default_factory=lambda: {HIDDEN_TAG})  # tags that must never run
    blocking: int = 0

    def owe(self, key: Key, owed: Owed) -> None:
        assert key not in self.requests, key
        self.requests[key] = owed
        self.blocking += owed.blocking

    def cancel(self, key: Key | None) -> None:
        """A ``notifications/cancelled`` naming ``key``, read after everything drawn so far."""
        owed = self.requests.get(key) if key is not None else None
        if owed is None:
            return  # unknown, or a request that comes later: no effect on it
        if owed.blocking:
            owed.expect = Expect.NEVER
        elif owed.expect is Expect.ONCE:
            owed.expect = Expect.MAYBE
