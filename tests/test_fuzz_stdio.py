"""Property-based fuzzing of the stdio framing and the JSON-RPC envelope.

Hypothesis draws a conversation (``tests/fuzz_messages.py``): ``initialize`` at one of the four
handshake versions or not at all, then requests of every method in both eras (2026-07-28 ones
carry ``_meta``), notifications, ``notifications/cancelled`` naming past, future, type-confused
and bogus ids, client answers, envelopes with a member missing or of the wrong type, scalars,
batches, broken JSON and UTF-8, huge and deeply nested messages and numbers that overflow a
double. The lines are cut into chunks anywhere (lines split, several lines per chunk) and fed
to the server; then the gates open and stdin closes. ``tests/fuzz_check.py`` holds the output
against the plan. Most examples run in process (``serve_stdio`` on pipes), a few through
``mcpkit run``. Run long with ``MCPKIT_FUZZ_EXAMPLES=5000``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from fuzz_app import make_app
from fuzz_check import EXAMPLES, FUZZ, Tally, describe, problems, require
from fuzz_messages import DRAWN, HANDSHAKE_VERSIONS, META, Draw, Message, Writer, encode
from fuzz_plan import Expect, Key, Owed, Plan
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from stdio_support import mcpkit_run, serve_on_pipes

from mcpkit.protocol.jsonrpc import Limits

WAIT = 10.0  # seconds a server may take to answer or end (a failing run's bound)
WAIT_IN_PROCESS = 2.0  # the same in process, where an answer takes milliseconds
LIMITS = Limits(max_bytes=16 * 1024, max_depth=24)  # small, so huge and deep are cheap
GENERATE_ONLY = (Phase.explicit, Phase.reuse, Phase.generate)
"""Each example spawns a process: a failure is reported as found, even in a long run (the
in-process test shrinks the same conversations)."""
CONTROL_IDS = ("fuzz-probe", "fuzz-release", "fuzz-runs")
CONTROLS: list[Key] = [("str", i) for i in CONTROL_IDS]


class Conversation:
    """The chunks to send and what they are owed (a plain class: shown as its lines)."""

    def __init__(
        self, chunks: list[bytes], plan: Plan, session: str | None, max_in_flight: int
    ) -> None:
        self.chunks = chunks
        self.plan = plan
        self.session = session
        self.max_in_flight = max_in_flight

    def __repr__(self) -> str:
        lines = b"".join(self.chunks).split(b"\n")
        owed = {key[1]: owed.expect.name for key, owed in self.plan.requests.items()}
        return "\n".join(
            [
                f"max_in_flight={self.max_in_flight}, chunk sizes {[len(c) for c in self.chunks]}",
                *(f"  {line!r}"[:400] for line in lines),
                f"owed: {owed}, id-null answers: {self.plan.nulls}",
            ]
        )


# ------------------------------------------------------------------------------- frames


def _frame(draw: Draw, writer: Writer, limits: Limits) -> bytes:
    kind = draw(
        st.sampled_from(
            ["request"] * 6
            + ["blocking", "blocking"]
            + ["notification", "cancel", "cancel", "answer", "mutated", "mutated", "scalar"]
            + ["batch", "broken", "huge", "deep", "overflow"]
        )
    )
    if kind in FRAMES:
        return FRAMES[kind](draw, writer, limits)
    message = DRAWN[kind](writer)
    writer.take(message)
    return encode(message.obj, draw)


def _batch(draw: Draw, writer: Writer, limits: Limits) -> bytes:
    members: list[Message] = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["request", "request", "notification", "cancel", "answer"]))
        kind = draw(st.sampled_from([kind, kind, "mutated", "scalar"]))
        member = writer.request(in_batch=True) if kind == "request" else DRAWN[kind](writer)
        members.append(member)
    if draw(st.integers(0, 5)) == 0:
        members.append(Message([writer.draw(st.sampled_from([1, "ping"]))]))  # nested array
    allowed = writer.session == "2025-03-26" and bool(members)
    for member in members:
        writer.take(member, can_answer=allowed)
    if not allowed:
        writer.plan.nulls += 1  # one -32600 for the whole array
    return encode([m.obj for m in members], draw)


def _broken(draw: Draw, writer: Writer, limits: Limits) -> bytes:
    """A tools/call that is not JSON: cut short, garbage, a NaN, invalid UTF-8."""
    tag = writer.tag()
    writer.plan.forbidden.add(tag)
    params = {"name": "quick", "arguments": {"tag": tag, "n": 0}, "_meta": META}
    text = encode(
        {"jsonrpc": "2.0", "id": writer.new_id(), "method": "tools/call", "params": params}
    )
    kind = draw(st.sampled_from(["truncated", "garbage", "nan", "utf8"]))
    if kind == "truncated":
        text = text[: draw(st.integers(1, len(text) - 1))]
    elif kind == "garbage":
        noise = draw(st.binary(max_size=40)).replace(b"\n", b"")
        text = draw(st.sampled_from([b"}", b"\xff", b"\x00", b"{:"])) + noise
    elif kind == "nan":
        text = text.replace(b'"n":0', b'"n":' + draw(st.sampled_from([b"NaN", b"Infinity"])))
    else:
        text = text.replace(tag.encode(), tag.encode() + b"\xff\xfe")
    writer.plan.nulls += 1
    return text


def _huge(draw: Draw, writer: Writer, limits: Limits) -> bytes:
    """A request padded to well under the size limit, or past it (-32600, id null)."""
    message = writer.request()
    if not isinstance(message.obj.get("params"), dict):
        message.obj["params"] = {}
    message.obj["params"]["pad"] = ""
    base = len(encode(message.obj))
    over = limits.max_bytes <= MAX_HUGE and draw(st.booleans())
    size = draw(st.integers(0, max(0, min(limits.max_bytes, MAX_HUGE) // 2 - base)))
    if over:
        size += limits.max_bytes + 2 - base
    message.obj["params"]["pad"] = "x" * size
    writer.take(message, can_answer=not over)
    writer.plan.nulls += over
    return encode(message.obj)


def _deep(draw: Draw, writer: Writer, limits: Limits) -> bytes:
    """A ping nested within the depth limit, or past it (-32600, id null)."""
    over = draw(st.booleans())
    high = limits.max_depth + 300
    levels = draw(
        st.integers(limits.max_depth, high) if over else st.integers(1, limits.max_depth - 3)
    )
    nested: Any = "x"
    for _ in range(levels):
        nested = [nested]
    # the message is level 1, params 2, then one level per list: max_depth + 2 > max_depth
    message = writer.call("ping", {"deep": nested})
    writer.take(message, can_answer=not over)
    writer.plan.nulls += over
    return encode(message.obj)


def _overflow(draw: Draw, writer: Writer, limits: Limits) -> bytes:
    """A number beyond a double (read as infinity) where the answer repeats it."""
    tag = writer.tag()
    if draw(st.booleans()):
        arguments = {"tag": tag, "value": "__N__"}  # echoed back
        name = "echo"
    else:
        arguments = {"tag": "__N__"}  # a wrong argument: the error names what it received
        name = "quick"
    meta = draw(st.sampled_from([META, None])) if writer.session else META
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    message = writer.call("tools/call", params)
    if name == "echo":
        message.owed = Owed(Expect.ONCE, tag=tag)  # its success means the tag ran
    writer.take(message)
    number = draw(st.sampled_from([b"1e400", b"-1e999", b"123e45678"]))
    return encode(message.obj, draw).replace(b'"__N__"', number)


MAX_HUGE = 1024 * 1024
FRAMES: dict[str, Callable[[Draw, Writer, Limits], bytes]] = {
    "batch": _batch,
    "broken": _broken,
    "huge": _huge,
    "deep": _deep,
    "overflow": _overflow,
}


@st.composite
def conversations(draw: Draw, limits: Limits, max_in_flight: int | None = None) -> Conversation:
    """A whole conversation: initialize (or not), frames, blank lines, cut into chunks."""
    in_flight = max_in_flight or draw(st.sampled_from([2, 3, 8, 64]))
    session = draw(st.sampled_from([None, *HANDSHAKE_VERSIONS]))
    writer = Writer(draw, session=session, blocking_budget=min(6, in_flight - 1))
    lines: list[bytes] = []
    if session is not None:
        opening = writer.initialize()
        writer.initialize_key = opening.key
        writer.take(opening)
        lines.append(encode(opening.obj, draw))
    for _ in range(draw(st.integers(1, 25))):
        lines.append(_frame(draw, writer, limits))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([b"", b"   ", b"\t"])))
    stream = b"".join(line + draw(st.sampled_from([b"\n", b"\r\n"])) for line in lines)
    cuts = sorted(set(draw(st.lists(st.integers(1, len(stream) - 1), max_size=12))))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=False)]
    return Conversation(chunks, writer.plan, session, in_flight)


# ------------------------------------------------------------------------------- driving


def control(request_id: str, method: str, params: dict[str, Any]) -> bytes:
    """A request that works in any state of the session (it carries _meta)."""
    params = {**params, "_meta": META}
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


class Peer:
    """The client end of one conversation: writes chunks, reads and tallies every line."""

    def __init__(
        self, conversation: Conversation, stdin: asyncio.StreamWriter, wait: float = WAIT
    ) -> None:
        self.conversation = conversation
        self.stdin = stdin
        self.wait = wait
        self.broken = False
        self.tally = Tally(batches=conversation.session == "2025-03-26")
        self.lines: list[bytes] = []
        self.arrived = asyncio.Event()

    async def pump(self, stdout: asyncio.StreamReader) -> None:
        while line := await stdout.readline():
            self.lines.append(line)
            if not line.endswith(b"\n"):
                self.tally.problems.append(f"a last line without its newline: {line[:200]!r}")
            self.tally.line(line)
            self.arrived.set()

    async def until(self, done: Callable[[], bool]) -> bool:
        """Wait until ``done()`` (``False`` if not within ``self.wait`` seconds, or once the
        server's loop reported an unhandled error)."""
        deadline = asyncio.get_running_loop().time() + self.wait
        while not done() and not self.broken:
            self.arrived.clear()
            left = deadline - asyncio.get_running_loop().time()
            try:
                await asyncio.wait_for(self.arrived.wait(), max(left, 0))
            except asyncio.TimeoutError:
                break
        return done() and not self.broken

    def loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """The loop's exception handler: an error nothing handled is a failure at once."""
        error = f"{context.get('message')}: {context.get('exception')!r}"
        self.tally.problems.append(f"unhandled on the server's loop: {error}")
        self.broken = True
        self.arrived.set()

    def answered(self, request_id: str) -> bool:
        return self.tally.answers[("str", request_id)] > 0

    async def send(self, data: bytes, turns: int = 0) -> None:
        self.stdin.write(data)
        await self.stdin.drain()
        for _ in range(turns):  # let the server read this chunk on its own
            await asyncio.sleep(0)

    async def converse(self, turns: int) -> dict[str, int]:
        """Send the conversation, open the gates, wait for what is owed; the runs per tag."""
        for chunk in self.conversation.chunks:
            await self.send(chunk, turns)
        await self.send(control("fuzz-probe", "server/discover", {}))
        if not await self.until(lambda: self.answered("fuzz-probe")):
            raise AssertionError(self.stopped())
        await self.send(control("fuzz-release", "tools/call", {"name": "release"}))
        owed = [k for k, o in self.conversation.plan.requests.items() if o.expect is Expect.ONCE]
        await self.until(
            lambda: self.answered("fuzz-release") and all(self.tally.answers[k] for k in owed)
        )
        await self.send(control("fuzz-runs", "tools/call", {"name": "runs"}))
        if not await self.until(lambda: self.answered("fuzz-runs")):
            raise AssertionError(self.stopped())
        runs: dict[str, int] = self.tally.results[("str", "fuzz-runs")]["result"][
            "structuredContent"
        ]
        return runs

    def stopped(self) -> str:
        output = b"".join(self.lines[:40]).decode(errors="replace")
        return "\n".join(["the server stopped answering", *self.tally.problems, output])

    def check(self, runs: dict[str, int]) -> None:
        require(problems(self.conversation.plan, self.tally, runs, CONTROLS), self.lines)


async def in_process(conversation: Conversation) -> None:
    app, recorder = make_app()
    loop = asyncio.get_running_loop()
    in_flight = conversation.max_in_flight
    async with serve_on_pipes(app, limits=LIMITS, max_in_flight=in_flight) as (
        server,
        in_write,
        stdout,
    ):
        protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader())
        writing, _ = await loop.connect_write_pipe(lambda: protocol, os.fdopen(in_write, "wb", 0))
        stdin = asyncio.StreamWriter(writing, protocol, None, loop)
        peer = Peer(conversation, stdin, WAIT_IN_PROCESS)
        loop.set_exception_handler(peer.loop_error)
        pumping = asyncio.ensure_future(peer.pump(stdout))
        try:
            runs = await peer.converse(turns=3)
            writing.close()  # end of input: the server must finish on its own
            await asyncio.wait_for(asyncio.shield(server), WAIT_IN_PROCESS)
            await asyncio.wait_for(pumping, WAIT_IN_PROCESS)
        finally:
            recorder.gate.open()
            writing.close()
            server.cancel()
            pumping.cancel()
            await asyncio.gather(server, pumping, return_exceptions=True)
    peer.check(runs)


