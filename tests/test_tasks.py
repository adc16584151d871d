"""Tasks (the io.modelcontextprotocol/tasks extension, 2026-07-28) on the test client: creating,
reading, answering and cancelling tasks, their errors, and many at once."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from features_support import HANDSHAKE, rpc_error, run, settle
from http_support import META
from tasks_support import DECLARING, REQUIRED, STATELESS, TASKS, created_shape, make_app

from mcpkit import App, Context, ProtocolError, ServerOptions
from mcpkit.protocol.request import ActingFor
from mcpkit.testing import Client, RPCError

INFO = {"io.modelcontextprotocol/serverInfo": {"name": "tasks", "version": "1"}}
ACK = {"resultType": "complete", "_meta": INFO}
MASKED = re.compile(r"Tool 'crashes' failed with an internal error \(reference [0-9a-f]{8}\)\.")


def client(app: App, **options: Any) -> Client:
    return Client(
        app,
        protocol_version=STATELESS,
        elicitation=lambda params: {"action": "accept", "content": {"name": "Ada"}},
        sampling=lambda params: {"role": "assistant", "content": {"type": "text", "text": "hi"}},
        roots=lambda params: {"roots": [{"uri": "file:///work"}]},
        **options,
    )


def detailed(task: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """What ``tasks/get`` answers for ``task`` (a ``CreateTaskResult``) now, given ``fields``."""
    base = {k: v for k, v in task.items() if k not in ("resultType", "content", "_meta")}
    return {**base, "lastUpdatedAt": fields.pop("lastUpdatedAt"), **fields, **ACK}


# ------------------------------------------------------------------- advertising


def test_discover_advertises_the_extension_and_initialize_does_not() -> None:
    app, _ = make_app()
    with Client(app, protocol_version=STATELESS) as c:
        caps = c.request("server/discover")["capabilities"]
    assert caps["extensions"] == {TASKS: {}}
    assert "tasks" not in caps
    with Client(app) as c:
        assert c.initialize_result is not None
        assert "extensions" not in c.initialize_result["capabilities"]
    plain = App("plain", "1")
    plain.add_tool(lambda: 1, name="one", description="One.")
    with Client(plain, protocol_version=STATELESS) as c:
        assert "extensions" not in c.request("server/discover")["capabilities"]


# ------------------------------------------------------------------- creating


def test_an_optional_tool_answers_a_flat_create_task_result_readable_at_once() -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            created = await c.call_tool("hold", {"label": "a"}, task=True)
            assert created == created_shape(
                created,
                status="working",
                ttlMs=3_600_000,
                pollIntervalMs=1_000,
                resultType="task",
                content=[],
                _meta=INFO,
            )
            assert created["createdAt"] == created["lastUpdatedAt"]
            await settle()
            task = await c.get_task(created["taskId"])
            assert task == detailed(
                created,
                lastUpdatedAt=task["lastUpdatedAt"],
                statusMessage="a is waiting",
            )
            probe.gate("a").set()
            result = await c.wait_task(created["taskId"])
            assert result == {"content": [{"type": "text", "text": "released a"}], "isError": False}
            done = await c.get_task(created["taskId"])
            assert done == detailed(
                created,
                lastUpdatedAt=done["lastUpdatedAt"],
                status="completed",
                statusMessage="a is waiting",
                result=dict(result),
            )
            assert c.notifications == []  # neither progress nor logs travel for a task

    run(scenario)


def test_a_sync_tool_runs_in_the_worker_pool_as_a_task() -> None:
    app, _ = make_app()
    with client(app) as c:
        created = c.call_tool("double", {"n": 4}, task=True)
        assert created["resultType"] == "task"
        assert c.wait_task(created["taskId"]) == {
            "content": [{"type": "text", "text": '{"result":8}'}],
            "structuredContent": {"result": 8},
            "isError": False,
        }


def test_task_settings_come_from_the_tool_then_the_options() -> None:
    app, _ = make_app(task_ttl_ms=60_000, task_poll_interval_ms=500)
    with client(app) as c:
        own = c.call_tool("ask", {"label": "x"}, task=True)
        default = c.call_tool("double", {"n": 1}, task=True)
    assert (own["ttlMs"], own["pollIntervalMs"]) == (5_000, 250)
    assert (default["ttlMs"], default["pollIntervalMs"]) == (60_000, 500)
    unlimited, _ = make_app(task_ttl_ms=None)
    with client(unlimited) as c:
        assert c.call_tool("double", {"n": 1}, task=True)["ttlMs"] is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task_ttl_ms": 0}, "task_ttl_ms must be a positive integer, not 0"),
        ({"task_ttl_ms": 1.5}, "task_ttl_ms must be a positive integer, not 1.5"),
        ({"task_poll_interval_ms": None}, "task_poll_interval_ms must be a positive integer"),
        ({"task_poll_interval_ms": True}, "task_poll_interval_ms must be a positive integer"),
    ],
)
def test_server_options_check_task_settings(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ServerOptions(**options)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"task": "always"}, 'task must be "forbidden", "optional" or "required", not \'always\''),
        ({"task": True}, 'task must be "forbidden", "optional" or "required", not True'),
        ({"task_ttl_ms": 0}, "task_ttl_ms must be a positive integer, not 0"),
        ({"poll_interval_ms": "1s"}, "poll_interval_ms must be a positive integer, not '1s'"),
    ],
)
def test_tool_options_check_task_settings(options: dict[str, Any], message: str) -> None:
    from mcpkit import DefinitionError

    app = App("bad", "1")
    with pytest.raises(DefinitionError, match=re.escape(f"tool 'f': {message}")):
        app.add_tool(lambda: 1, name="f", description="F.", **options)


# ------------------------------------------------------------ without the extension


def test_without_the_extension_an_optional_tool_runs_inline_in_both_eras() -> None:
    app, _ = make_app()
    for version in (STATELESS, HANDSHAKE):
        with Client(app, protocol_version=version) as c:
            result = c.call_tool("double", {"n": 2})
            assert result["structuredContent"] == {"result": 4}
            assert "taskId" not in result
            assert c.call_tool("maybe_later", {})["content"] == [{"type": "text", "text": "inline"}]


@pytest.mark.parametrize("version", [STATELESS, HANDSHAKE])
def test_a_required_tool_without_the_extension_is_minus_32021(version: str) -> None:
    app, _ = make_app()

    async def scenario() -> None:
        caps: dict[str, Any] = {"extensions": {TASKS: {}}} if version == HANDSHAKE else {}
        async with Client(app, protocol_version=version, capabilities=caps) as c:
            error = await rpc_error(c.call_tool("fails", {}))
            assert (error.code, error.data) == (-32021, REQUIRED)
            assert error.message == (
                f"Missing required client capability: tool 'fails' needs the {TASKS} extension "
                "(declare it in the request's client capabilities, protocol 2026-07-28)"
            )

    run(scenario)


def test_a_legacy_task_param_is_ignored() -> None:
    app, _ = make_app()
    with client(app, capabilities=DECLARING) as c:
        legacy = {"ttl": 60_000, "pollInterval": 100}
        result = c.request(
            "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "task": legacy}
        )
        held = c.request(
            "tools/call", {"name": "hold", "arguments": {"label": "l"}, "task": legacy}
        )
    assert result["structuredContent"] == {"result": 3}
    assert result["resultType"] == "complete"
    assert held["resultType"] == "task"


def test_tasks_methods_need_the_extension_before_any_lookup() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with Client(app, protocol_version=STATELESS) as c:
            for method, params in (
                ("tasks/get", {"taskId": "nope"}),
                ("tasks/update", {"taskId": "nope", "inputResponses": {}}),
                ("tasks/cancel", {"taskId": "nope"}),
                ("tasks/get", {}),
            ):
                error = await rpc_error(c.request(method, params))
                assert (error.code, error.data) == (-32021, REQUIRED), method
        async with Client(app) as c:  # the handshake era has no tasks methods
            error = await rpc_error(c.request("tasks/get", {"taskId": "nope"}))
            assert error.code == -32601

    run(scenario)


# ---------------------------------------------------------------------- errors


def test_unknown_ids_removed_methods_and_bad_params() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app, capabilities=DECLARING) as c:
            for call in (c.get_task("nope"), c.update_task("nope", {}), c.cancel_task("nope")):
                error = await rpc_error(call)
                assert (error.code, error.message) == (
                    -32602,
                    "Invalid params: unknown task 'nope' (not found or expired)",
                )
            for method in ("tasks/result", "tasks/list"):
                error = await rpc_error(c.request(method, {"taskId": "nope"}))
                assert (error.code, error.message) == (-32601, f"Method not found: {method}")
            error = await rpc_error(c.request("tasks/get", {"taskId": 7}))
            assert (error.code, error.message) == (
                -32602,
                "Invalid params: 'taskId' must be a string",
            )
            created = await c.call_tool("ask", {"label": "p"}, task=True)
            error = await rpc_error(c.request("tasks/update", {"taskId": created["taskId"]}))
            assert error.message == "Invalid params: 'inputResponses' must be an object"

    run(scenario)


def test_tool_errors_complete_and_protocol_errors_fail() -> None:
    app, _ = make_app()
    with client(app) as c:
        failing = c.call_tool("fails", {}, task=True)
        assert c.wait_task(failing["taskId"]) == {
            "content": [{"type": "text", "text": "it did not work"}],
            "isError": True,
        }
        crashing = c.call_tool("crashes", {}, task=True)
        result = c.wait_task(crashing["taskId"])
        assert result["isError"] is True
        assert MASKED.fullmatch(result["content"][0]["text"])
        breaking = c.call_tool("breaks", {}, task=True)
        with pytest.raises(RPCError) as caught:
            c.wait_task(breaking["taskId"])
        task = c.get_task(breaking["taskId"])
    assert caught.value.args == ("-32603 broken on purpose",)
    assert task == detailed(
        breaking,
        lastUpdatedAt=task["lastUpdatedAt"],
        status="failed",
        statusMessage="broken on purpose",
        error={"code": -32603, "message": "broken on purpose", "data": {"why": "test"}},
    )


def test_a_timeout_completes_the_task_with_the_timeouts_error_result() -> None:
    app = App("slow", "1")

    @app.tool(task="optional", timeout=0.01)
    async def stuck() -> str:
        """Never finishes."""
        await asyncio.Event().wait()
        return "never"

    with client(app) as c:
        created = c.call_tool("stuck", {}, task=True)
        assert c.wait_task(created["taskId"]) == {
            "content": [{"type": "text", "text": "Tool 'stuck' timed out after 0.01 s"}],
            "isError": True,
        }


def test_continue_as_task_in_a_tool_that_never_runs_as_a_task_is_a_definition_error() -> None:
    from mcpkit import DefinitionError

    app = App("bad", "1")

    async def never(ctx: Context) -> str:
        """Would silently stay inline."""
        await ctx.continue_as_task()
        return "x"

    message = (
        "tool 'never' calls ctx.continue_as_task(), which does nothing in a tool that never runs "
        'as a task; declare @app.tool(task="optional") or task="required"'
    )
    with pytest.raises(DefinitionError, match=re.escape(message)):
        app.add_tool(never)
    app.add_tool(never, task="optional")  # fine once it may run as a task


def test_a_result_json_cannot_carry_completes_the_task_as_the_call_would_answer() -> None:
    app = App("nan", "1")

    @app.tool(task="optional")
    def not_a_number() -> float:
        """Returns NaN."""
        return float("nan")

    with client(app) as c:
        inline = c.request("tools/call", {"name": "not_a_number", "arguments": {}})
        created = c.call_tool("not_a_number", {}, task=True)
        result = c.wait_task(created["taskId"])
    expected = {k: v for k, v in inline.items() if k not in ("resultType", "_meta")}
    assert result == expected
    assert result["isError"] is True


def test_an_error_whose_data_json_cannot_carry_fails_the_task_without_its_data() -> None:
    """A ProtocolError with NaN in its data fails the task with the code and message only, as
    the same error answering a request would; ``tasks/get`` keeps working."""
    app = App("nan-error", "1")

    @app.tool(task="optional")
    def refuses() -> str:
        """Raises an error with data JSON cannot carry."""
        raise ProtocolError("Not now", {"retry": float("nan")}, code=-32001)

    with client(app) as c:
        params = {"name": "refuses", "arguments": {}, "_meta": META}
        inline = c.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
        created = c.call_tool("refuses", {}, task=True)
        with pytest.raises(RPCError) as failed:
            c.wait_task(created["taskId"])
        task = c.get_task(created["taskId"])
    assert inline["error"] == {"code": -32001, "message": "Not now"}
    assert failed.value.error == {"code": -32001, "message": "Not now"}
    assert (task["status"], task["error"]) == ("failed", inline["error"])


def test_a_question_json_cannot_carry_is_the_tools_failure_not_a_broken_task() -> None:
    """As a request to the client that JSON cannot carry raises to the tool that sent it, a
    task's question does: the task completes with the masked failure; ``tasks/get`` works."""
    app = App("nan-question", "1")

    @app.tool(task="optional")
    async def asks(ctx: Context) -> str:
        """Asks the model with a temperature JSON cannot carry."""
        await ctx.sample("hi", max_tokens=5, temperature=float("nan"))
        return "answered"

    with client(app) as c:
        created = c.call_tool("asks", {}, task=True)
        result = c.wait_task(created["taskId"])
    assert result.is_error
    assert re.fullmatch(
        r"Tool 'asks' failed with an internal error \(reference [0-9a-f]{8}\)\.", result.text
    )


