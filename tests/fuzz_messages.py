"""The fuzz suites' vocabulary: random MCP messages of both eras, and what each one must get.

A :class:`Writer` draws messages one after another (requests of every method mcpkit serves,
notifications, cancellations, client answers, envelopes with a wrong member) and records in a
:class:`Plan` what the server owes for each: an answer with its id exactly once, at most once
(cancelled, maybe after it finished), never (cancelled while it blocked), or an answer with
``id: null``. Ids are unique within a conversation and come in every form JSON-RPC allows, so
an answer names exactly one message. Transports build their conversations from these pieces.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fuzz_plan import HIDDEN_TAG, Expect, Key, Owed, Plan, key_of
from hypothesis import strategies as st

from mcpkit.protocol.versions import (
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_VERSION,
)

T = TypeVar("T")
Draw = Callable[[st.SearchStrategy[Any]], Any]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
STATELESS_VERSION = "2026-07-28"
META: dict[str, Any] = {META_VERSION: STATELESS_VERSION, META_CAPABILITIES: {}}
GOOD_METAS: list[dict[str, Any]] = [
    META,
    {**META, META_LOG_LEVEL: "debug", "progressToken": "p"},
    {**META, META_CLIENT_INFO: {"name": "fuzz", "version": "1"}},
    {**META, META_CAPABILITIES: {"extensions": {"io.modelcontextprotocol/tasks": {}}}},
]
BAD_METAS: list[dict[str, Any]] = [
    {META_VERSION: STATELESS_VERSION},
    {META_VERSION: "1999-01-01", META_CAPABILITIES: {}},
    {META_VERSION: 2026, META_CAPABILITIES: {}},
    {META_VERSION: STATELESS_VERSION, META_CAPABILITIES: []},
    {**META, META_LOG_LEVEL: "loud"},
]
QUICK_TOOLS = ("quick", "quick_sync", "echo", "quick_task", "part_quick", "needs_url")
BLOCKING_TOOLS = ("gate", "gate_sync")
METHODS = (
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
    "initialize",
    "subscriptions/listen",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "tasks/result",
    "tasks/list",
    "no/such-method",
)
JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
WRONG_TYPES: dict[str, list[Any]] = {
    "jsonrpc": ["1.0", 2.0, None, ["2.0"], "2.0 "],
    "method": [5, None, ["ping"], {"m": 1}, True],
    "params": ["x", 5, True, None],
    "id": [None, 1.5, 7.0, True, False, {"id": 1}, [1]],
}


@dataclass
class Message:
    """A drawn message: its JSON value, the id its answer names, what it is owed, the tag its
    handler runs under, and (a ``notifications/cancelled``) the id it names."""

    obj: Any
    key: Key | None = None
    owed: Owed | None = None  # None: a notification or a client answer (never answered)
    tag: str | None = None
    cancels: Key | None = None  # the id a notifications/cancelled names


class Writer:
    """Draws messages for one conversation and keeps its :class:`Plan`."""

    def __init__(
        self, draw: Draw, *, session: str | None, blocking_budget: int, listen: bool = True
    ) -> None:
        self.draw = draw
        self.listen = listen  # whether a listen may block (until the server shuts down)
        self.session = session  # the handshake version initialize opened, if any
        self.plan = Plan()
        self.budget = blocking_budget
        self.numbers = itertools.count(1)
        self.used: set[Key] = set()
        self.future: list[Any] = []  # ids cancelled before any request carries them
        self.initialize_key: Key | None = None

    # ------------------------------------------------------------------------ ids, tags

    def new_id(self) -> Any:
        if self.future and self.draw(st.booleans()):
            return self.future.pop(self.draw(st.integers(0, len(self.future) - 1)))
        return self._fresh_id()

    def _fresh_id(self) -> Any:
        n = next(self.numbers)
        forms: list[Any] = [n, -n, n + 2**63, n * 10**20, str(n), f"id-{n}", f'é中"\\\n{n}', 0, ""]
        value = self.draw(st.sampled_from(forms))
        key = key_of(value)
        if key is None or key in self.used:
            value, key = f"id-{n}", ("str", f"id-{n}")
        self.used.add(key)
        return value

    def pick(self, templates: list[T]) -> T:
        """One of ``templates``, copied (a message may be changed after it is drawn)."""
        picked: T = self.draw(st.sampled_from(templates))
        return copy.deepcopy(picked)

    def tag(self) -> str:
        return f"t{next(self.numbers)}"

    # ------------------------------------------------------------------------- requests

    def request(self, *, in_batch: bool = False) -> Message:
        """A well-formed request of either era (valid or not for the server's state)."""
        era = self.draw(st.sampled_from(["handshake", "stateless", "stateless-bad"]))
        if in_batch:
            era = "handshake"
        method = self.draw(st.sampled_from(METHODS))
        if method == "initialize" and era == "handshake" and self.session is None and not in_batch:
            method = "ping"  # initialize opens the session only at the start
        return self._request(method, era, None)

    def blocking(self) -> Message:
        """A call that blocks until the gates open (a listen: until the server ends), where
        the budget allows one; else any request."""
        eras = ["stateless", "handshake"] if self.session is not None else ["stateless"]
        era = self.draw(st.sampled_from(eras))
        tool = self.draw(st.sampled_from([*BLOCKING_TOOLS, *(["listen"] if self.listen else [])]))
        if self.budget <= 0 or (tool == "listen" and era != "stateless"):
            return self.request()
        if tool == "listen":
            return self._request("subscriptions/listen", era, None)
        return self._request("tools/call", era, tool)

    def _request(self, method: str, era: str, tool: str | None) -> Message:
        request_id = self.new_id()
        params, tag, blocking = self._params(method, era, tool)
        obj: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            obj["params"] = params
        at_end = method == "subscriptions/listen" and blocking
        expect = Expect.AT_END if at_end else Expect.ONCE
        owed = Owed(expect, blocking=blocking, tag=tag)
        return Message(obj, key_of(request_id), owed, tag)

    def _params(
        self, method: str, era: str, tool: str | None
    ) -> tuple[dict[str, Any] | None, str | None, bool]:
        tag = self.tag()
        params, runs = self._method_params(method, tag, tool)
        good_era = era == "stateless" or (era == "handshake" and self.session is not None)
        blocking = False
        if method == "tools/call" and params.get("name") in BLOCKING_TOOLS:
            blocking = good_era and runs and self.budget > 0
            if not blocking:
                params["name"] = "quick"
        if method == "subscriptions/listen":
            blocking = era == "stateless" and self.budget > 0 and self.listen
            if not blocking:
                params = {"notifications": "all"}  # answered at once (-32602)
        self.budget -= blocking
        if era == "stateless":
            params["_meta"] = self.pick(GOOD_METAS)
        elif era == "stateless-bad":
            params["_meta"] = self.pick(BAD_METAS)
        elif self.draw(st.booleans()):
            params["_meta"] = {"progressToken": self.draw(st.sampled_from(["tok", 7, None, 1.5]))}
        if not params and self.draw(st.booleans()):
            return None, None, False
        return params, (tag if runs else None), blocking

    def _method_params(
        self, method: str, tag: str, tool: str | None
    ) -> tuple[dict[str, Any], bool]:
        """Params for ``method``; ``True`` when success means ``tag`` ran."""
        pick = 1 if tool is not None else self.draw(st.integers(0, 3))  # 0: wrong params
        if method == "tools/call":
            if pick == 0:
                return self.pick(BAD_CALLS), False
            name = tool or self.draw(st.sampled_from(QUICK_TOOLS + BLOCKING_TOOLS))
            arguments: dict[str, Any] = {"tag": tag}
            if name == "echo":
                arguments["value"] = self.draw(JSON_VALUES)
            # A task's answer comes before its run (which a stopping server may cancel).
            return {"name": name, "arguments": arguments}, name != "quick_task"
        if method == "resources/read":
            if pick == 0:
                return {"uri": self.draw(st.sampled_from(["fuzz://nope", 5, "", None]))}, False
            return {"uri": f"fuzz://item/{tag}"}, True
        if method == "prompts/get":
            if pick == 0:
                return {"name": self.draw(st.sampled_from(["nope", 5])), "arguments": {}}, False
            return {"name": "greet", "arguments": {"tag": tag}}, True
        make = SIMPLE_PARAMS.get(method)
        return (make(pick) if make is not None else {}), False

    def call(self, method: str, params: dict[str, Any]) -> Message:
        """A request of a fixed shape that is answered at once, with a new id."""
        request_id = self.new_id()
        obj = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        return Message(obj, key_of(request_id), Owed(Expect.ONCE))

    def initialize(self) -> Message:
        request_id = self.new_id()
        params = {
            "protocolVersion": self.session or self.draw(st.sampled_from(HANDSHAKE_VERSIONS)),
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "1"},
        }
        obj = {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}
        return Message(obj, key_of(request_id), Owed(Expect.ONCE))

    # -------------------------------------------------------------------- notifications

    def notification(self) -> Message:
        method = self.draw(
            st.sampled_from(
                [
                    "notifications/initialized",
                    "notifications/progress",
                    "notifications/roots/list_changed",
                    "notifications/no-such-thing",
                    "no/such-method",
                ]
            )
        )
        obj: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if self.draw(st.booleans()):
            obj["params"] = self.pick([{}, {"progressToken": 1, "progress": 2}, []])
        return Message(obj)

    def cancel(self) -> Message:
        """``notifications/cancelled`` for a past, future, type-confused or bogus id."""
        kind = self.draw(st.sampled_from(["running", "past", "future", "confused", "bogus"]))
        target: Any = None
        known = [k for k in self.plan.requests if k != self.initialize_key]
        running = [k for k, owed in self.plan.requests.items() if owed.blocking]
        if kind == "running" and running:
            target = self.draw(st.sampled_from(running))[1]
        elif kind in ("past", "running") and known:
            target = self.draw(st.sampled_from(known))[1]
        elif kind == "confused" and known:
            target = _confused(self.draw(st.sampled_from(known))[1])
        elif kind == "future":
            target = self._fresh_id()
            self.future.append(target)
        else:
            target = self.draw(st.sampled_from([None, 10**9, "nope", 1.5, {"id": 1}, True]))
        params: Any = {"requestId": target, "reason": "fuzz"}
        shape = self.draw(st.integers(0, 5))
        if shape == 0:
            params = {"reason": "no id"}
        elif shape == 1:
            params = [target]
        obj = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
        named = params.get("requestId") if isinstance(params, dict) else None
        return Message(obj, cancels=key_of(named))

    def answer(self) -> Message:
        """A client's answer to a server request nobody sent (ignored), or a broken one."""
        request_id = self.new_id()
        member = self.draw(
            st.sampled_from(
                [
                    {"result": {}},
                    {"error": {"code": 1, "message": "no"}},
                    {"result": 1, "error": {}},
                ]
            )
        )
        obj = {"jsonrpc": "2.0", "id": request_id, **member}
        if len(member) == 2:  # both result and error: an invalid message, answered -32600
            return Message(obj, key_of(request_id), Owed(Expect.ONCE))
        return Message(obj)

    # --------------------------------------------------------------------- broken ones

    def mutated(self, message: Message) -> Message:
        """``message`` with one envelope member missing or of the wrong type: -32600, and
        nothing runs."""
        obj = dict(message.obj)
        name = self.draw(st.sampled_from(sorted(WRONG_TYPES)))
        if name == "id" and "id" not in obj:
            name = "jsonrpc"
        if self.draw(st.integers(0, 3)) == 0 and name != "params":
            obj.pop(name, None)
        else:
            obj[name] = self.draw(st.sampled_from(WRONG_TYPES[name]))
        if message.tag is not None:
            self.plan.forbidden.add(message.tag)
        if message.key is not None and key_of(obj.get("id")) is not None:
            return Message(obj, message.key, Owed(Expect.ONCE))
        return Message(obj)  # an id the server cannot read: answered with id null

    def broken_envelope(self) -> Message:
        """A request or a notification with one envelope member wrong."""
        base = self.request() if self.draw(st.booleans()) else self.notification()
        return self.mutated(base)

    def scalar(self) -> Message:
        return Message(self.draw(st.sampled_from([1, "x", None, True, 1.5, "ping"])))

    # --------------------------------------------------------------------- the plan

    def take(self, message: Message, *, can_answer: bool = True, cancel: bool = True) -> None:
        """Record what ``message`` is owed; ``can_answer=False`` when it is never processed;
        ``cancel=False`` when the caller decides what a cancellation does."""
        if not can_answer:
            if message.tag is not None:
                self.plan.forbidden.add(message.tag)
            return
        if message.owed is not None and message.key is not None:
            self.plan.owe(message.key, message.owed)
        elif _answered_with_null(message):
            self.plan.nulls += 1
        if cancel and _is_cancel(message.obj):
            self.plan.cancel(message.cancels)


