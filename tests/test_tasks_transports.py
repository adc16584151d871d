"""The tasks rules, one body run over stdio and over Streamable HTTP (the same messages as the
test client's tests in test_tasks*.py)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from asgi_support import request, run
from features_support import settle
from http_support import modern_headers
from stdio_support import serve_on_pipes
from tasks_support import PLAIN_META, REQUIRED, make_app
from test_tasks_wire import Pipe, call, rpc

from mcpkit import App

Ask = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
NAMED = {
    "tools/call": "name",
    **dict.fromkeys(("tasks/get", "tasks/update", "tasks/cancel"), "taskId"),
}


@contextlib.asynccontextmanager
async def connected(app: App, transport: str) -> AsyncIterator[Ask]:
    """``ask(message) -> answer`` over ``transport``."""
    if transport == "stdio":
        async with serve_on_pipes(app) as (server, write, reader):
            pipe = Pipe(write, reader)
            yield pipe.ask
            pipe.out.close()
            await server
        return
    asgi = app.asgi(json_response=True)
    await asgi.start()

    async def ask(message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        name = message["params"].get(NAMED.get(method, ""))
        reply = await request(asgi, "POST", message, modern_headers(method, name))
        answer: dict[str, Any] = reply.json
        return answer

    try:
        yield ask
    finally:
        await asgi.aclose()


TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


@TRANSPORTS
def test_refusals(transport: str) -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with connected(app, transport) as ask:
            required = await ask(call(1, "fails", {}, PLAIN_META))
            assert (required["error"]["code"], required["error"]["data"]) == (-32021, REQUIRED)
            for number, method in enumerate(("tasks/result", "tasks/list"), start=2):
                removed = await ask(rpc(number, method, {"taskId": "x"}))
                assert removed["error"] == {
                    "code": -32601,
                    "message": f"Method not found: {method}",
                }
            bad = await ask(rpc(4, "tasks/update", {"taskId": "x", "inputResponses": []}))
            assert bad["error"]["code"] == -32602

    run(scenario)


@TRANSPORTS
def test_status_message_legacy_param_and_cancelling_a_finished_task(transport: str) -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with connected(app, transport) as ask:
            legacy = call(1, "add", {"a": 1, "b": 1})
            legacy["params"]["task"] = {"ttl": 1000}
            assert (await ask(legacy))["result"]["structuredContent"] == {"result": 2}
            held = (await ask(call(2, "hold", {"label": "m"})))["result"]["taskId"]
            await settle()
            working = (await ask(rpc(3, "tasks/get", {"taskId": held})))["result"]
            assert (working["status"], working["statusMessage"]) == ("working", "m is waiting")
            probe.gate("m").set()
            await settle()
            done = (await ask(rpc(4, "tasks/get", {"taskId": held})))["result"]
            assert done["result"]["content"] == [{"type": "text", "text": "released m"}]
            ack = await ask(rpc(5, "tasks/cancel", {"taskId": held}))
            assert ack["result"]["resultType"] == "complete"
            after = (await ask(rpc(6, "tasks/get", {"taskId": held})))["result"]
            assert after["status"] == "completed"

    run(scenario)


@TRANSPORTS
def test_continue_as_task_and_failures(transport: str) -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with connected(app, transport) as ask:
            first = (await ask(call(1, "later", {})))["result"]
            assert list(first["inputRequests"]) == ["user_name"]
            retry = call(2, "later", {})
            retry["params"]["inputResponses"] = {
                "user_name": {"action": "accept", "content": {"name": "Ada"}}
            }
            retry["params"]["requestState"] = first["requestState"]
            created = (await ask(retry))["result"]
            assert (created["resultType"], created["content"]) == ("task", [])
            probe.gate("later").set()
            crashed = (await ask(call(3, "crashes", {})))["result"]["taskId"]
            broken = (await ask(call(4, "breaks", {})))["result"]["taskId"]
            await settle()
            later = (await ask(rpc(5, "tasks/get", {"taskId": created["taskId"]})))["result"]
            assert later["result"]["content"] == [{"type": "text", "text": "Hello, Ada"}]
            masked = (await ask(rpc(6, "tasks/get", {"taskId": crashed})))["result"]
            assert (masked["status"], masked["result"]["isError"]) == ("completed", True)
            failed = (await ask(rpc(7, "tasks/get", {"taskId": broken})))["result"]
            assert failed["error"] == {
                "code": -32603,
                "message": "broken on purpose",
                "data": {"why": "test"},
            }

    run(scenario)
