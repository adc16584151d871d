"""Composed apps being served: nested includes and their lifespans, access rules, middleware,
timeouts, tasks and extensions of included apps, the example over the in-memory client, stdio
and the CLI."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from cli_support import ROOT, mcpkit
from features_support import HANDSHAKE, STATELESS, Client, era, run, settle
from stdio_support import Talk, mcpkit_run

from mcpkit import App, Context, DefinitionError, ServerOptions
from mcpkit.cli.loader import load_app
from mcpkit.middleware import Call, CallNext
from mcpkit.protocol.methods import capabilities

COMPOSED = f"{ROOT / 'examples' / 'composed.py'}:app"


def recording(name: str, log: list[str], fail: bool = False) -> Callable[[App], Any]:
    @contextlib.asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[str]:
        log.append(f"enter {name}")
        if fail:
            raise RuntimeError(f"{name} cannot start")
        try:
            yield f"{name} state"
        finally:
            log.append(f"exit {name}")

    return lifespan


def stated(name: str, log: list[str], fail: bool = False) -> App:
    """An app whose lifespan records itself and whose tool ``state`` says what it sees."""
    app = App(name, "1", lifespan=recording(name, log, fail))

    @app.tool
    def state(ctx: Context) -> str:
        return str(ctx.state)

    return app


@era
def test_nested_includes_keep_each_apps_state_and_order_lifespans(version: str) -> None:
    log: list[str] = []
    a, b, c = stated("a", log), stated("b", log), stated("c", log)
    b.include(c, prefix="c")
    a.include(b, prefix="b")

    async def scenario() -> None:
        async with Client(a, protocol_version=version) as client:
            names = ["state", "b_state", "b_c_state"]
            assert [t["name"] for t in await client.list_tools()] == names
            seen = [(await client.call_tool(n)).data for n in names]
            assert seen == ["a state", "b state", "c state"]
            client.notifications.clear()
            c.add_tool(lambda: "new", name="late")  # two levels down, heard at the top
            assert (await client.call_tool("b_c_late")).data == "new"
            c.disable(name="state")  # ... and so is a switch
            await settle()
            left = ["state", "b_state", "b_c_late"]
            assert [t["name"] for t in await client.list_tools()] == left
            if version == HANDSHAKE:
                assert [n["method"] for n in client.notifications] == [
                    "notifications/tools/list_changed",
                    "notifications/tools/list_changed",
                ]

    run(scenario)
    assert log == ["enter c", "enter b", "enter a", "exit a", "exit b", "exit c"]


def test_an_app_included_twice_over_starts_once() -> None:
    log: list[str] = []
    top, left, right, shared = (stated(n, log) for n in ("top", "left", "right", "shared"))
    left.include(shared, prefix="s")
    right.include(shared, prefix="s")
    top.include(left, prefix="l")
    top.include(right, prefix="r")

    async def scenario() -> None:
        async with Client(top) as client:
            assert (await client.call_tool("r_s_state")).data == "shared state"

    run(scenario)
    assert log[:4] == ["enter shared", "enter left", "enter right", "enter top"]
    assert log[4:] == ["exit top", "exit right", "exit left", "exit shared"]


def test_a_failing_included_lifespan_stops_the_start_and_leaves_the_started_ones() -> None:
    log: list[str] = []
    main, first, broken = stated("main", log), stated("first", log), stated("broken", log, True)
    main.include(first, prefix="f")
    main.include(broken, prefix="b")

    async def scenario() -> None:
        async with Client(main):
            raise AssertionError("the server must not start")

    with pytest.raises(RuntimeError, match=r"^broken cannot start$"):
        run(scenario)
    assert log == ["enter first", "enter broken", "exit first"]  # main's never entered


# ------------------------------------------------------------------ access, middleware


def test_access_rules_of_both_apps_apply() -> None:
    main, notes = App("main", "1"), App("notes", "1", lifespan=recording("notes", []))

    @notes.tool(tags={"beta"})
    def beta() -> str:
        return "beta"

    @notes.tool(scopes=["notes:write"])
    def write() -> str:
        return "written"

    @notes.tool(visible=lambda ctx: ctx.state == "notes state")  # its own app's state
    def mine() -> str:
        return "mine"

    main.include(notes, prefix="n")

    async def scenario() -> None:
        async with Client(main) as anyone, Client(main, principal={"scopes": "notes:write"}) as w:
            assert [t["name"] for t in await anyone.list_tools()] == ["n_beta", "n_mine"]
            assert [t["name"] for t in await w.list_tools()] == ["n_beta", "n_write", "n_mine"]
            main.disable(tags={"beta"})  # the including app's switches, by the origin's tags
            notes.disable(name="mine")  # the included app's switches reach it too
            main.enable(name="n_mine")  # ... and cannot be overruled from above
            assert [t["name"] for t in await w.list_tools()] == ["n_write"]
            reply = await w.send(
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "n_mine"}}
            )
            assert reply == {
                "jsonrpc": "2.0",
                "id": 3,
                "error": {"code": -32602, "message": "Unknown tool: n_mine"},
            }

    run(scenario)


def test_the_including_apps_middleware_runs_for_everything() -> None:
    seen: list[tuple[str, Any]] = []
    main, notes = App("main", "1"), App("notes", "1")

    @main.middleware
    async def record(call: Call, call_next: CallNext) -> dict[str, Any]:
        seen.append((call.method, call.params.get("name")))
        return await call_next(call)

    notes.add_tool(lambda: "x", name="x")
    main.include(notes, prefix="n")
    with Client(main) as client:
        assert client.call_tool("n_x").data == "x"
    assert seen == [("initialize", None), ("tools/call", "n_x")]


async def _noop(call: Call, call_next: CallNext) -> dict[str, Any]:
    return await call_next(call)


def test_an_included_apps_middleware_is_refused() -> None:
    main, notes = App("main", "1"), App("notes", "1", middleware=[_noop])
    with pytest.raises(DefinitionError) as caught:
        main.include(notes, prefix="n")
    assert str(caught.value) == (
        "app 'notes' has middleware; an included app's middleware would not run (middleware "
        "runs around whole requests): register it on app 'main'"
    )
    plain = App("plain", "1")
    main.include(plain, prefix="p")
    with pytest.raises(DefinitionError) as caught:
        plain.middleware(_noop)
    assert str(caught.value) == (
        "app 'plain' is included in another app; its middleware would not run (register "
        "middleware on the including app)"
    )


# --------------------------------------------------------- timeouts, tasks, extensions


def test_an_included_apps_tool_timeout_applies_to_its_tools() -> None:
    main = App("main", "1", options=ServerOptions(tool_timeout=30))
    slow = App("slow", "1", options=ServerOptions(tool_timeout=0.05))
    other = App("other", "1")

    async def wait() -> str:
        await asyncio.Event().wait()
        return "never"

    slow.add_tool(wait, name="wait")
    slow.add_tool(wait, name="patient", timeout=math.inf)
    other.add_tool(wait, name="wait")
    main.include(slow, prefix="slow")
    main.include(other, prefix="other")
    assert [main.tools[n].timeout for n in ("slow_wait", "slow_patient", "other_wait")] == [
        0.05,
        math.inf,
        None,  # the server's (main's) tool_timeout applies
    ]
    with Client(main) as client:
        result = client.call_tool("slow_wait")
    assert result.raw == {
        "content": [{"type": "text", "text": "Tool 'slow_wait' timed out after 0.05 s"}],
        "isError": True,
    }


def test_task_tools_and_extensions_of_included_apps_are_declared() -> None:
    main = App("main", "1", options=ServerOptions(extensions={"com.example/a": {"v": 1}}))
    part = App(
        "part",
        "1",
        options=ServerOptions(extensions={"com.example/b": {}}),
        lifespan=recording("part", []),
    )

    @part.tool(task="optional")
    async def long(ctx: Context) -> str:
        return f"done with {ctx.state}"

    main.include(part, prefix="p")
    assert capabilities(main, stateless=True)["extensions"] == {
        "com.example/a": {"v": 1},
        "com.example/b": {},
        "io.modelcontextprotocol/tasks": {},
    }
    assert main.tools["p_long"].task == "optional"
    clash = App("clash", "1", options=ServerOptions(extensions={"com.example/a": {"v": 2}}))
    with pytest.raises(DefinitionError) as caught:
        main.include(clash, prefix="c")
    assert str(caught.value) == (
        "extension 'com.example/a' is declared with settings {'v': 1} and, by an included app, "
        "{'v': 2}; a server declares each extension once"
    )
    top = App("top", "1", options=ServerOptions(extensions={"com.example/c": {}}))
    top.include(main, prefix="m")  # a clash with what an app above declares is refused too
    deeper = App("c", "1", options=ServerOptions(extensions={"com.example/c": {"x": 1}}))
    with pytest.raises(DefinitionError) as caught:
        part.include(deeper, prefix="c")
    assert str(caught.value) == (
        "extension 'com.example/c' is declared with settings {} and, by an included app, "
        "{'x': 1}; a server declares each extension once"
    )
    with Client(main, protocol_version=STATELESS) as client:  # no tasks declared: inline
        assert client.call_tool("p_long").data == "done with part state"
    declaring: dict[str, Any] = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    with Client(main, protocol_version=STATELESS, capabilities=declaring) as client:
        created = client.call_tool("p_long", task=True)
        assert created["resultType"] == "task"
        assert client.wait_task(created["taskId"]) == {
            "content": [{"type": "text", "text": "done with part state"}],
            "isError": False,
        }


@era
def test_an_included_mcp_apps_view_keeps_its_meta_and_its_tools_follow_its_uri(
    version: str,
) -> None:
    part = App("board", "1")

    @part.ui("ui://notes/board", prefers_border=True)
    def board() -> str:
        return "<p>board</p>"

    @part.tool(ui="ui://notes/board")
    def show() -> str:
        return "shown"

    main = App("main", "1")
    main.include(part, prefix="b", uri_prefix="team")
    assert capabilities(main, stateless=False)["extensions"] == {"io.modelcontextprotocol/ui": {}}
    with Client(main, protocol_version=version) as client:
        assert [tool["_meta"] for tool in client.list_tools()] == [
            {"ui": {"resourceUri": "ui://team/notes/board"}}
        ]
        assert client.read_resource("ui://team/notes/board") == [
            {
                "uri": "ui://team/notes/board",
                "mimeType": "text/html;profile=mcp-app",
                "text": "<p>board</p>",
                "_meta": {"ui": {"prefersBorder": True}},
            }
        ]
        assert client.call_tool("b_show").data == "shown"


# ----------------------------------------------------------------------- the example


@era
def test_the_example_serves_its_parts(version: str) -> None:
    with Client(load_app(COMPOSED), protocol_version=version) as client:
        names = [t["name"] for t in client.list_tools()]
        assert names == ["about", "notes_add", "notes_search", "calc_add", "calc_multiply"]
        assert client.call_tool("notes_add", {"title": "todo", "text": "Buy milk"}).data == (
            "kept 'todo'"
        )
        found = client.call_tool("notes_search", {"word": "MILK"})
        assert found.data == ["todo"]
        assert client.call_tool("calc_multiply", {"a": 6, "b": 7}).data == 42
        assert client.read_resource("notes://welcome") == [
            {
                "uri": "notes://welcome",
                "mimeType": "text/plain",
                "text": "Notes are kept in memory.",
            }
        ]


def test_the_example_over_stdio() -> None:
    async def scenario() -> None:
        async with mcpkit_run(COMPOSED) as process:
            talk = Talk(process)
            await talk.initialize()
            call = {"name": "calc_add", "arguments": {"a": 1, "b": 2}}
            answer = await talk.request(
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
            )
            assert answer == {
                "jsonrpc": "2.0",
                "id": 2,
                "result": {
                    "content": [{"type": "text", "text": '{"result":3.0}'}],
                    "structuredContent": {"result": 3.0},
                    "isError": False,
                },
            }

    run(scenario, timeout=30)


def test_docs_inspect_and_diff_see_included_definitions(tmp_path: Path) -> None:
    inspected = mcpkit("inspect", COMPOSED)
    assert inspected.exit_code == 0
    assert "  notes_summarize(title)\n" in inspected.stdout
    assert "  note: notes://{title} (text/plain)\n" in inspected.stdout
    docs = mcpkit("docs", COMPOSED, "--format", "json")
    assert docs.exit_code == 0
    names = sorted(tool["name"] for tool in json.loads(docs.stdout)["tools/list"])
    assert names == ["about", "calc_add", "calc_multiply", "notes_add", "notes_search"]
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(docs.stdout, encoding="utf-8")
    changed = json.loads(docs.stdout)
    changed["tools/list"] = [t for t in changed["tools/list"] if t["name"] != "calc_add"]
    new.write_text(json.dumps(changed), encoding="utf-8")
    diff = mcpkit("diff", str(old), str(new))
    assert diff.exit_code == 1
    assert diff.stdout == (
        "breaking    tool 'calc_add': removed (or renamed): clients that use it break\n"
        "1 change: 1 breaking, 0 compatible\n"
    )


def test_handshake_clients_see_the_includes_capabilities() -> None:
    with Client(load_app(COMPOSED), protocol_version=HANDSHAKE) as client:
        assert (client.initialize_result or {})["capabilities"] == {
            "logging": {},
            "tools": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "prompts": {"listChanged": True},
            "completions": {},
        }