def _answered_with_null(message: Message) -> bool:
    """Whether the server answers ``message`` with ``id: null`` (it is not a valid message)."""
    obj = message.obj
    if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
        return True
    if "method" in obj:
        if not isinstance(obj["method"], str) or ("params" in obj and not _container(obj)):
            return True
        return "id" in obj  # a request whose id the server cannot read
    has_result, has_error = "result" in obj, "error" in obj
    return key_of(obj.get("id")) is None or has_result == has_error


def _container(obj: dict[str, Any]) -> bool:
    return isinstance(obj["params"], (dict, list))


def _is_cancel(obj: Any) -> bool:
    return (
        isinstance(obj, dict)
        and obj.get("jsonrpc") == "2.0"
        and obj.get("method") == "notifications/cancelled"
        and "id" not in obj
    )


def _confused(value: Any) -> Any:
    """An id equal to ``value`` in loose comparisons but not as a JSON-RPC id."""
    if isinstance(value, int):
        return [float(value), str(value), value == 1][value % 3 if value >= 0 else 0]
    if value.isdigit() or (value.startswith("-") and value[1:].isdigit()):
        return int(value)
    return value.upper() + "x"


def encode(obj: Any, draw: Draw | None = None) -> bytes:
    """JSON text of ``obj``: compact UTF-8, or (with ``draw``) spaced or ASCII-escaped too."""
    spaced = draw is not None and draw(st.booleans())
    text = json.dumps(
        obj,
        ensure_ascii=draw is not None and draw(st.booleans()),
        separators=(", ", ": ") if spaced else (",", ":"),
        allow_nan=False,
    )
    return text.encode()


