"""``DevServer`` over a real socket (uvicorn in a thread), without a browser: the page and its
files, the guards, the docs endpoint, the App's ``/mcp`` endpoint, and the event stream that
reports reloads on save and edits that do not load."""

from __future__ import annotations

import http.client
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from http_support import initialize, post, request, serve

from mcpkit.cli.reloading import load_fresh
from mcpkit.cli.snapshot import snapshot
from mcpkit.dev.server import STATIC, DevServer
from mcpkit.docgen import html

ROOT = Path(__file__).resolve().parent.parent
BUILD_APP = "examples/build_app.py:app"


@pytest.fixture
def port() -> Iterator[int]:
    with serve(DevServer(BUILD_APP, load_fresh(BUILD_APP), watch=None)) as bound:
        yield bound


def get(port: int, path: str, **headers: str) -> Any:
    return request(port, "GET", path=path, headers=headers)


def test_the_page_and_its_files_are_served_from_the_package(port: int) -> None:
    page = get(port, "/")
    assert (page.status, page.headers["content-type"]) == (200, "text/html; charset=utf-8")
    assert page.body == (STATIC / "index.html").read_bytes()
    assert b'<script type="module" src="/static/page.js"></script>' in page.body
    script = get(port, "/static/page.js")
    assert (script.status, script.headers["content-type"]) == (
        200,
        "text/javascript; charset=utf-8",
    )
    assert script.headers["cache-control"] == "no-store"
    css = get(port, "/static/dev.css")
    assert (css.status, css.headers["content-type"]) == (200, "text/css; charset=utf-8")


@pytest.mark.parametrize(
    "path",
    ["/static/nope.js", "/static/../server.py", "/static/%2e%2e/server.py", "/static/", "/nope"],
)
def test_anything_else_is_404(port: int, path: str) -> None:
    reply = get(port, path)
    assert (reply.status, reply.body) == (404, b"Not Found")


def test_every_route_checks_host_and_origin(port: int) -> None:
    rebound = get(port, "/", host="evil.example")
    assert rebound.status == 421
    assert (
        rebound.json["error"]["message"] == "Misdirected Request: Host 'evil.example' not allowed"
    )
    foreign = post(port, {}, {"origin": "https://evil.example"}, path="/_dev/docs")
    assert foreign.status == 403
    mcp = initialize_reply(port, origin="https://evil.example")
    assert mcp.status == 403


def initialize_reply(port: int, **headers: str) -> Any:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    return post(
        port, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers
    )


def test_the_docs_are_the_docgen_fragments_of_what_the_page_received(port: int) -> None:
    seen = snapshot(load_fresh(BUILD_APP), "2025-11-25")
    reply = post(port, seen, path="/_dev/docs")
    assert reply.status == 200
    docs = reply.json
    assert sorted(docs["entries"]) == ["tool:build-app", "tool:lint-check"]
    page = html.render(seen)
    assert docs["title"] == "builder"
    for fragment in (docs["intro"], *docs["entries"].values()):
        assert fragment in page  # exactly what `mcpkit docs --format html` shows
    assert '<h3 id="tool-build-app">build-app</h3>' in docs["entries"]["tool:build-app"]


def _json_error(body: bytes) -> str:
    try:
        json.loads(body)
    except ValueError as exc:
        return str(exc)
    raise AssertionError("it parsed")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[1]", "Bad Request: the body must be a JSON object"),
        (b"{", f"Bad Request: {_json_error(b'{')}"),
    ],
)
def test_a_docs_body_that_is_no_snapshot_is_400(port: int, body: bytes, message: str) -> None:
    reply = post(port, None, raw=body, path="/_dev/docs")
    assert (reply.status, reply.json) == (
        400,
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}},
    )


def test_mcp_is_the_apps_real_streamable_http_endpoint(port: int) -> None:
    session = initialize(port)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "build-app", "arguments": {"project_dir": "./app", "arch": "arm64"}},
    }
    reply = post(port, call, {"mcp-session-id": session})
    assert reply.json == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": '{"exit_code":0,"output":"app-debug-arm64.pkg"}'}],
            "structuredContent": {"exit_code": 0, "output": "app-debug-arm64.pkg"},
            "isError": False,
        },
    }


# ----------------------------------------------------------------------- events


class Events:
    """The page's event stream, read event by event."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        self.conn.request("GET", "/_dev/events")
        self.response = self.conn.getresponse()
        assert self.response.status == 200
        assert self.response.getheader("content-type") == "text/event-stream"

    def next(self) -> dict[str, Any]:
        while True:
            line = self.response.fp.readline()
            assert line, "the stream ended"
            if line.startswith(b"data: ") and line.strip() != b"data:":
                event: dict[str, Any] = json.loads(line[6:])
                return event

    def until(self, matches: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first event that ``matches`` (a save may reload more than once)."""
        while True:
            event = self.next()
            if matches(event):
                return event

    def close(self) -> None:
        self.conn.close()


def test_the_event_stream_starts_with_what_is_loaded(port: int) -> None:
    events = Events(port)
    try:
        first = events.next()
        server = first.pop("server")
        assert first == {"type": "loaded", "generation": 1, "summary": "'builder' 1.0.0 (2 tools)"}
        assert len(server) == 16
    finally:
        events.close()


EXTRA_TOOL = '''

@app.tool
def fresh_tool() -> str:
    """Written while the page was open."""
    return "fresh"
'''


def test_saving_reloads_the_app_and_a_broken_save_keeps_the_last_good_one(tmp_path: Path) -> None:
    target = tmp_path / "app.py"
    shutil.copy(ROOT / "examples" / "build_app.py", target)
    original = target.read_text(encoding="utf-8")
    name = f"{target}:app"
    with serve(DevServer(name, load_fresh(name))) as port:
        events = Events(port)
        try:
            assert events.next()["generation"] == 1
            old_session = initialize(port)
            target.write_text(original + EXTRA_TOOL, encoding="utf-8")
            loaded = events.until(lambda e: e["type"] == "loaded" and "3 tools" in e["summary"])
            assert loaded["summary"] == "'builder' 1.0.0 (3 tools)"
            assert _tool_names(port) == ["build-app", "lint-check", "fresh_tool"]
            assert post(port, _list(1), {"mcp-session-id": old_session}).status == 404

            target.write_text(original + EXTRA_TOOL + "\n\nx = (\n", encoding="utf-8")
            failed = events.until(lambda e: e["type"] == "failed")
            assert failed["generation"] == loaded["generation"]
            line = len((original + EXTRA_TOOL).splitlines()) + 3
            assert failed["error"] == {
                "file": str(target),
                "line": line,
                "message": f"SyntaxError: {_syntax_message(target)}",
            }
            assert _tool_names(port) == ["build-app", "lint-check", "fresh_tool"]  # still served
        finally:
            events.close()


def _list(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}


def _tool_names(port: int) -> list[str]:
    session = initialize(port)
    tools = post(port, _list(2), {"mcp-session-id": session}).json["result"]["tools"]
    return [tool["name"] for tool in tools]


def _syntax_message(path: Path) -> str:
    try:
        compile(path.read_text(encoding="utf-8"), str(path), "exec")
    except SyntaxError as exc:
        return str(exc.msg)
    raise AssertionError("the file compiled")
