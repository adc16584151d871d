"""An app whose tools run as tasks, with hooks that let tests hold, release and watch them
deterministically (no sleeps), and helpers shared by the task tests."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

from pydantic import BaseModel

from mcpkit import App, Context, ProtocolError, ServerOptions, ToolError
from mcpkit.protocol.versions import META_CAPABILITIES, META_CLIENT_INFO, META_VERSION

TASKS = "io.modelcontextprotocol/tasks"
STATELESS = "2026-07-28"
DECLARING: dict[str, Any] = {
    "elicitation": {},
    "sampling": {},
    "roots": {},
    "extensions": {TASKS: {}},
}
META = {
    META_VERSION: STATELESS,
    META_CLIENT_INFO: {"name": "raw", "version": "1"},
    META_CAPABILITIES: DECLARING,
}
PLAIN_META = {**META, META_CAPABILITIES: {"elicitation": {}}}
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
TASK_ID = re.compile(r"[A-Za-z0-9_-]{32}")
REQUIRED: dict[str, Any] = {"requiredCapabilities": {"extensions": {TASKS: {}}}}


class Name(BaseModel):
    name: str


class Probe:
    """What the tools of :func:`make_app` share with a test: gates to release them, what was
    cancelled, a thread gate for the sync tool."""

    def __init__(self) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.cancelled: list[str] = []
        self.ended: dict[str, asyncio.Event] = {}
        self.thread_gate = threading.Event()
        self.thread_done = threading.Event()

    def gate(self, label: str) -> asyncio.Event:
        return self.gates.setdefault(label, asyncio.Event())

    def end(self, label: str) -> asyncio.Event:
        return self.ended.setdefault(label, asyncio.Event())


def make_app(**options: Any) -> tuple[App, Probe]:
    app = App("tasks", "1", options=ServerOptions(**options))
    probe = Probe()

    @app.tool
    def add(a: int, b: int) -> int:
        """Adds (never a task)."""
        return a + b

    @app.tool(task="optional")
    async def hold(label: str, ctx: Context) -> str:
        """Waits until the test releases it."""
        await ctx.report_progress(1, 2, message=f"{label} is waiting")
        await ctx.info("never sent for a task")
        try:
            await probe.gate(label).wait()
        except asyncio.CancelledError:
            probe.cancelled.append(label)
            raise
        finally:
            probe.end(label).set()
        return f"released {label}"

    @app.tool(task="optional")
    def double(n: int) -> int:
        """Doubles, in the worker pool."""
        return n * 2

    @app.tool(task="optional")
    def block() -> str:
        """Blocks its worker thread until the test releases it."""
        probe.thread_gate.wait(10)
        probe.thread_done.set()
        return "unblocked"

    @app.tool(task="optional", task_ttl_ms=5_000, poll_interval_ms=250)
    async def ask(label: str, ctx: Context) -> str:
        """Asks the user's name."""
        answer = await ctx.elicit(f"{label}: your name?", Name)
        return f"{label}: {answer.content.name if answer.content else answer.action}"

    @app.tool(task="optional")
    async def ask_all(ctx: Context) -> str:
        """Asks three things at once."""
        name, sampled, roots = await asyncio.gather(
            ctx.elicit("Name?", Name, key="who"),
            ctx.sample("Say hi", max_tokens=5, key="hi"),
            ctx.list_roots(key="where"),
        )
        assert name.content is not None
        return f"{name.content.name} {sampled['content']['text']} {roots[0]['uri']}"

    _add_ending_tools(app, probe)
    return app, probe


def _add_ending_tools(app: App, probe: Probe) -> None:
    @app.tool(task="required")
    async def fails() -> str:
        """Fails as a tool."""
        raise ToolError("it did not work")

    @app.tool(task="optional")
    async def crashes() -> str:
        """Raises an unexpected exception (masked)."""
        raise RuntimeError("secret detail")

    @app.tool(task="optional")
    async def breaks() -> str:
        """Fails at the protocol level."""
        raise ProtocolError("broken on purpose", code=-32603, data={"why": "test"})

    @app.tool(task="required")
    async def later(ctx: Context) -> str:
        """Asks in the call, then goes on as a task until released."""
        answer = await ctx.elicit("Your name?", Name, key="user_name")
        await ctx.continue_as_task()
        await probe.gate("later").wait()
        return f"Hello, {answer.content.name if answer.content else 'nobody'}"

    @app.tool(task="optional")
    async def maybe_later(ctx: Context) -> str:
        """Calls continue_as_task, which does nothing without the extension."""
        await ctx.continue_as_task()
        return "inline"


def created_shape(created: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The ``CreateTaskResult`` ``created`` should be, its id and times checked by pattern."""
    assert TASK_ID.fullmatch(created["taskId"]), created
    assert ISO.fullmatch(created["createdAt"])
    assert ISO.fullmatch(created["lastUpdatedAt"])
    return {
        "taskId": created["taskId"],
        "createdAt": created["createdAt"],
        "lastUpdatedAt": created["lastUpdatedAt"],
        **fields,
    }
