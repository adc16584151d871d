"""App(lifespan=...): entered once per server (not per session or request), its value visible
to every handler as ctx.state, left on shutdown (in memory and over stdio)."""

from __future__ import annotations

import contextlib
import json
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from features_support import HANDSHAKE, STATELESS, Client, run, text_of
from test_stdio import Server as StdioServer

from mcpkit import App, Context
from mcpkit.protocol.server import Server
from mcpkit.protocol.versions import META_CAPABILITIES, META_VERSION


def make_app(events: list[str]) -> App:
    @contextlib.asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[dict[str, Any]]:
        events.append(f"enter {app.name}")
        yield {"db": "connected", "calls": 0}
        events.append("exit")

    app = App("life", "1", lifespan=lifespan)

    @app.tool
    def use(ctx: Context) -> str:
        """Uses the shared state."""
        ctx.state["calls"] += 1
        return f"{ctx.state['db']} {ctx.state['calls']}"

    @app.resource("state://db")
    def db(ctx: Context) -> str:
        return str(ctx.state["db"])

    @app.prompt
    def status(ctx: Context) -> str:
        """Reports the state."""
        return f"calls so far: {ctx.state['calls']}"

    return app


def test_lifespan_runs_once_and_its_state_reaches_every_handler() -> None:
    events: list[str] = []
    app = make_app(events)

    async def scenario() -> None:
        for version in (HANDSHAKE, STATELESS):
            async with Client(app, protocol_version=version) as client:
                assert events[-1] == "enter life"
                assert text_of(await client.call_tool("use")) == "connected 1"
                assert text_of(await client.call_tool("use")) == "connected 2"
                assert (await client.read_resource("state://db"))[0]["text"] == "connected"
                prompt = await client.get_prompt("status")
                assert prompt["messages"][0]["content"]["text"] == "calls so far: 2"
            assert events[-1] == "exit"

    run(scenario)
    assert events == ["enter life", "exit", "enter life", "exit"]  # once per Server


def test_one_server_many_sessions_one_lifespan() -> None:
    events: list[str] = []
    app = make_app(events)

    async def scenario() -> None:
        server = Server(app)
        await server.start()
        await server.start()  # idempotent
        sent: list[Any] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        meta = {META_VERSION: STATELESS, META_CAPABILITIES: {}}
        for n in range(3):
            session = server.session(send, transport="stdio")
            response = await session.handle(
                {
                    "jsonrpc": "2.0",
                    "id": n,
                    "method": "tools/call",
                    "params": {"name": "use", "arguments": {}, "_meta": meta},
                }
            )
            assert response["result"]["content"][0]["text"] == f"connected {n + 1}"
            session.close()
        assert events == ["enter life"]
        await server.stop()
        assert events == ["enter life", "exit"]

    run(scenario)


def test_without_lifespan_state_is_none() -> None:
    app = App("plain", "1")

    @app.tool
    def show(ctx: Context) -> str:
        """Shows the state."""
        return repr(ctx.state)

    with Client(app) as client:
        assert client.call_tool("show")["content"][0]["text"] == "None"


def test_lifespan_over_stdio(tmp_path: Path) -> None:
    log = tmp_path / "events.log"
    (tmp_path / "life_app.py").write_text(
        textwrap.dedent(
            f"""
            import contextlib
            from mcpkit import App, Context

            LOG = {str(log)!r}

            def note(text):
                with open(LOG, "a") as f:
                    f.write(text + "\\n")

            @contextlib.asynccontextmanager
            async def lifespan(app):
                note("enter")
                yield {{"greeting": "hi"}}
                note("exit")

            app = App("life", "1", lifespan=lifespan)

            @app.tool
            def greet(ctx: Context) -> str:
                \"\"\"Greets.\"\"\"
                return ctx.state["greeting"]
            """
        ),
        encoding="utf-8",
    )
    server = StdioServer("life_app.py:app", cwd=tmp_path)
    try:
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": HANDSHAKE,
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert server.read()["result"]["protocolVersion"] == HANDSHAKE
        meta = {META_VERSION: STATELESS, META_CAPABILITIES: {}}
        for n in range(2, 5):
            params: dict[str, Any] = {"name": "greet", "arguments": {}}
            if n % 2:
                params["_meta"] = meta
            server.send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
            answer = server.read()
            assert answer["result"]["content"][0]["text"] == "hi", json.dumps(answer)
        server.close_stdin()
        assert server.wait() == 0
    finally:
        server.stop()
    assert log.read_text().splitlines() == ["enter", "exit"]