async def through_mcpkit_run(conversation: Conversation) -> None:
    async with mcpkit_run("tests/fuzz_app.py:app") as server:
        assert server.stdin is not None
        assert server.stdout is not None
        assert server.stderr is not None
        peer = Peer(conversation, server.stdin)
        pumping = asyncio.ensure_future(peer.pump(server.stdout))
        stderr = asyncio.ensure_future(server.stderr.read())
        try:
            runs = await peer.converse(turns=0)
            server.stdin.close()
            code = await asyncio.wait_for(server.wait(), WAIT)
            await asyncio.wait_for(pumping, WAIT)
        finally:
            pumping.cancel()
        log = (await stderr).decode(errors="replace")
    assert code == 0, log
    assert "Exception in callback" not in log, log
    peer.check(runs)


# --------------------------------------------------------------------------------- tests


@settings(FUZZ, report_multiple_bugs=False)
@given(conversations(LIMITS))
def test_stdio_in_process(conversation: Conversation) -> None:
    describe(conversation.plan, conversation.session)

    asyncio.run(in_process(conversation))


@settings(FUZZ, max_examples=max(2, EXAMPLES // 20), phases=GENERATE_ONLY)
@given(conversations(Limits(), max_in_flight=64))
def test_stdio_through_mcpkit_run(conversation: Conversation) -> None:
    describe(conversation.plan, conversation.session)
    asyncio.run(through_mcpkit_run(conversation))
