"""The fuzz suites' invariants: what came out, held against the :class:`Plan` of what went in.

Every message the server writes must be strict JSON (no ``NaN``/``Infinity``), a JSON-RPC
response or a server notification (an array of responses only where batches exist), and carry
no traceback. Every request is answered as its plan says (exactly once, at most once, never),
answers with ``id: null`` are exactly the ones owed, nothing answers an id nobody sent, nothing
answers ``-32603`` (no fuzzed input is the server's own failure), and no tag ran twice, ran
when its message was rejected, or succeeded without running.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fuzz_plan import Expect, Key, Plan, key_of
from hypothesis import HealthCheck, Phase, event, settings
from strict_json import parse_strict

EXAMPLES = int(os.environ.get("MCPKIT_FUZZ_EXAMPLES", "100"))
"""Examples per fuzz test: 100 by default (CI); set ``MCPKIT_FUZZ_EXAMPLES`` to run long."""
LONG = "MCPKIT_FUZZ_EXAMPLES" in os.environ

FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # By default a failure is reported as found: shrinking a conversation the server stops
    # answering waits out a timeout per try, up to Hypothesis's five minutes. A long run
    # (MCPKIT_FUZZ_EXAMPLES set) shrinks it to a minimal one.
    phases=tuple(Phase) if LONG else (Phase.explicit, Phase.reuse, Phase.generate),
)


@dataclass
class Tally:
    """What the server wrote, sorted: answers per id, ``id: null`` answers, and faults."""

    batches: bool  # whether array answers may appear (a 2025-03-26 session)
    answers: Counter[Key] = field(default_factory=Counter)
    results: dict[Key, Any] = field(default_factory=dict)
    nulls: int = 0
    problems: list[str] = field(default_factory=list)

    def line(self, raw: bytes | str) -> None:
        """One whole message as written (a stdio line, a JSON body, an SSE event's data)."""
        text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
        if "Traceback" in text:
            self.problems.append(f"traceback text on the wire: {text[:200]!r}")
        try:
            message = parse_strict(raw)
        except ValueError as exc:
            self.problems.append(f"not strict JSON ({exc}): {text[:200]!r}")
            return
        if isinstance(message, list):
            if not self.batches or not message:
                self.problems.append(f"an array where no batch answer belongs: {text[:200]!r}")
            for member in message:
                self.response(member, text)
        elif isinstance(message, dict) and "method" in message and "id" not in message:
            self.notification(message, text)
        else:
            self.response(message, text)

    def notification(self, message: dict[str, Any], text: str) -> None:
        if message.get("jsonrpc") != "2.0" or not isinstance(message["method"], str):
            self.problems.append(f"not a JSON-RPC notification: {text[:200]!r}")

    def response(self, message: Any, text: str) -> None:
        if not _is_response(message):
            self.problems.append(f"not a JSON-RPC response: {text[:200]!r}")
            return
        if "error" in message and message["error"]["code"] == -32603:
            self.problems.append(f"-32603 answering fuzzed input: {text[:200]!r}")
        key = key_of(message["id"])
        if key is None:
            self.nulls += 1
            return
        self.answers[key] += 1
        self.results[key] = message


def _is_response(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if set(message) - {"jsonrpc", "id", "result", "error"} or "id" not in message:
        return False
    if message["id"] is not None and key_of(message["id"]) is None:
        return False
    if ("result" in message) == ("error" in message):
        return False
    error = message.get("error")
    return error is None or (
        isinstance(error, dict)
        and isinstance(error.get("code"), int)
        and isinstance(error.get("message"), str)
    )


def succeeded(message: Any) -> bool:
    """Whether an answer is a success (a result that is not a tool's ``isError``)."""
    result = message.get("result") if isinstance(message, dict) else None
    return isinstance(result, dict) and result.get("isError") is not True


def problems(
    plan: Plan, tally: Tally, runs: Mapping[str, int], controls: Iterable[Key]
) -> list[str]:
    """Everything ``tally`` shows that ``plan`` does not allow."""
    found = list(tally.problems)
    for key, owed in plan.requests.items():
        count = tally.answers.get(key, 0)
        allowed = {Expect.ONCE: {1}, Expect.AT_END: {1}, Expect.MAYBE: {0, 1}, Expect.NEVER: {0}}
        if count not in allowed[owed.expect]:
            found.append(
                f"id {key[1]!r} ({key[0]}) answered {count} times; owed {owed.expect.value}"
            )
        ran = runs.get(owed.tag, 0) if owed.tag is not None else 1
        if ran != 1 and key in tally.results and succeeded(tally.results[key]):
            found.append(f"id {key[1]!r} succeeded but its tag ran {ran} times")
    for key in set(tally.answers) - set(plan.requests) - set(controls):
        found.append(f"an answer to id {key[1]!r} ({key[0]}), which no request carried")
    if tally.nulls != plan.nulls:
        found.append(f"{tally.nulls} answers with id null; owed {plan.nulls}")
    found += [f"tag {tag} ran {count} times" for tag, count in runs.items() if count > 1]
    found += [
        f"tag {tag} ran, but its message was rejected" for tag in plan.forbidden if runs.get(tag)
    ]
    return found


def describe(plan: Plan, session: str | None) -> None:
    """Tell hypothesis's statistics (``--hypothesis-show-statistics``) what was exercised."""
    expects = Counter(owed.expect for owed in plan.requests.values())
    for expect, count in sorted(expects.items(), key=lambda item: item[0].name):
        event(f"{expect.name} owed", min(count, 5))
    event("blocking calls", plan.blocking)
    event("session", session or "none")


def require(found: list[str], output: Iterable[bytes | str]) -> None:
    """Fail with every problem and the start of what the server wrote."""
    if found:
        shown = [o if isinstance(o, str) else o.decode(errors="replace") for o in output]
        excerpt = "\n".join(line[:300] for line in shown[:40])
        raise AssertionError("\n".join(found) + "\n--- the server wrote:\n" + excerpt)
