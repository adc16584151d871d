"""Dynamic lists: list_changed to handshake sessions, and subscriptions/listen streams in the
stateless era (in memory, and over a real stdio pipe)."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

from features_support import HANDSHAKE, STATELESS, Client, rpc_error, run, settle
from test_stdio import Server as StdioServer

from mcpkit import App
from mcpkit.protocol import server as server_module
from mcpkit.protocol.methods import capabilities
from mcpkit.protocol.server import Server
from mcpkit.protocol.versions import META_CAPABILITIES, META_SUBSCRIPTION, META_VERSION

SUB = META_SUBSCRIPTION


def make_app() -> App:
    app = App("lists", "1")

    @app.tool
    def one() -> str:
        """One."""
        return "1"

    @app.prompt
    def hello() -> str:
        """Hello."""
        return "hello"

    @app.resource("memo://a")
    def a() -> str:
        return "a"

    return app


def extra_tool() -> str:
    """A tool added at runtime."""
    return "extra"


def extra_prompt() -> str:
    """A prompt added at runtime."""
    return "extra"


def methods(notifications: list[dict[str, Any]]) -> list[str]:
    return [n["method"] for n in notifications]


def test_handshake_sessions_hear_list_changes() -> None:
    app = make_app()

    async def scenario() -> None:
        async with Client(app) as client, Client(app, initialize=False) as silent:
            caps = (client.initialize_result or {})["capabilities"]
            assert caps["tools"] == {"listChanged": True}
            assert caps["prompts"] == {"listChanged": True}
            assert caps["resources"]["listChanged"] is True
            app.add_tool(extra_tool)
            app.remove_tool("extra_tool")
            app.add_prompt(extra_prompt)
            app.remove_prompt("extra_prompt")
            app.add_resource("memo://b", lambda: "b")
            app.remove_resource("memo://b")
            await settle()
            assert methods(client.notifications) == [
                "notifications/tools/list_changed",
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed",
                "notifications/resources/list_changed",
            ]
            assert all("params" not in n for n in client.notifications)
            assert silent.notifications == []  # not initialized: told nothing

    run(scenario)


def test_a_tool_that_changes_the_list_is_heard_after_its_result() -> None:
    app = make_app()

    @app.tool
    def grow() -> str:
        """Adds a tool."""
        app.add_tool(extra_tool)
        return "grown"

    async def scenario() -> None:
        async with Client(app) as client:
            await client.call_tool("grow")
            await settle()
            assert methods(client.notifications) == ["notifications/tools/list_changed"]
            assert "extra_tool" in [t["name"] for t in await client.list_tools()]

    run(scenario)


def listen_request(request_id: Any, notifications: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "subscriptions/listen",
        "params": {
            "_meta": {META_VERSION: STATELESS, META_CAPABILITIES: {}},
            "notifications": notifications,
        },
    }


def test_listen_stream_acknowledges_tags_and_filters() -> None:
    app = make_app()

    async def scenario() -> None:
        async with Client(app, protocol_version=STATELESS) as client:
            wanted = {
                "toolsListChanged": True,
                "resourcesListChanged": False,
                "resourceSubscriptions": ["memo://a"],
            }
            stream = asyncio.ensure_future(client.send(listen_request("listen-1", wanted)))
            await settle()
            ack = client.notifications[0]
            assert ack == {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {
                    "_meta": {SUB: "listen-1"},
                    "notifications": {
                        "toolsListChanged": True,
                        "resourceSubscriptions": ["memo://a"],
                    },
                },
            }
            app.add_prompt(extra_prompt)  # not requested
            app.add_resource("memo://b", lambda: "b")  # resourcesListChanged: false
            app.notify_resource_updated("memo://b")  # not subscribed
            app.add_tool(extra_tool)
            app.notify_resource_updated("memo://a")
            await settle()
            assert client.notifications[1:] == [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/tools/list_changed",
                    "params": {"_meta": {SUB: "listen-1"}},
                },
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"_meta": {SUB: "listen-1"}, "uri": "memo://a"},
                },
            ]
            assert not stream.done()
            await client.notify("notifications/cancelled", {"requestId": "listen-1"})
            assert await asyncio.wait_for(stream, 2) is None  # cancelled: no response
            app.remove_tool("extra_tool")
            await settle()
            assert len(client.notifications) == 3  # the stream is gone

    run(scenario)


def test_listen_honours_only_what_the_server_offers() -> None:
    app = App("tools-only", "1")

    @app.tool
    def one() -> str:
        """One."""
        return "1"

    async def scenario() -> None:
        async with Client(app, protocol_version=STATELESS) as client:
            wanted = {
                "promptsListChanged": True,
                "toolsListChanged": True,
                "resourceSubscriptions": ["x://"],
            }
            streams = [
                asyncio.ensure_future(client.send(listen_request(7, wanted))),
                asyncio.ensure_future(client.send(listen_request(8, {"promptsListChanged": True}))),
            ]
            await settle()
            acks = {
                n["params"]["_meta"][SUB]: n["params"]["notifications"]
                for n in client.notifications
            }
            assert acks == {7: {"toolsListChanged": True}, 8: {}}
            app.add_tool(extra_tool)
            await settle()
            changes = [n for n in client.notifications if n["method"].endswith("list_changed")]
            assert [n["params"]["_meta"][SUB] for n in changes] == [7]
            for request_id in (7, 8):
                await client.notify("notifications/cancelled", {"requestId": request_id})
            assert await asyncio.wait_for(asyncio.gather(*streams), 2) == [None, None]

    run(scenario)


def test_listen_needs_the_stateless_envelope() -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=HANDSHAKE) as client:
            error = await rpc_error(client.request("subscriptions/listen", {"notifications": {}}))
            assert error.code == -32602
        async with Client(make_app(), protocol_version=STATELESS) as client:
            error = await rpc_error(client.request("subscriptions/listen", {"notifications": []}))
            assert error.code == -32602

    run(scenario)


def test_listen_over_stdio(tmp_path: Any) -> None:
    """A listen stream and a tool call on one pipe; the client ends it with cancelled."""
    server = StdioServer("examples/everything.py:app")
    try:
        server.send(
            listen_request("listen-1", {"toolsListChanged": True, "promptsListChanged": True})
        )
        ack = server.read()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {
            "toolsListChanged": True,
            "promptsListChanged": True,
        }
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "test_trigger_tool_change",
                "arguments": {},
                "_meta": {META_VERSION: STATELESS, META_CAPABILITIES: {}},
            },
        }
        server.send(call)
        seen = [server.read() for _ in range(3)]  # two list changes and the result, any order
        changes = [m for m in seen if m.get("method") == "notifications/tools/list_changed"]
        assert len(changes) == 2
        assert all(m["params"]["_meta"][SUB] == "listen-1" for m in changes)
        [result] = [m for m in seen if m.get("id") == 2]
        assert result["result"]["content"][0]["text"] == "Tool list changed."
        server.send(
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": "listen-1"},
            }
        )
        server.send(
            {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": call["params"]}
        )
        after = server.read()
        assert after["id"] == 3, json.dumps(after)  # no response for the cancelled stream
    finally:
        server.stop()


def test_sigterm_ends_a_listen_stream_with_its_result() -> None:
    """A graceful shutdown answers the open listen request instead of leaving it hanging."""
    server = StdioServer("examples/everything.py:app")
    try:
        server.send(listen_request("listen-9", {"toolsListChanged": True}))
        assert server.read()["method"] == "notifications/subscriptions/acknowledged"
        server.proc.send_signal(signal.SIGTERM)
        final = server.read()
        assert final["id"] == "listen-9"
        assert final["result"]["resultType"] == "complete"
        assert final["result"]["_meta"][SUB] == "listen-9"
        assert server.proc.wait(timeout=10) == 0
    finally:
        server.stop()


def test_registering_a_completer_tells_no_list_change_but_offers_completions() -> None:
    app = make_app()
    with Client(app, protocol_version=HANDSHAKE) as client:
        assert "completions" not in client.initialize_result["capabilities"]  # type: ignore[index]

        @app.completion
        def complete_all(ref: Any, argument: str, value: str, given: Any) -> list[str]:
            return ["x"]

        client.request("ping")
        assert methods(client.notifications) == []
        meta = {META_VERSION: STATELESS, META_CAPABILITIES: {}}
        found = client.request("server/discover", {"_meta": meta})
        assert "completions" in found["capabilities"]


def test_capabilities_computed_while_the_app_changes_are_not_kept(monkeypatch: Any) -> None:
    """A change (say from a sync tool's worker thread) that lands while the capabilities are
    being computed must not be overwritten by the stale result."""
    app = App("race", "1")
    real = capabilities

    def racing(app_: App, **era: Any) -> dict[str, Any]:
        found: dict[str, Any] = real(app_, **era)
        app.add_prompt(extra_prompt)  # the change arrives with the stale result in hand
        return found

    served = Server(app)
    monkeypatch.setattr(server_module, "capabilities", racing)
    assert "prompts" not in served.capabilities()
    monkeypatch.setattr(server_module, "capabilities", real)
    assert "prompts" in served.capabilities()
