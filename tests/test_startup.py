"""Start-up without pydantic: ``initialize`` and ``tools/list`` of a fast-path server never import
the ``pydantic`` package; its validators are built after the listing, and the first call's answer
is the one it always was.

The server says, at debug level, whether pydantic was loaded when it began warming up (right
after the first answer past the handshake that is not a page with a next one): a module once
imported stays in ``sys.modules``, so
"not loaded yet" there means ``initialize`` and ``tools/list`` were answered without it.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from asgi_support import Request
from http_support import free_port, post
from stdio_support import unmeasured_env
from test_stdio import EXAMPLE, Server

from mcpkit import App
from mcpkit.exceptions import DefinitionError

WARMING = b"warming up 2 definitions' validators after answering 1 (pydantic "
LOADED = b"DEBUG mcpkit.warmup: loaded on use, and loaded already: "
NOT_BEFORE_THE_FIRST_CALL = {
    "pydantic",  # the validators: the warm-up, or the first call
    "pydantic_core._pydantic_core",  # the JSON codec: until the warm-up, json reads and writes
    "dataclasses",  # with copy: pydantic's, or a look at a frozen class as a dataclass
    "copy",
    "pathlib",  # with urllib.parse: the serializer's first use, a file read, add_directory
    "urllib.parse",
    "decimal",  # the serializer's first use, a numeric header
    "mimetypes",  # the first file whose MIME type is guessed
    "mcpkit.settings",  # App(settings=...)
    "mcpkit._directory",  # add_directory
    "mcpkit._included",  # the first include()
    "mcpkit._uritemplate",  # the first resource
    "mcpkit.prompts",  # the first prompt
    "mcpkit.resources",  # the first resource
    "mcpkit._ui",  # the first view, or a tool's link to one
    # A feature's handlers: the first request for one of its methods (methods.HANDLERS).
    "mcpkit.protocol.methods.resources",
    "mcpkit.protocol.methods.prompts",
    "mcpkit.protocol.methods.completion",
    "mcpkit.protocol.methods.subscriptions",
    "mcpkit.protocol.methods.tasks",
    "mcpkit.protocol.tasks.runner",  # the first task, tasks/* request or listen
    "mcpkit.protocol.tasks.store",
    "mcpkit.protocol.pipeline",  # the first request through middleware
}
"""What ``initialize`` and ``tools/list`` of ``examples/build_app.py`` must not load. (It imports
``typing_extensions`` itself; ``--log-level`` takes the click command line, and click imports
``uuid`` and ``datetime``: a plain ``mcpkit run TARGET`` loads none of them.)"""
INFO = {"name": "t", "version": "1"}
BUILD_ARGUMENTS = {"project_dir": "./app", "arch": "arm64", "configuration": "Release"}
BUILT = (
    b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":'
    b'"{\\"exit_code\\":0,\\"output\\":\\"app-release-arm64.pkg\\"}"}],'
    b'"structuredContent":{"exit_code":0,"output":"app-release-arm64.pkg"},"isError":false}}'
)


def test_the_listing_imports_neither_pydantic_nor_unused_features_and_a_call_still_works() -> None:
    server = Server(EXAMPLE, "--log-level", "debug", env=unmeasured_env())
    try:
        server.initialize("2025-11-25")
        listed = server.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["build-app", "lint-check"]
        warming = server.stderr_until(WARMING)[-1]
        assert warming.endswith(WARMING + b"not loaded yet)\n")
        loaded = server.stderr_until(LOADED)[-1].rstrip(b"\n").split(b": ")[-1].decode()
        assert set(loaded.split(", ")) & NOT_BEFORE_THE_FIRST_CALL == set(), loaded
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "build-app",
                    "arguments": {
                        "project_dir": "./app",
                        "arch": "arm64",
                        "configuration": "Release",
                    },
                },
            }
        )
        assert server.line() == (
            b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":'
            b'"{\\"exit_code\\":0,\\"output\\":\\"app-release-arm64.pkg\\"}"}],'
            b'"structuredContent":{"exit_code":0,"output":"app-release-arm64.pkg"},"isError":false}}\n'
        )
    finally:
        server.stop()


APP = """
from mcpkit import App