def test_tasks_beyond_max_tasks_are_refused_until_one_ends() -> None:
    """Background work is bounded: past ``max_tasks`` running tasks a call that would start
    one is refused (nothing runs), and it is accepted again once one ends."""
    app = App("bounded", "1", options=ServerOptions(max_tasks=2))
    release = asyncio.Event()
    started: list[int] = []

    @app.tool(task="optional")
    async def hold(n: int) -> int:
        """Waits for the test."""
        started.append(n)
        await release.wait()
        return n

    async def scenario() -> tuple[list[str], Any, Any]:
        async with Client(app, protocol_version=STATELESS) as c:
            first = await c.call_tool("hold", {"n": 1}, task=True)
            await c.call_tool("hold", {"n": 2}, task=True)
            refused = await rpc_error(c.call_tool("hold", {"n": 3}, task=True))
            await c.cancel_task(first["taskId"])
            third = await c.call_tool("hold", {"n": 4}, task=True)
            release.set()
            done = await c.wait_task(third["taskId"])
            await settle()
            return [str(n) for n in started], refused, done.data

    names, refused, done = run(scenario)
    assert (refused.code, refused.message, refused.data) == (
        -32000,
        "Too many tasks running (at most 2); try again when one has finished",
        {"maxTasks": 2},
    )
    assert "3" not in names  # the refused call never ran
    assert "4" in names
    assert done == 4