BAD_CALLS: list[dict[str, Any]] = [
    {"name": 5},
    {"name": "nope", "arguments": {}},
    {"name": "guarded", "arguments": {"tag": HIDDEN_TAG}},  # hidden by its scope: unknown
    {"name": "quick", "arguments": []},
    {"name": "quick", "arguments": {"tag": 5}},
    {"name": "quick"},
    {"arguments": {"tag": "x"}},
]
SIMPLE_PARAMS: dict[str, Callable[[int], dict[str, Any]]] = {
    "tools/list": lambda pick: {"cursor": "bogus"} if pick == 0 else {},
    "resources/subscribe": lambda pick: {"uri": "fuzz://static" if pick else 7},
    "resources/unsubscribe": lambda pick: {"uri": "fuzz://static" if pick else []},
    "completion/complete": lambda pick: (
        {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "tag", "value": "x"}}
        if pick
        else {"ref": "greet", "argument": {"name": 1}, "context": []}
    ),
    "logging/setLevel": lambda pick: {"level": ["loud", "debug", "error", "info"][pick]},
    "initialize": lambda pick: {"protocolVersion": HANDSHAKE_VERSIONS[pick], "capabilities": {}},
    "subscriptions/listen": lambda pick: {"notifications": {"toolsListChanged": True}},
    "tasks/get": lambda pick: {"taskId": ["bogus", "", "x" * 32, 7][pick]},
    "tasks/update": lambda pick: {
        "taskId": "bogus",
        "inputResponses": [{}, [], None, {"k": 1}][pick],
    },
    "tasks/cancel": lambda pick: {"taskId": [None, "bogus", "t", ["t"]][pick]},
    "tasks/result": lambda pick: {"taskId": "bogus"},
    "tasks/list": lambda pick: {},
}
DRAWN: dict[str, Callable[[Writer], Message]] = {
    "request": Writer.request,
    "blocking": Writer.blocking,
    "notification": Writer.notification,
    "cancel": Writer.cancel,
    "answer": Writer.answer,
    "mutated": Writer.broken_envelope,
    "scalar": Writer.scalar,
}
"""The messages a :class:`Writer` draws, by kind."""