app = App("warm", version="1.0.0")


@app.tool
def add(a: int, b: int) -> int:
    return a + b


@app.prompt
def greet(name: str) -> str:
    return f"Hello {name}"


@app.resource("notes://{topic}")
def note(topic: str) -> str:
    return f"about {topic}"
"""


def test_the_warm_up_builds_every_kind_of_definition_without_a_failure(tmp_path: Path) -> None:
    (tmp_path / "warm.py").write_text(APP, encoding="utf-8")
    server = Server("warm.py:app", "--log-level", "debug", cwd=tmp_path)
    try:
        server.initialize("2025-11-25")
        server.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        said = b"".join(server.stderr_until(b"warm-up done"))
        assert WARMING.replace(b"2 def", b"3 def") + b"not loaded yet)" in said
        assert b"not built in advance" not in said
        answer = server.request(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "prompts/get",
                "params": {"name": "greet", "arguments": {"name": "Ada"}},
            }
        )
        assert answer["result"]["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Hello Ada"}}
        ]
    finally:
        server.stop()


def test_over_http_the_listing_does_not_import_pydantic_and_the_warm_up_follows_it() -> None:
    port = free_port()
    args = ("--transport", "http", "--stateless", "--json-response", "--port", str(port))
    server = Server(EXAMPLE, *args, "--log-level", "debug")
    try:
        server.stderr_until(b"Uvicorn running on")
        headers = {"mcp-protocol-version": "2025-11-25"}
        listed = post(port, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers).json
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["build-app", "lint-check"]
        warming = server.stderr_until(WARMING)[-1]
        assert warming.endswith(WARMING + b"not loaded yet)\n")
        server.stderr_until(b"warm-up done")
        params = {"name": "build-app", "arguments": BUILD_ARGUMENTS}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
        reply = post(port, call, headers)
        assert (reply.status, reply.body) == (200, BUILT)
    finally:
        server.stop()


PAGED = """
from mcpkit import App, ServerOptions

app = App("paged", version="1.0.0", options=ServerOptions(page_size=1))


@app.tool
def add(a: int, b: int) -> int:
    return a + b


@app.tool
def sub(a: int, b: int) -> int:
    return a - b
"""


def test_the_warm_up_waits_for_the_last_page_of_a_listing(tmp_path: Path) -> None:
    """A client paging through the listing asks for the next page at once: the pydantic import
    would delay it, so the warm-up starts after the last page."""
    (tmp_path / "paged.py").write_text(PAGED, encoding="utf-8")
    server = Server("paged.py:app", "--log-level", "debug", cwd=tmp_path)
    try:
        server.initialize("2025-11-25")
        first = server.request({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert [tool["name"] for tool in first["result"]["tools"]] == ["add"]
        cursor = first["result"]["nextCursor"]
        second = server.request(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": cursor}}
        )
        assert [tool["name"] for tool in second["result"]["tools"]] == ["sub"]
        assert "nextCursor" not in second["result"]
        warming = server.stderr_until(b"warming up")[-1]
        assert warming.endswith(
            b"warming up 2 definitions' validators after answering 2 (pydantic not loaded yet)\n"
        )
    finally:
        server.stop()


def test_an_http_session_warms_up_after_its_listing_not_its_handshake(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``initialize`` and the ``notifications/initialized`` POST are the handshake: the
    warm-up starts after the next answer, the listing, and not before it (whether pydantic is
    loaded by then depends on the tests run before in this process)."""
    app = App("warm", version="1.0.0")

    @app.tool
    def add(a: int, b: int) -> int:
        return a + b

    asgi = app.asgi(json_response=True)
    caplog.set_level(logging.DEBUG, logger="mcpkit.warmup")

    def warming() -> list[str]:
        said = [r.getMessage() for r in caplog.records if r.name == "mcpkit.warmup"]
        return [message.partition(" (")[0] for message in said[:1]]

    async def post(body: Any, **headers: str) -> Request:
        request = Request("POST", body, headers)
        await request.serve(asgi)
        return request

    async def scenario() -> None:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
        opened = await post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        session["mcp-protocol-version"] = "2025-11-25"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await post(initialized, **session)).status == 202
        assert warming() == []
        listed = await post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, **session)
        assert listed.status == 200
        assert warming() == ["warming up 1 definitions' validators after answering 1"]

    asyncio.run(scenario())


