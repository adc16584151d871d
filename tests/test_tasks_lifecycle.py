"""Tasks over time on the test client: input rounds, continue_as_task, cancellation, expiry,
principals, status notifications, and many tasks at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from features_support import rpc_error, run, settle
from tasks_support import DECLARING, STATELESS, TASKS, Name, make_app

from mcpkit import Context
from mcpkit.protocol.request import ActingFor
from mcpkit.protocol.tasks import store as store_module
from mcpkit.protocol.versions import META_CAPABILITIES, META_SUBSCRIPTION, META_VERSION
from mcpkit.testing import Client

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def client(app: Any, **options: Any) -> Client:
    return Client(app, protocol_version=STATELESS, capabilities=DECLARING, **options)


def asked(message: str) -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": NAME_SCHEMA, "mode": "form"},
    }


def accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


async def parked(c: Client, task_id: str) -> dict[str, Any]:
    """The task once it waits for input (it parks within a few loop turns)."""
    await settle()
    task = await c.get_task(task_id)
    assert task["status"] == "input_required", task
    return task


# ------------------------------------------------------------------- input rounds


def test_an_elicitation_parks_the_task_and_an_update_resumes_it_in_place() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            created = await c.call_tool("ask", {"label": "q"}, task=True)
            task = await parked(c, created["taskId"])
            assert task["inputRequests"] == {"elicitation-1": asked("q: your name?")}
            ack = await c.update_task(created["taskId"], {"unknown": accept("x")})
            assert {k: v for k, v in ack.items() if k != "_meta"} == {"resultType": "complete"}
            again = await c.get_task(created["taskId"])
            assert again["status"] == "input_required"  # unknown keys are acked and ignored
            await c.update_task(created["taskId"], {"elicitation-1": accept("Ada")})
            result = await c.wait_task(created["taskId"])
            assert result["content"] == [{"type": "text", "text": "q: Ada"}]

    run(scenario)


def test_questions_asked_together_are_answered_one_by_one() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            task_id = (await c.call_tool("ask_all", {}, task=True))["taskId"]
            task = await parked(c, task_id)
            assert sorted(task["inputRequests"]) == ["hi", "where", "who"]
            assert task["inputRequests"]["hi"]["method"] == "sampling/createMessage"
            assert task["inputRequests"]["where"] == {"method": "roots/list", "params": {}}
            await c.update_task(task_id, {"who": accept("Ada"), "hi": "not an object"})
            task = await c.get_task(task_id)
            assert (task["status"], sorted(task["inputRequests"])) == (
                "input_required",
                ["hi", "where"],
            )
            text = {"role": "assistant", "content": {"type": "text", "text": "hi"}}
            await c.update_task(task_id, {"hi": text, "who": accept("Bob")})
            await c.update_task(task_id, {"where": {"roots": [{"uri": "file:///w"}]}})
            result = await c.wait_task(task_id)
            assert result["content"] == [{"type": "text", "text": "Ada hi file:///w"}]

    run(scenario)


def test_continue_as_task_asks_in_the_call_then_runs_on_as_a_task() -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            first = await c.request("tools/call", {"name": "later", "arguments": {}})
            assert first["resultType"] == "input_required"
            assert "taskId" not in first
            assert first["inputRequests"] == {"user_name": asked("Your name?")}
            second = await c.request(
                "tools/call",
                {
                    "name": "later",
                    "arguments": {},
                    "inputResponses": {"user_name": accept("Ada")},
                    "requestState": first["requestState"],
                },
            )
            assert second["resultType"] == "task"
            assert "requestState" not in second
            assert "inputRequests" not in second
            assert (await c.get_task(second["taskId"]))["status"] == "working"
            probe.gate("later").set()
            result = await c.wait_task(second["taskId"])
            assert result["content"] == [{"type": "text", "text": "Hello, Ada"}]

    run(scenario)


def test_continue_as_task_without_a_question_becomes_a_task_at_that_line() -> None:
    app, _ = make_app()
    with client(app) as c:
        created = c.call_tool("maybe_later", {}, task=True)
        assert created["resultType"] == "task"
        assert c.wait_task(created["taskId"])["content"] == [{"type": "text", "text": "inline"}]


# --------------------------------------------------------------------- cancelling


def test_cancel_really_cancels_the_coroutine_and_acks_terminal_tasks_too() -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            task_id = (await c.call_tool("hold", {"label": "c"}, task=True))["taskId"]
            await settle()
            ack = await c.cancel_task(task_id)
            assert ack["resultType"] == "complete"
            assert set(ack) == {"resultType", "_meta"}
            await asyncio.wait_for(probe.end("c").wait(), 5)
            assert probe.cancelled == ["c"]
            task = await c.get_task(task_id)
            assert task["status"] == "cancelled"
            assert "result" not in task
            assert "error" not in task
            assert (await c.cancel_task(task_id))["resultType"] == "complete"
            done_id = (await c.call_tool("double", {"n": 1}, task=True))["taskId"]
            await c.wait_task(done_id)
            await c.cancel_task(done_id)
            assert (await c.get_task(done_id))["status"] == "completed"
            with pytest.raises(RuntimeError, match=f"task {task_id} was cancelled"):
                await c.wait_task(task_id)

    run(scenario)


def test_a_cancelled_sync_tools_result_is_dropped() -> None:
    app, probe = make_app()
    with client(app) as c:
        task_id = c.call_tool("block", {}, task=True)["taskId"]
        c.cancel_task(task_id)
        probe.thread_gate.set()
        assert probe.thread_done.wait(5)
        task = c.get_task(task_id)
    assert task["status"] == "cancelled"
    assert "result" not in task


def test_cancelling_a_parked_task_ends_its_question() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            task_id = (await c.call_tool("ask", {"label": "z"}, task=True))["taskId"]
            await parked(c, task_id)
            await c.cancel_task(task_id)
            task = await c.get_task(task_id)
            assert task["status"] == "cancelled"
            assert "inputRequests" not in task
            await c.update_task(task_id, {"elicitation-1": accept("late")})  # acked, ignored
            assert (await c.get_task(task_id))["status"] == "cancelled"

    run(scenario)


def test_stopping_the_server_cancels_running_tasks() -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            await c.call_tool("hold", {"label": "s"}, task=True)
            await settle()
        assert probe.cancelled == ["s"]

    run(scenario)


# ------------------------------------------------------------------------ owners


def test_a_task_of_another_principal_reads_as_unknown() -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            with ActingFor({"sub": "ada"}):
                task_id = (await c.call_tool("hold", {"label": "p"}, task=True))["taskId"]
            with ActingFor({"sub": "bob"}):
                for call in (
                    c.get_task(task_id),
                    c.update_task(task_id, {}),
                    c.cancel_task(task_id),
                ):
                    assert (await rpc_error(call)).code == -32602
            error = await rpc_error(c.get_task(task_id))  # no principal at all
            assert error.code == -32602
            with ActingFor({"sub": "ada", "scope": "refreshed"}):
                assert (await c.get_task(task_id))["status"] == "working"
            probe.gate("p").set()

    run(scenario)


# ------------------------------------------------------------------------ expiry


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def time(self) -> float:
        return self.now


def test_tasks_expire_after_their_ttl(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(store_module, "time", clock)
    app, probe = make_app(task_ttl_ms=1_000)

    async def scenario() -> None:
        async with client(app) as c:
            running = [
                (await c.call_tool("hold", {"label": f"e{i}"}, task=True)) for i in range(20)
            ]
            done = await c.call_tool("double", {"n": 1}, task=True)
            await c.wait_task(done["taskId"])
            await settle()
            clock.now += 0.999
            assert (await c.get_task(running[0]["taskId"]))["status"] == "working"
            clock.now += 0.001
            for task in [*running, done]:
                error = await rpc_error(c.get_task(task["taskId"]))
                assert error.message == (
                    f"Invalid params: unknown task {task['taskId']!r} (not found or expired)"
                )
            await settle()
            assert sorted(probe.cancelled) == sorted(f"e{i}" for i in range(20))

    run(scenario)


def test_creating_a_task_drops_expired_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(store_module, "time", clock)
    app, probe = make_app(task_ttl_ms=1_000)

    async def scenario() -> None:
        async with client(app) as c:
            for i in range(5):
                await c.call_tool("hold", {"label": f"d{i}"}, task=True)
            await settle()
            store = c._server.runtime.tasks.store if c._server else None
            assert len(store) == 5  # type: ignore[arg-type]
            clock.now += 2
            await c.call_tool("double", {"n": 1}, task=True)
            assert len(store) == 1  # type: ignore[arg-type]
            await settle()
            assert len(probe.cancelled) == 5

    run(scenario)


# ------------------------------------------------------------ status notifications


def listen(request_id: str, task_ids: Any, caps: dict[str, Any]) -> dict[str, Any]:
    meta = {META_VERSION: STATELESS, META_CAPABILITIES: caps}
    params = {"_meta": meta, "notifications": {"taskIds": task_ids}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}


def test_status_changes_reach_listen_streams_that_asked_for_the_task() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            task_id = (await c.call_tool("ask", {"label": "n"}, task=True))["taskId"]
            await parked(c, task_id)
            with ActingFor({"sub": "eve"}):
                other = (await c.call_tool("double", {"n": 1}, task=True))["taskId"]
            wanted = [task_id, other, "unknown", 7]
            stream = asyncio.ensure_future(c.send(listen("l-1", wanted, DECLARING)))
            await settle()
            assert c.notifications[0]["params"]["notifications"] == {"taskIds": [task_id]}
            await c.update_task(task_id, {"elicitation-1": accept("Ada")})
            await c.wait_task(task_id)
            await settle()
            sent = [n["params"] for n in c.notifications[1:]]
            assert [n["method"] for n in c.notifications[1:]] == ["notifications/tasks"] * 2
            assert [(p["taskId"], p["status"]) for p in sent] == [
                (task_id, "working"),
                (task_id, "completed"),
            ]
            assert sent[1]["_meta"] == {META_SUBSCRIPTION: "l-1"}
            assert sent[1]["result"]["content"] == [{"type": "text", "text": "n: Ada"}]
            polled = await c.get_task(task_id)
            del polled["_meta"], polled["resultType"]
            assert sent[1] == {"_meta": {META_SUBSCRIPTION: "l-1"}, **polled}
            stream.cancel()

    run(scenario)


def test_asking_for_task_notifications_needs_the_extension() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            answer = await c.send(listen("l-2", ["x"], {}))
            assert answer["error"]["code"] == -32021
            assert answer["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
            answer = await c.send(listen("l-3", "x", DECLARING))
            assert answer["error"] == {
                "code": -32602,
                "message": "Invalid params: 'notifications.taskIds' must be an array",
            }

    run(scenario)


# --------------------------------------------------------------------- many at once


def test_many_tasks_wait_for_input_and_each_gets_its_own_answer() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            created = await asyncio.gather(
                *(c.call_tool("ask", {"label": f"t{i}"}, task=True) for i in range(40))
            )
            ids = [task["taskId"] for task in created]
            assert len(set(ids)) == 40
            await settle()
            for task_id in ids:
                assert (await c.get_task(task_id))["status"] == "input_required"
            await asyncio.gather(
                *(c.update_task(t, {"elicitation-1": accept(f"n{i}")}) for i, t in enumerate(ids))
            )
            results = await asyncio.gather(*(c.wait_task(t) for t in ids))
            assert [r["content"][0]["text"] for r in results] == [f"t{i}: n{i}" for i in range(40)]

    run(scenario)


def test_many_tasks_cancel_half_and_complete_the_rest() -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            created = await asyncio.gather(
                *(c.call_tool("hold", {"label": f"h{i}"}, task=True) for i in range(40))
            )
            await settle()
            ids = [task["taskId"] for task in created]
            await asyncio.gather(*(c.cancel_task(t) for t in ids[::2]))
            for i in range(1, 40, 2):
                probe.gate(f"h{i}").set()
            statuses = []
            for task_id in ids[1::2]:
                statuses.append((await c.wait_task(task_id))["content"][0]["text"])
            assert statuses == [f"released h{i}" for i in range(1, 40, 2)]
            for task_id in ids[::2]:
                assert (await c.get_task(task_id))["status"] == "cancelled"
            await settle()
            assert sorted(probe.cancelled) == sorted(f"h{i}" for i in range(0, 40, 2))

    run(scenario)


def test_an_input_key_is_never_reused_within_a_task() -> None:
    app, _ = make_app()

    @app.tool(task="optional")
    async def twice(ctx: Context) -> str:
        """Asks the same key twice."""
        first = await ctx.elicit("First?", Name, key="same")
        second = await ctx.elicit("Second?", Name, key="same")
        assert first.content is not None
        assert second.content is not None
        return f"{first.content.name} {second.content.name}"

    async def scenario() -> None:
        async with client(app) as c:
            task_id = (await c.call_tool("twice", {}, task=True))["taskId"]
            assert list((await parked(c, task_id))["inputRequests"]) == ["same"]
            await c.update_task(task_id, {"same": accept("a")})
            await settle()
            assert list((await parked(c, task_id))["inputRequests"]) == ["same-2"]
            await c.update_task(task_id, {"same": accept("stale")})  # answered already: ignored
            await c.update_task(task_id, {"same-2": accept("b")})
            assert (await c.wait_task(task_id))["content"] == [{"type": "text", "text": "a b"}]

    run(scenario)


def test_a_tool_that_may_continue_as_task_answers_inline_when_it_does_not() -> None:
    app, _ = make_app()

    @app.tool(task="optional")
    async def maybe(big: bool, ctx: Context) -> str:
        """Becomes a task only for big jobs."""
        if big:
            await ctx.continue_as_task()
        return "big" if big else "small"

    with client(app) as c:
        small = c.call_tool("maybe", {"big": False}, task=True)
        big = c.call_tool("maybe", {"big": True}, task=True)
        assert small["content"] == [{"type": "text", "text": "small"}]
        assert small["resultType"] == "complete"
        assert big["resultType"] == "task"
        assert c.wait_task(big["taskId"]).data == "big"


def test_cancelling_the_call_before_it_becomes_a_task_cancels_the_tool() -> None:
    app, probe = make_app()

    @app.tool(task="optional")
    async def slow_start(ctx: Context) -> str:
        """Waits, then becomes a task."""
        try:
            await probe.gate("start").wait()
        except asyncio.CancelledError:
            probe.cancelled.append("start")
            raise
        await ctx.continue_as_task()
        return "started"

    async def scenario() -> None:
        async with client(app) as c:
            meta = {
                META_VERSION: STATELESS,
                META_CAPABILITIES: DECLARING,
            }
            message = {
                "jsonrpc": "2.0",
                "id": "r1",
                "method": "tools/call",
                "params": {"name": "slow_start", "arguments": {}, "_meta": meta},
            }
            answer = asyncio.ensure_future(c.send(message))
            await settle()
            cancel = {"requestId": "r1", "_meta": meta}
            await c.notify("notifications/cancelled", cancel)
            assert await answer is None  # a cancelled request is not answered
            assert probe.cancelled == ["start"]
            assert len(c._server.runtime.tasks.store) == 0  # type: ignore[union-attr,arg-type]

    run(scenario)
