"""Property-based fuzzing of Streamable HTTP, in process (``HttpApp`` driven without a socket).

Hypothesis draws an app (sessions or ``stateless=True``, SSE or ``json_response=True``) and a
scene: sessions opened at the four handshake versions, then POSTs of the messages
``tests/fuzz_messages.py`` draws (both eras, every method, notifications, cancellations, client
answers, broken envelopes, batches, broken JSON, huge and deep bodies) to a live, missing,
unknown or deleted session, with the mirrored headers of 2026-07-28 right or wrong, and now
and then one HTTP-level fault (Content-Type, Accept, Origin, Host, size). Blocking calls run in
the background and are cancelled (``notifications/cancelled`` in their session, a disconnect
where that cancels, a DELETE of their session) or released at the end.

Invariants: every exchange ends with a documented status (never 500), 202 has no body, every
JSON body and SSE event is strict JSON and a JSON-RPC message, a reply answers only ids its
POST carried, and the plan holds (``tests/fuzz_check.py``): ids answered as owed, the right
number of ``id: null`` answers, no tag run twice, or run when its request was refused.
"""

from __future__ import annotations

import asyncio

from asgi_support import Request
from fuzz_app import Recorder, make_app
from fuzz_check import FUZZ, Tally, describe, problems, require
from fuzz_http_scenes import MAX_BODY, STATUSES, Disconnect, Post, Scene, scenes
from fuzz_plan import Expect, key_of
from http_support import sse_events
from hypothesis import event, given, settings
from strict_json import parse_strict

from mcpkit.transports.http import HttpApp

WAIT = 2.0  # seconds an exchange may take in process once nothing blocks it


# ------------------------------------------------------------------------------- playing


class Player:
    """Plays a scene against a fresh ``HttpApp``, then checks every exchange."""

    def __init__(self, scene: Scene, asgi: HttpApp, recorder: Recorder) -> None:
        self.scene = scene
        self.asgi = asgi
        self.recorder = recorder
        self.sessions: list[str] = []
        self.exchanges: dict[int, Request] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.ran = asyncio.Event()
        loop = asyncio.get_running_loop()
        recorder.listeners.append(lambda tag: loop.call_soon_threadsafe(self.ran.set))

    async def play(self) -> None:
        for index, step in enumerate(self.scene.steps):
            if isinstance(step, Disconnect):
                self.exchanges[step.post].close()
                if step.cancels:
                    await asyncio.wait([self.tasks[step.post]], timeout=WAIT)
            else:
                await self.post(index, step)

    async def post(self, index: int, step: Post) -> None:
        headers = {name: value for name, value in step.headers.items() if value is not None}
        if step.session is not None and "mcp-session-id" not in headers:
            headers["mcp-session-id"] = self.sessions[step.session]
        exchange = Request(step.method, headers=headers, raw=step.body)
        self.exchanges[index] = exchange
        self.tasks[index] = asyncio.ensure_future(exchange.serve(self.asgi))
        if step.held is not None:
            await self.started(step.held)
        else:
            await asyncio.wait([self.tasks[index]], timeout=WAIT)
        if step.opens:
            self.sessions.append(exchange.headers.get("mcp-session-id", "none"))

    async def started(self, tag: str) -> None:
        """Wait until the held call's tool runs (so a cancellation finds it running)."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while not self.recorder.runs[tag]:
            self.ran.clear()
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                event("a held call never started")  # the checks say what it got instead
                return
            await asyncio.wait([asyncio.ensure_future(self.ran.wait())], timeout=left)

    async def finish(self) -> None:
        """Open the gates; every exchange must then end."""
        self.recorder.gate.open()
        tasks = list(self.tasks.values())
        pending = [task for task in tasks if not task.done()]
        if pending:
            await asyncio.wait(pending, timeout=WAIT)
        for exchange in self.exchanges.values():
            exchange.close()  # a GET stream, say: the client leaves
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def check(self) -> None:
        tally = Tally(batches=True)
        found: list[str] = []
        for index, step in enumerate(self.scene.steps):
            if isinstance(step, Post):
                found += self.check_post(index, step, tally)
        found += problems(self.scene.plan, tally, dict(self.recorder.runs), ())
        shown = [f"#{i} {e.status} {bytes(e.received)[:200]!r}" for i, e in self.exchanges.items()]
        require(found, shown)

    def check_post(self, index: int, step: Post, tally: Tally) -> list[str]:
        exchange, task = self.exchanges[index], self.tasks[index]
        name = f"{step.method} #{index}"
        if task.cancelled():
            return [f"{name} did not finish"]
        if task.exception() is not None:
            return [f"{name} raised out of the app: {task.exception()!r}"]
        status, body = exchange.status, bytes(exchange.received)
        if not status:
            key = next(iter(step.keys), None)
            owed = self.scene.plan.requests.get(key) if key is not None else None
            if owed is not None and owed.expect is Expect.NEVER and exchange.gone.is_set():
                return []  # a stateless call its client left: nothing is sent
            return [f"{name} got no answer at all"]
        found = []
        if status not in STATUSES or (step.status is not None and status != step.status):
            found.append(f"{name} answered HTTP {status}: {body[:200]!r}")
        if status == 202 and body:
            found.append(f"{name}: 202 with a body")
        for payload in _payloads(exchange.headers, body):
            tally.line(payload)
            found += _foreign(payload, step, index)
        return found


def _payloads(headers: dict[str, str], body: bytes) -> list[bytes]:
    """The JSON texts of an answer: the body, or each SSE event's data (priming left out)."""
    if not headers.get("content-type", "").startswith("text/event-stream"):
        return [body] if body else []
    return [data.encode() for _, data in sse_events(body) if data]


def _foreign(payload: bytes, step: Post, index: int) -> list[str]:
    """Answers in ``payload`` that ``step`` did not ask for."""
    try:
        message = parse_strict(payload)
    except ValueError:
        return []  # the tally reports it
    if isinstance(message, list) and not step.batch:
        return [f"POST #{index}: an array answer to a message that is no allowed batch"]
    found = []
    for item in message if isinstance(message, list) else [message]:
        if isinstance(item, dict) and "method" not in item:
            key = key_of(item.get("id"))
            if key is not None and key not in step.keys:
                found.append(f"POST #{index} answered id {key[1]!r}, which it did not carry")
    return found


async def play(scene: Scene) -> None:
    app, recorder = make_app()
    asgi = HttpApp(
        app,
        stateless=scene.stateless,
        json_response=scene.json_response,
        max_body_bytes=MAX_BODY,
    )
    player = Player(scene, asgi, recorder)
    try:
        await player.play()
    finally:
        await player.finish()
        await asgi.aclose()
    player.check()


@settings(FUZZ, report_multiple_bugs=False)
@given(scenes())
def test_http_in_process(scene: Scene) -> None:
    describe(scene.plan, "stateless app" if scene.stateless else "sessions")
    asyncio.run(play(scene))