def test_a_request_with_a_method_that_is_not_a_string_is_answered_and_serving_goes_on() -> None:
    """The warm-up's "is this the handshake" test meets whatever a client sends as a method."""
    server = Server(EXAMPLE, "--log-level", "debug")
    try:
        server.initialize("2025-11-25")
        bad = server.request({"jsonrpc": "2.0", "id": 1, "method": {"m": 1}})
        assert bad == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32600, "message": "Invalid Request"},
        }
        listed = server.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert [tool["name"] for tool in listed["result"]["tools"]] == ["build-app", "lint-check"]
        warming = server.stderr_until(b"warming up")[-1]
        assert warming.endswith(WARMING + b"not loaded yet)\n")
    finally:
        server.stop()


FIRST_USE = """
from typing import Literal

from mcpkit import App

app = App("first", version="1.0.0")


@app.tool
def add(a: int, b: int) -> int:
    return a + b


@app.prompt
def greet(name: str, tone: Literal["warm", "dry"] = "warm") -> str:
    return f"Hello {name}"


@app.resource("notes://{topic}")
def note(topic: str) -> str:
    return f"about {topic}"
"""
TONE = {"name": "tone", "value": "w"}
STATELESS_TASKS = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def test_each_feature_loaded_on_first_use_answers_its_first_request(tmp_path: Path) -> None:
    """A feature's handlers (and the task runner) load with the first request for one of its
    methods: in a fresh process, that first request is answered as it always was."""
    (tmp_path / "first.py").write_text(FIRST_USE, encoding="utf-8")
    server = Server("first.py:app", cwd=tmp_path, env=unmeasured_env())
    firsts = [
        ("resources/read", {"uri": "notes://x"}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": TONE}),
        ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
        ("tasks/get", {"taskId": "nope", "_meta": STATELESS_TASKS}),
    ]
    try:
        server.initialize("2025-11-25")
        answers = []
        for number, (method, params) in enumerate(firsts, start=1):
            server.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            answers.append(server.line())
        assert answers == [
            b'{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"notes://x",'
            b'"mimeType":"text/plain","text":"about x"}]}}\n',
            b'{"jsonrpc":"2.0","id":2,"result":{"completion":{"values":["warm"],"total":1,'
            b'"hasMore":false}}}\n',
            b'{"jsonrpc":"2.0","id":3,"result":{"messages":[{"role":"user","content":'
            b'{"type":"text","text":"Hello Ada"}}]}}\n',
            b'{"jsonrpc":"2.0","id":4,"error":{"code":-32602,'
            b'"message":"Invalid params: unknown task \'nope\' (not found or expired)"}}\n',
        ]
    finally:
        server.stop()


class Point(typing.TypedDict):
    x: int


def test_definitions_compile_while_another_thread_is_importing_what_they_look_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The warm-up compiles every definition on a thread while the loop may compile the one a
    call needs: a module that thread is importing is in ``sys.modules`` half run (no
    ``is_typeddict`` yet, no ``is_view``). Such a look-up answers as if the module were not
    loaded (no class it makes can exist yet) instead of failing the call with -32603 (seen on
    Python 3.13: ``partially initialized module 'typing_extensions'``)."""
    monkeypatch.setitem(sys.modules, "typing_extensions", types.ModuleType("typing_extensions"))
    monkeypatch.setitem(sys.modules, "mcpkit._included", types.ModuleType("mcpkit._included"))

    app = App("half", version="1")

    @app.tool
    def size(text: str, at: Point) -> int:
        """Counts."""
        return len(text) + at["x"]

    tool = app.tools["size"]
    tool.compile()
    assert tool.input_schema["properties"]["at"]["properties"] == {"x": {"type": "integer"}}
    with pytest.raises(DefinitionError, match=r"^tool 'size' is defined twice"):
        app.add_tool(size)
