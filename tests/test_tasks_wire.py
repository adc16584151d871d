"""Tasks on the wire: stdio and Streamable HTTP carry the same messages as the test client, and
HTTP adds the routing header rule (``Mcp-Name: <taskId>`` on tasks/get, update and cancel)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest
from asgi_support import request, run
from features_support import settle
from http_support import modern_headers
from stdio_support import serve_on_pipes
from tasks_support import META, PLAIN_META, REQUIRED, TASKS, created_shape, make_app

from mcpkit.protocol.versions import META_SUBSCRIPTION

INFO = {"io.modelcontextprotocol/serverInfo": {"name": "tasks", "version": "1"}}
ACK = {"resultType": "complete", "_meta": INFO}
ASKED = {
    "elicitation-1": {
        "method": "elicitation/create",
        "params": {
            "message": "w: your name?",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            "mode": "form",
        },
    }
}


def call(request_id: int, name: str, arguments: dict[str, Any], meta: Any = META) -> Any:
    params = {"name": name, "arguments": arguments, "_meta": meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def rpc(request_id: Any, method: str, params: dict[str, Any], meta: Any = META) -> Any:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": meta},
    }


class Pipe:
    """A client on a stdio server's pipes: ``ask`` writes a request and reads up to its
    answer, keeping the notifications read on the way."""

    def __init__(self, write: int, reader: asyncio.StreamReader) -> None:
        self.out = os.fdopen(write, "wb", 0)
        self.reader = reader
        self.notes: list[dict[str, Any]] = []

    def write(self, message: Any) -> None:
        self.out.write(json.dumps(message).encode() + b"\n")

    async def ask(self, message: Any) -> dict[str, Any]:
        self.write(message)
        return await self.answer(message["id"])

    async def answer(self, request_id: Any) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(await self.reader.readline())
            if message.get("id") == request_id and "method" not in message:
                return message
            self.notes.append(message)

    async def note(self) -> dict[str, Any]:
        while not self.notes:
            self.notes.append(json.loads(await self.reader.readline()))
        return self.notes.pop(0)


# ------------------------------------------------------------------------------ stdio


def test_stdio_a_task_asks_is_answered_and_reports_on_a_listen_stream() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with serve_on_pipes(app) as (server, write, reader):
            pipe = Pipe(write, reader)
            created = (await pipe.ask(call(1, "ask", {"label": "w"})))["result"]
            assert created == created_shape(
                created,
                status="working",
                ttlMs=5_000,
                pollIntervalMs=250,
                resultType="task",
                content=[],
                _meta=INFO,
            )
            task_id = created["taskId"]
            await settle()
            got = (await pipe.ask(rpc(2, "tasks/get", {"taskId": task_id})))["result"]
            assert (got["status"], got["inputRequests"]) == ("input_required", ASKED)
            pipe.write(rpc("l", "subscriptions/listen", {"notifications": {"taskIds": [task_id]}}))
            ack = await pipe.note()
            assert ack["params"]["notifications"] == {"taskIds": [task_id]}
            answers = {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}}
            update = rpc(3, "tasks/update", {"taskId": task_id, "inputResponses": answers})
            assert (await pipe.ask(update))["result"] == ACK
            working, completed = await pipe.note(), await pipe.note()
            assert [working["method"], working["params"]["status"]] == [
                "notifications/tasks",
                "working",
            ]
            assert completed["params"]["_meta"] == {META_SUBSCRIPTION: "l"}
            assert completed["params"]["result"] == {
                "content": [{"type": "text", "text": "w: Ada"}],
                "isError": False,
            }
            pipe.write(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": "l", "_meta": META},
                }
            )
            pipe.out.close()
            await server

    run(scenario)


def test_stdio_cancel_errors_and_gates() -> None:
    app, probe = make_app()

    async def scenario() -> None:
        async with serve_on_pipes(app) as (server, write, reader):
            pipe = Pipe(write, reader)
            task_id = (await pipe.ask(call(1, "hold", {"label": "s"})))["result"]["taskId"]
            await settle()
            assert (await pipe.ask(rpc(2, "tasks/cancel", {"taskId": task_id})))["result"] == ACK
            await asyncio.wait_for(probe.end("s").wait(), 5)
            got = await pipe.ask(rpc(3, "tasks/get", {"taskId": task_id}))
            assert (got["result"]["status"], probe.cancelled) == ("cancelled", ["s"])
            unknown = await pipe.ask(rpc(4, "tasks/cancel", {"taskId": "nope"}))
            assert unknown["error"]["code"] == -32602
            gated = await pipe.ask(rpc(5, "tasks/get", {"taskId": task_id}, PLAIN_META))
            assert (gated["error"]["code"], gated["error"]["data"]) == (-32021, REQUIRED)
            removed = await pipe.ask(rpc(6, "tasks/result", {"taskId": task_id}))
            assert removed["error"] == {"code": -32601, "message": "Method not found: tasks/result"}
            required = await pipe.ask(call(7, "fails", {}, PLAIN_META))
            assert (required["error"]["code"], required["error"]["data"]) == (-32021, REQUIRED)
            inline = await pipe.ask(call(8, "double", {"n": 3}, PLAIN_META))
            assert inline["result"]["structuredContent"] == {"result": 6}
            pipe.out.close()
            await server

    run(scenario)


# ------------------------------------------------------------------------------- HTTP


def headers(method: str, name: str | None = None) -> dict[str, str]:
    return modern_headers(method, name)


def test_http_tasks_carry_mcp_name_and_run_to_the_end() -> None:
    app, probe = make_app()
    asgi = app.asgi(json_response=True)

    async def scenario() -> None:
        await asgi.start()
        try:
            reply = await request(
                asgi, "POST", call(1, "ask", {"label": "w"}), headers("tools/call", "ask")
            )
            assert reply.status == 200
            task_id = reply.json["result"]["taskId"]
            assert reply.json["result"]["content"] == []
            await settle()
            got = await request(
                asgi,
                "POST",
                rpc(2, "tasks/get", {"taskId": task_id}),
                headers("tasks/get", task_id),
            )
            assert got.json["result"]["inputRequests"] == ASKED
            answers = {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}}
            update = rpc(3, "tasks/update", {"taskId": task_id, "inputResponses": answers})
            acked = await request(asgi, "POST", update, headers("tasks/update", task_id))
            assert acked.json == {"jsonrpc": "2.0", "id": 3, "result": ACK}
            await settle()
            done = await request(
                asgi,
                "POST",
                rpc(4, "tasks/get", {"taskId": task_id}),
                headers("tasks/get", task_id),
            )
            assert done.json["result"]["result"]["content"] == [{"type": "text", "text": "w: Ada"}]
            held = await request(
                asgi, "POST", call(5, "hold", {"label": "h"}), headers("tools/call", "hold")
            )
            held_id = held.json["result"]["taskId"]
            cancel = rpc(6, "tasks/cancel", {"taskId": held_id})
            assert (
                await request(asgi, "POST", cancel, headers("tasks/cancel", held_id))
            ).status == 200
            await asyncio.wait_for(probe.end("h").wait(), 5)
            assert probe.cancelled == ["h"]
        finally:
            await asgi.aclose()

    run(scenario)


@pytest.mark.parametrize("method", ["tasks/get", "tasks/update", "tasks/cancel"])
@pytest.mark.parametrize("name", [None, "other-task"], ids=["missing", "mismatched"])
def test_http_a_tasks_request_without_its_task_id_header_is_minus_32020(
    method: str, name: str | None
) -> None:
    app, _ = make_app()
    asgi = app.asgi(json_response=True)
    params: dict[str, Any] = {"taskId": "the-task", "inputResponses": {}}

    async def scenario() -> None:
        reply = await request(asgi, "POST", rpc(1, method, params), headers(method, name))
        assert reply.status == 400
        assert reply.json["error"]["code"] == -32020

    run(scenario)


def test_http_gates_come_before_lookups_and_unknown_ids_are_invalid_params() -> None:
    app, _ = make_app()
    asgi = app.asgi(json_response=True)

    async def scenario() -> None:
        plain = rpc(1, "tasks/get", {"taskId": "x"}, PLAIN_META)
        gated = await request(asgi, "POST", plain, headers("tasks/get", "x"))
        assert (gated.json["error"]["code"], gated.json["error"]["data"]) == (-32021, REQUIRED)
        unknown = await request(
            asgi, "POST", rpc(2, "tasks/get", {"taskId": "x"}), headers("tasks/get", "x")
        )
        assert unknown.json["error"]["code"] == -32602
        discovered = await request(
            asgi, "POST", rpc(3, "server/discover", {}), headers("server/discover")
        )
        assert discovered.json["result"]["capabilities"]["extensions"] == {TASKS: {}}

    run(scenario)


def test_stdio_handshake_era_runs_optional_tools_inline_and_refuses_required_ones() -> None:
    app, _ = make_app()
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {TASKS: {}}},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }

    def plain(request_id: int, method: str, params: dict[str, Any]) -> Any:
        return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}

    async def scenario() -> None:
        async with serve_on_pipes(app) as (server, write, reader):
            pipe = Pipe(write, reader)
            caps = (await pipe.ask(init))["result"]["capabilities"]
            assert "extensions" not in caps
            assert "tasks" not in caps
            pipe.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
            inline = await pipe.ask(
                plain(1, "tools/call", {"name": "double", "arguments": {"n": 2}})
            )
            assert inline["result"]["structuredContent"] == {"result": 4}
            refused = await pipe.ask(plain(2, "tools/call", {"name": "fails", "arguments": {}}))
            assert (refused["error"]["code"], refused["error"]["data"]) == (-32021, REQUIRED)
            absent = await pipe.ask(plain(3, "tasks/get", {"taskId": "x"}))
            assert absent["error"] == {"code": -32601, "message": "Method not found: tasks/get"}
            tools = (await pipe.ask(plain(4, "tools/list", {})))["result"]["tools"]
            assert all(
                set(tool) <= {"name", "description", "inputSchema", "outputSchema"}
                for tool in tools
            )  # no execution field
            pipe.out.close()
            await server

    run(scenario)


def test_http_a_task_belongs_to_the_token_holder_that_created_it() -> None:
    from mcpkit.transports.http.auth import static_tokens

    app, probe = make_app()
    tokens = {"ada-token": {"sub": "ada"}, "bob-token": {"sub": "bob"}}
    asgi = app.asgi(json_response=True, auth=static_tokens(tokens))

    def as_(token: str, method: str, name: str | None = None) -> dict[str, str]:
        return {**headers(method, name), "authorization": f"Bearer {token}"}

    async def scenario() -> None:
        await asgi.start()
        try:
            created = await request(
                asgi,
                "POST",
                call(1, "hold", {"label": "o"}),
                as_("ada-token", "tools/call", "hold"),
            )
            task_id = created.json["result"]["taskId"]
            for method in ("tasks/get", "tasks/cancel"):
                body = rpc(2, method, {"taskId": task_id})
                theirs = await request(asgi, "POST", body, as_("bob-token", method, task_id))
                assert theirs.json["error"]["code"] == -32602
            body = rpc(3, "tasks/get", {"taskId": task_id})
            mine = await request(asgi, "POST", body, as_("ada-token", "tasks/get", task_id))
            assert mine.json["result"]["status"] == "working"
            probe.gate("o").set()
        finally:
            await asgi.aclose()

    run(scenario)


def test_http_continue_as_task_answers_an_input_round_then_a_task() -> None:
    app, probe = make_app()
    asgi = app.asgi(json_response=True)

    async def scenario() -> None:
        await asgi.start()
        try:
            first = await request(
                asgi, "POST", call(1, "later", {}), headers("tools/call", "later")
            )
            round_one = first.json["result"]
            assert round_one["resultType"] == "input_required"
            assert list(round_one["inputRequests"]) == ["user_name"]
            retry = call(2, "later", {})
            retry["params"]["inputResponses"] = {
                "user_name": {"action": "accept", "content": {"name": "Ada"}}
            }
            retry["params"]["requestState"] = round_one["requestState"]
            second = await request(asgi, "POST", retry, headers("tools/call", "later"))
            created = second.json["result"]
            assert created["resultType"] == "task"
            assert "requestState" not in created
            probe.gate("later").set()
            await settle()
            body = rpc(3, "tasks/get", {"taskId": created["taskId"]})
            done = await request(asgi, "POST", body, headers("tasks/get", created["taskId"]))
            assert done.json["result"]["result"]["content"] == [
                {"type": "text", "text": "Hello, Ada"}
            ]
        finally:
            await asgi.aclose()

    run(scenario)


def test_stdio_tool_errors_complete_and_protocol_errors_fail() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with serve_on_pipes(app) as (server, write, reader):
            pipe = Pipe(write, reader)
            failing = (await pipe.ask(call(1, "fails", {})))["result"]["taskId"]
            breaking = (await pipe.ask(call(2, "breaks", {})))["result"]["taskId"]
            await settle()
            done = (await pipe.ask(rpc(3, "tasks/get", {"taskId": failing})))["result"]
            assert (done["status"], done["result"]) == (
                "completed",
                {"content": [{"type": "text", "text": "it did not work"}], "isError": True},
            )
            failed = (await pipe.ask(rpc(4, "tasks/get", {"taskId": breaking})))["result"]
            assert (failed["status"], failed["error"]) == (
                "failed",
                {"code": -32603, "message": "broken on purpose", "data": {"why": "test"}},
            )
            assert "result" not in failed
            pipe.out.close()
            await server

    run(scenario)
