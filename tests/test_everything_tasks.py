"""examples/everything.py's task fixtures, as the conformance suite's tasks-* scenarios use them
(2026-07-28, the io.modelcontextprotocol/tasks extension)."""

from __future__ import annotations

from typing import Any

from features_support import STATELESS, rpc_error, run, settle

from examples.everything import app
from mcpkit.testing import Client

TASKS = "io.modelcontextprotocol/tasks"


def client(**options: Any) -> Client:
    return Client(app, protocol_version=STATELESS, **options)


def test_greet_is_never_a_task_and_slow_compute_is_one_when_declared() -> None:
    with client() as c:
        greeted = c.call_tool("greet", {"name": "World"}, task=True)
        assert greeted["content"] == [{"type": "text", "text": "Hello, World!"}]
        inline = c.call_tool("slow_compute", {"seconds": 0, "label": "x"})
        assert inline["content"] == [{"type": "text", "text": "Computed 'x' after 0.0 s"}]
        created = c.call_tool("slow_compute", {"seconds": 0, "label": "y"}, task=True)
        assert created["resultType"] == "task"
        assert c.wait_task(created["taskId"]).data == "Computed 'y' after 0.0 s"


def test_failing_and_protocol_error_jobs() -> None:
    async def scenario() -> None:
        async with client() as c:
            error = await rpc_error(c.call_tool("failing_job", {}))
            assert (error.code, error.data) == (
                -32021,
                {"requiredCapabilities": {"extensions": {TASKS: {}}}},
            )
            broken = await c.call_tool("protocol_error_job", {}, task=True)
            await settle()
            task = await c.get_task(broken["taskId"])
            assert (task["status"], task["error"]) == (
                "failed",
                {"code": -32603, "message": "protocol_error_job broke at the protocol level"},
            )

    run(scenario)


def test_input_fixtures_park_and_resume() -> None:
    async def scenario() -> None:
        async with client(capabilities={"elicitation": {}}) as c:
            confirm = await c.call_tool("confirm_delete", {"filename": "a.txt"}, task=True)
            multi = await c.call_tool("multi_input", {}, task=True)
            await settle()
            asked = (await c.get_task(confirm["taskId"]))["inputRequests"]
            pending = (await c.get_task(multi["taskId"]))["inputRequests"]
            assert len(asked) == 1
            assert len(pending) == 2
            answer = {"action": "accept", "content": {"confirm": True}}
            await c.update_task(confirm["taskId"], dict.fromkeys(asked, answer))
            assert (await c.wait_task(confirm["taskId"])).data == "Deleted a.txt"
            first, second = pending
            part = {"action": "accept", "content": {"name": "one", "confirm": True}}
            await c.update_task(multi["taskId"], {first: part})
            left = (await c.get_task(multi["taskId"]))["inputRequests"]
            assert list(left) == [second]
            await c.update_task(multi["taskId"], {second: {**part, "content": {"name": "two"}}})
            assert (await c.wait_task(multi["taskId"])).data == "Got one and two"

    run(scenario)


def test_tool_with_task_asks_in_the_call_then_becomes_a_task() -> None:
    name = {"action": "accept", "content": {"name": "Alice"}}
    with client(elicitation=lambda params: name) as c:
        created = c.call_tool("test_tool_with_task", {}, task=True)
        assert created["resultType"] == "task"
        assert c.wait_task(created["taskId"]).data == "Hello, Alice! (from a task)"