def test_max_tasks_must_be_a_positive_integer() -> None:
    for wrong in (0, -1, 1.5, True, None):
        with pytest.raises(ValueError, match="max_tasks must be a positive integer"):
            ServerOptions(max_tasks=wrong)  # type: ignore[arg-type]


def test_one_caller_cannot_take_every_task_slot() -> None:
    """``max_tasks_per_caller`` bounds each caller's running tasks: one that keeps tasks
    waiting is refused past its share while another caller's tasks still start."""
    app = App("fair", "1", options=ServerOptions(max_tasks=10, max_tasks_per_caller=2))
    release = asyncio.Event()

    @app.tool(task="optional")
    async def hold() -> str:
        """Waits for the test."""
        await release.wait()
        return "done"

    async def scenario() -> tuple[Any, str]:
        async with Client(app, protocol_version=STATELESS) as c:  # one server, two callers
            with ActingFor({"sub": "ada"}):
                await c.call_tool("hold", {}, task=True)
                await c.call_tool("hold", {}, task=True)
                refused = await rpc_error(c.call_tool("hold", {}, task=True))
            with ActingFor({"sub": "bob"}):
                started = await c.call_tool("hold", {}, task=True)
                release.set()
                return refused, (await c.wait_task(started["taskId"])).text

    refused, bobs = run(scenario)
    assert (refused.code, refused.message, refused.data) == (
        -32000,
        "Too many tasks running for this caller (at most 2); try again when one has finished",
        {"maxTasksPerCaller": 2},
    )
    assert bobs == "done"
