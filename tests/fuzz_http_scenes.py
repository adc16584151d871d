"""The scenes ``tests/test_fuzz_http.py`` plays: what to send to an ``HttpApp``, and what it
is owed.

A :class:`Builder` keeps a model of the app (sessions alive or deleted, calls held in the
background and where a cancellation of each must come from) and draws steps: POSTs of the
messages ``tests/fuzz_messages.py`` draws to a live, missing, unknown or deleted session with
the 2026-07-28 headers right or wrong; held blocking calls; their cancellation
(``notifications/cancelled`` in their session, a disconnect where that cancels, a DELETE of
their session); batches; and one HTTP-level fault now and then.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from fuzz_messages import DRAWN, HANDSHAKE_VERSIONS, Draw, Message, Writer, encode
from fuzz_plan import Expect, Key, Owed, Plan
from hypothesis import strategies as st

from mcpkit.protocol.versions import META_VERSION

MAX_BODY = 16 * 1024
STATUSES = frozenset({200, 202, 204, 400, 403, 404, 405, 406, 409, 413, 415, 421})
NAMED = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
HTTP_FAULTS: dict[str, tuple[dict[str, str], int]] = {
    "content-type": ({"content-type": "text/plain"}, 415),
    "accept": ({"accept": "text/html"}, 406),
    "origin": ({"origin": "https://evil.example"}, 403),
    "unparsable origin": ({"origin": "http://["}, 403),
    "host": ({"host": "evil.example:8000"}, 421),
}


@dataclass
class Post:
    """One exchange to make, and what its answer may hold."""

    body: bytes
    headers: dict[str, str | None]
    session: int | None = None  # the session whose id goes into Mcp-Session-Id
    keys: set[Key] = field(default_factory=set)  # ids its answer may name (or null)
    status: int | None = None  # the status it must get, where the model knows it
    held: str | None = None  # the tag of a blocking call: sent in the background
    batch: bool = False  # an array answer is allowed
    method: str = "POST"
    opens: bool = False  # an initialize that opens a session


@dataclass
class Disconnect:
    post: int
    cancels: bool  # a stateless call: the exchange ends once the app notices


@dataclass
class Target:
    """Where a POST goes: a session (index), none, a bogus one, or a stateless app."""

    session: int | None
    version: str | None  # the MCP-Protocol-Version header of handshake-era messages
    live: bool  # whether handshake-era messages reach a session (or need none)
    bogus: bool = False


class Scene:
    """What to send, and what it is owed (a plain class: shown step by step)."""

    def __init__(self, stateless: bool, json_response: bool, plan: Plan) -> None:
        self.stateless = stateless
        self.json_response = json_response
        self.plan = plan
        self.steps: list[Post | Disconnect] = []

    def __repr__(self) -> str:
        lines = [f"stateless={self.stateless}, json_response={self.json_response}"]
        for step in self.steps:
            if isinstance(step, Post):
                shown = {k: v for k, v in step.headers.items() if k not in ("host",)}
                lines.append(f"  {step.method} session={step.session} held={step.held} {shown}")
                lines.append(f"    {step.body[:300]!r}")
            else:
                lines.append(f"  disconnect POST #{step.post} (cancels: {step.cancels})")
        owed = {key[1]: owed.expect.name for key, owed in self.plan.requests.items()}
        lines.append(f"owed: {owed}, id-null answers: {self.plan.nulls}")
        return "\n".join(lines)


class Builder:
    """Draws a scene step by step, keeping the model of sessions and held calls."""

    def __init__(self, draw: Draw, stateless: bool, json_response: bool) -> None:
        self.draw = draw
        self.writer = Writer(draw, session=None, blocking_budget=6, listen=False)
        self.scene = Scene(stateless, json_response, self.writer.plan)
        self.sessions: list[str] = []  # their versions
        self.alive: list[bool] = []
        # pending blocking POSTs: their id, and the session a cancellation must come in
        # (None: a stateless call, which a disconnect cancels)
        self.held: dict[int, tuple[Key, int | None]] = {}

    # ------------------------------------------------------------------------- targets

    def target(self) -> Target:
        if self.scene.stateless:
            version = self.draw(st.sampled_from([None, *HANDSHAKE_VERSIONS]))
            return Target(None, version, live=True)
        choice = self.draw(st.integers(0, len(self.sessions) + 1))
        if choice < len(self.sessions):
            return Target(choice, self.sessions[choice], live=self.alive[choice])
        return Target(None, None, live=False, bogus=choice > len(self.sessions))

    def session_version(self, target: Target) -> str | None:
        """The version a handshake-era message is served at (None: no session)."""
        if not target.live:
            return None
        return target.version or ("2025-03-26" if self.scene.stateless else None)

    # --------------------------------------------------------------------------- steps

    def open(self) -> None:
        version = self.draw(st.sampled_from(HANDSHAKE_VERSIONS))
        self.writer.session = version
        message = self.writer.initialize()
        self.writer.take(message)
        headers: dict[str, str | None] = {"mcp-protocol-version": None}
        keys = {message.key} if message.key else set()
        self.add(Post(encode(message.obj), headers, keys=keys, status=200, opens=True))
        self.sessions.append(version)
        self.alive.append(True)

    def step(self) -> None:
        kinds = ["post"] * 5 + ["held_call", "held_call", "fault", "batch"]
        if self.held:
            kinds += ["cancel", "cancel", "disconnect"]
        if self.sessions:
            kinds.append("delete")
        kind = self.draw(st.sampled_from(kinds))
        getattr(self, kind)()

    def add(self, step: Post | Disconnect) -> int:
        self.scene.steps.append(step)
        return len(self.scene.steps) - 1

    # --------------------------------------------------------------------------- posts

    def post(self) -> None:
        budget, self.writer.budget = self.writer.budget, 0  # only held calls block
        try:
            self._post()
        finally:
            self.writer.budget = budget

    def _post(self) -> None:
        target = self.target()
        self.writer.session = self.session_version(target)
        kinds = ["request"] * 4 + ["notification", "cancel", "answer", "mutated", "scalar"]
        kind = self.draw(st.sampled_from([*kinds, "broken", "deep", "huge"]))
        if kind == "broken":
            body = self.draw(st.sampled_from([b"{", b'{"jsonrpc":"2.0","id":1,', b"\xff", b"NaN"]))
            self.writer.plan.nulls += 1
            self.add(Post(body, self.headers(None, target)[0], target.session, status=400))
            return
        if kind == "deep":
            over = self.draw(st.booleans())
            message = self.writer.call("ping", {"deep": _nested(200 if over else 100)})
            if over:
                self.writer.take(message, can_answer=False)
                self.writer.plan.nulls += 1
                headers = self.headers(message.obj, target)[0]
                self.add(Post(encode(message.obj), headers, target.session, status=400))
                return
        else:
            message = DRAWN["request" if kind == "huge" else kind](self.writer)
        if kind == "huge" and isinstance(message.obj.get("params"), dict):
            message.obj["params"]["pad"] = "x" * self.draw(st.integers(0, MAX_BODY // 2))
        self.send(message, target)

    def send(self, message: Message, target: Target, *, exact: bool = False) -> int:
        headers, headers_ok = self.headers(message.obj, target, exact=exact)
        stateless_era = _stateless_era(message.obj, headers.get("mcp-protocol-version"))
        self.account(message, target, stateless_era, headers_ok)
        keys = {message.key} if message.key is not None else set()
        return self.add(Post(encode(message.obj, self.draw), headers, target.session, keys=keys))

    def account(
        self, message: Message, target: Target, stateless_era: bool, headers_ok: bool
    ) -> None:
        """What a single message is owed on this route, and what its cancellation does."""
        plan = self.writer.plan
        if message.owed is not None:  # a request whose id the server reads
            if headers_ok and (stateless_era or target.live):
                self.writer.take(message, cancel=False)
                return
            self.writer.take(message, can_answer=False)  # refused: answered, never run
            assert message.key is not None
            plan.owe(message.key, Owed(Expect.ONCE))
        elif not stateless_era and not (target.live and headers_ok):
            self.writer.take(message, can_answer=False)
            plan.nulls += 1  # the session error has no id to name
        else:
            self.writer.take(message, cancel=False)
            if not stateless_era and target.session is not None:
                self.cancelled(message, target.session)

    def cancelled(self, message: Message, session: int) -> None:
        """A cancellation read in ``session``: it ends that session's held call it names."""
        if message.cancels is None or message.obj.get("method") != "notifications/cancelled":
            return
        for index, (key, scope) in list(self.held.items()):
            if key == message.cancels and scope == session:
                self.writer.plan.cancel(key)
                del self.held[index]

    def headers(
        self, obj: Any, target: Target, *, exact: bool = False
    ) -> tuple[dict[str, str | None], bool]:
        """The headers for ``obj`` on ``target``, and whether they are right (not always)."""
        headers: dict[str, str | None] = {"mcp-protocol-version": target.version}
        if target.bogus:
            headers["mcp-session-id"] = "no-such-session"
        meta_version = _meta_version(obj)
        if meta_version is None and not _stateless_era(obj, None):
            if not exact and self.draw(st.integers(0, 9)) == 0:
                headers["mcp-protocol-version"] = "1999-01-01"  # refused: 400
                return headers, False
            return headers, True
        headers["mcp-protocol-version"] = meta_version if isinstance(meta_version, str) else None
        method = obj.get("method")
        headers["mcp-method"] = method if isinstance(method, str) else None
        params = obj.get("params") if isinstance(obj.get("params"), dict) else {}
        name = params.get(NAMED.get(method, ""), None) if isinstance(method, str) else None
        headers["mcp-name"] = _header_text(name) if isinstance(name, str) else None
        if not exact and self.draw(st.integers(0, 7)) == 0:
            wrong = self.draw(st.sampled_from(["mcp-method", "mcp-name", "mcp-protocol-version"]))
            headers[wrong] = self.draw(st.sampled_from([None, "wrong"]))
            return headers, False
        return headers, True

    # ------------------------------------------------------------------- other steps

    def held_call(self) -> None:
        if self.scene.stateless or not self.sessions or self.draw(st.booleans()):
            target = self.target() if self.scene.stateless else Target(None, None, live=False)
        else:
            index = self.draw(st.integers(0, len(self.sessions) - 1))
            target = Target(index, self.sessions[index], live=self.alive[index])
        self.writer.session = self.session_version(target)
        message = self.writer.blocking()
        if message.owed is None or not message.owed.blocking:
            self.send(message, target)
            return
        stateless_era = _meta_version(message.obj) is not None
        if not stateless_era and not target.live:
            self.send(message, target)  # a deleted session: refused, never held
            return
        index = self.send(message, target, exact=True)
        step = self.scene.steps[index]
        assert isinstance(step, Post)
        assert message.key is not None
        step.held = message.tag
        scope = None if stateless_era or self.scene.stateless else target.session
        self.held[index] = (message.key, scope)

    def cancel(self) -> None:
        index = self.draw(st.sampled_from(sorted(self.held)))
        key, scope = self.held[index]
        if scope is None:  # disconnecting cancels a stateless call
            self.add(Disconnect(index, cancels=True))
            self.writer.plan.cancel(key)
            del self.held[index]
            return
        params = {"requestId": key[1], "reason": "fuzz"}
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
        self.send(Message(note, cancels=key), Target(scope, self.sessions[scope], True), exact=True)

    def disconnect(self) -> None:
        """A client that leaves: it cancels a stateless call, not a session's."""
        index = self.draw(st.sampled_from(sorted(self.held)))
        key, scope = self.held[index]
        self.add(Disconnect(index, cancels=scope is None))
        if scope is None:
            self.writer.plan.cancel(key)
            del self.held[index]

    def delete(self) -> None:
        index = self.draw(st.integers(0, len(self.sessions) - 1))
        status = 204 if self.alive[index] else 404
        self.writer.plan.nulls += status == 404  # "Session not found", id null
        self.add(Post(b"", {}, index, status=status, method="DELETE"))
        for held, (key, scope) in list(self.held.items()):
            if scope == index:  # a session's end cancels its calls
                self.writer.plan.cancel(key)
                del self.held[held]
        self.alive[index] = False

    def fault(self) -> None:
        """A request refused before it is read: one error with id null, nothing runs."""
        target = self.target()
        self.writer.session = self.session_version(target)
        message = self.writer.request()
        headers, _ = self.headers(message.obj, target, exact=True)
        name = self.draw(st.sampled_from([*sorted(HTTP_FAULTS), "size"]))
        if name == "size":
            message.obj.setdefault("params", {})
            if isinstance(message.obj["params"], dict):
                message.obj["params"]["pad"] = "x" * MAX_BODY
            status = 413
        else:
            changed, status = HTTP_FAULTS[name]
            headers.update(changed)
        self.writer.take(message, can_answer=False)
        self.writer.plan.nulls += 1
        self.add(Post(encode(message.obj), headers, target.session, status=status))

    def batch(self) -> None:
        target = self.target()
        version = self.session_version(target)
        self.writer.session = version
        budget, self.writer.budget = self.writer.budget, 0  # nothing in a batch blocks
        members = [self._member() for _ in range(self.draw(st.integers(0, 4)))]
        self.writer.budget = budget
        allowed = version == "2025-03-26" and bool(members)
        for member in members:
            self.writer.take(member, can_answer=allowed, cancel=False)
            if allowed and target.session is not None:
                self.cancelled(member, target.session)
        self.writer.plan.nulls += not allowed
        keys = {m.key for m in members if m.key is not None}
        headers = self.headers([], target, exact=True)[0]
        body = encode([m.obj for m in members], self.draw)
        self.add(Post(body, headers, target.session, keys=keys, batch=allowed))

    def _member(self) -> Message:
        kind = self.draw(st.sampled_from(["request", "request", "notification", "cancel"]))
        kind = self.draw(st.sampled_from([kind, "answer", "mutated", "scalar"]))
        if kind == "request":
            return self.writer.request(in_batch=True)
        return DRAWN[kind](self.writer)


def _nested(levels: int) -> Any:
    nested: Any = "x"
    for _ in range(levels):
        nested = [nested]
    return nested


def _meta_version(obj: Any) -> Any:
    params = obj.get("params") if isinstance(obj, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(META_VERSION) if isinstance(meta, dict) else None


def _stateless_era(obj: Any, header: str | None) -> bool:
    """Whether the endpoint serves ``obj`` in the 2026-07-28 era (docs/http.md)."""
    if header == "2026-07-28":
        return True
    if not isinstance(obj, dict):
        return False
    params = obj.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    method = obj.get("method")
    return method in ("server/discover", "subscriptions/listen") or (
        isinstance(meta, dict) and META_VERSION in meta
    )


def _header_text(value: str) -> str:
    if all(" " <= ch <= "~" for ch in value):
        return value
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


@st.composite
def scenes(draw: Draw) -> Scene:
    builder = Builder(draw, stateless=draw(st.booleans()), json_response=draw(st.booleans()))
    if not builder.scene.stateless:
        for _ in range(draw(st.integers(1, 2))):
            builder.open()
    for _ in range(draw(st.integers(1, 12))):
        builder.step()
    return builder.scene
