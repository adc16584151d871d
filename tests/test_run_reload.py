"""``mcpkit run --reload`` as a client sees it: over stdio the session survives an edit and hears
``list_changed``; over HTTP the server process restarts and the next request sees the new code;
an edit that does not load leaves the last good version serving and names file and line on
stderr."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import mcpkit
from http_support import free_port, initialize, post
from stdio_support import Talk, mcpkit_run, serve_on_pipes

from mcpkit import App
from mcpkit.protocol.server import Server

SERVER = """\
from mcpkit import App

app = App("reloaded", "1.0")


@app.tool
def greet() -> str:
    return "hello"
"""

ADDED = (
    SERVER
    + """

@app.tool
def added() -> str:
    return "new"
"""
)

BROKEN = SERVER.replace("def greet() -> str:", "def greet() -> str")  # line 7


def syntax_error_message(text: str) -> str:
    """This Python's words for the syntax error in ``text``."""
    with pytest.raises(SyntaxError) as caught:
        compile(text, "server.py", "exec")
    return f"SyntaxError: {caught.value.msg}"


FAILED = "mcpkit run: reload failed, still serving the previous version: "


def list_tools(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}


def names(answer: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in answer["result"]["tools"]]


# ------------------------------------------------------------------------------- seam


def versions() -> tuple[App, App, asyncio.Event]:
    """Two versions of an app whose ``slow`` tool answers ``"old"``/``"new"``; the old one
    waits for the event."""
    old, new, release = App("v", "1"), App("v", "2"), asyncio.Event()

    @old.tool
    async def slow() -> str:
        await release.wait()
        return "old"

    @new.tool(name="slow")
    async def slow_again() -> str:
        return "new"

    @new.tool
    def added() -> str:
        return "added"

    return old, new, release


async def swap_while_a_call_runs() -> None:
    old, new, release = versions()
    server = Server(old)
    async with serve_on_pipes(server) as (_, in_write, reader):
        to_server = os.fdopen(in_write, "wb", 0)

        async def request(message: dict[str, Any]) -> None:
            to_server.write(json.dumps(message).encode() + b"\n")

        async def receive() -> Any:
            return json.loads(await asyncio.wait_for(reader.readline(), 10))

        params = {"protocolVersion": "2025-11-25", "capabilities": {}}
        await request({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert (await receive())["id"] == 0
        await request({"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "slow", "arguments": {}}
        await request({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call})
        await request({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert await receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}  # 1 is running

        server.replace_app(new)
        new.notify_list_changed("tools")  # the old app's listeners (the session) hear the new
        assert await receive() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        await request({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
        assert (await receive())["result"]["content"] == [{"type": "text", "text": "new"}]
        await request(list_tools(4))
        assert names(await receive()) == ["slow", "added"]
        release.set()
        answer = await receive()
        assert (answer["id"], answer["result"]["content"]) == (1, [{"type": "text", "text": "old"}])
        to_server.close()


def test_a_replaced_app_serves_new_requests_and_running_ones_finish_on_the_old() -> None:
    asyncio.run(swap_while_a_call_runs())


# ------------------------------------------------------------------------------ stdio


class StderrLines:
    """The server's stderr line by line, as it comes."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.lines: list[str] = []
        self._stream = stream
        self.reading = asyncio.ensure_future(self._read())

    async def _read(self) -> bytes:
        while line := await self._stream.readline():
            self.lines.append(line.decode())
        return "".join(self.lines).encode()

    def saw(self, start: str) -> str | None:
        return next((line.rstrip("\n") for line in self.lines if line.startswith(start)), None)


def save(path: Path, text: str) -> None:
    """Write ``path`` as many editors do (a new file renamed over it), so the server, which may
    read it at any moment, never reads half of it."""
    temporary = path.with_name(path.name + ".saving")
    temporary.write_text(text)
    os.replace(temporary, path)


async def edit_until(path: Path, text: str, seen: Callable[[], Awaitable[object]]) -> object:
    """Write ``text`` to ``path`` again and again until ``seen()`` completes; its value.

    The server's watcher says nothing when it is ready, so an edit made before may go unseen;
    the edit repeats until its effect shows (what is asserted is the effect, not the time).
    """
    waiting = asyncio.ensure_future(seen())
    for _ in range(100):
        save(path, text)
        done, _ = await asyncio.wait({waiting}, timeout=0.2)
        if done:
            return waiting.result()
    waiting.cancel()
    raise AssertionError(f"no effect of editing {path} within 20 s")


async def note(talk: Talk, method: str) -> dict[str, Any]:
    """Read the server's stdout until the notification ``method`` comes."""
    while True:
        found = [item for item in talk.notes if item["method"] == method]
        if found:
            return found[0]  # type: ignore[no-any-return]
        assert await talk.read(), "the server ended"


async def stderr_line(lines: StderrLines, start: str) -> str:
    while (line := lines.saw(start)) is None:
        await asyncio.sleep(0.05)  # the line is written by another process: look again
    return line


async def stdio_session(folder: Path) -> None:
    server = folder / "server.py"
    server.write_text(SERVER)
    async with mcpkit_run(str(server), "--reload") as process:
        talk = Talk(process)
        talk.stderr.cancel()  # not started yet: StderrLines reads stderr instead
        assert process.stderr is not None
        stderr = StderrLines(process.stderr)
        talk.stderr = stderr.reading
        await talk.initialize()
        assert names(await talk.request(list_tools(1))) == ["greet"]

        said = await edit_until(server, BROKEN, lambda: stderr_line(stderr, FAILED))
        assert said == f"{FAILED}{server}:7: {syntax_error_message(BROKEN)}"
        assert names(await talk.request(list_tools(2))) == ["greet"]  # the last good version

        changed = await edit_until(
            server, ADDED, lambda: note(talk, "notifications/tools/list_changed")
        )
        assert changed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert names(await talk.request(list_tools(3))) == ["greet", "added"]
        call = {"name": "added", "arguments": {}}
        answer = await talk.request(
            {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}
        )
        assert answer["result"]["content"] == [{"type": "text", "text": "new"}]
        code, _ = await talk.end()
        assert code == 0
        assert [note["method"] for note in talk.notes] == ["notifications/tools/list_changed"]


def test_stdio_reload_keeps_the_session_and_announces_the_new_tool(tmp_path: Path) -> None:
    asyncio.run(stdio_session(tmp_path))


def test_reload_without_watchfiles_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # find_spec: as if not installed
    (tmp_path / "server.py").write_text(SERVER)
    result = mcpkit("run", str(tmp_path / "server.py"), "--reload")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        'mcpkit run: error: --reload needs watchfiles: pip install "mcpkit[reload]"\n'
    )


def test_http_reload_serves_one_worker(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    target = str(tmp_path / "server.py")
    result = mcpkit("run", target, "--transport", "http", "--reload", "--workers", "2")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "mcpkit run: error: --reload serves one worker process; drop --workers\n"
    )


# ------------------------------------------------------------------------------- HTTP


class HttpServer:
    """``mcpkit run TARGET --transport http --reload`` with its stderr read line by line."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        command = [sys.executable, "-m", "mcpkit", "run", "server.py", "--transport", "http"]
        self.process = subprocess.Popen(
            [*command, "--port", str(self.port), "--reload"],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.reading = threading.Thread(target=self._read, daemon=True)
        self.reading.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with self.process.stderr:
            for line in self.process.stderr:
                self.lines.put(line.rstrip("\n"))

    def line(self, start: str, timeout: float = 20.0) -> str:
        """The next stderr line that starts with ``start``."""
        while not (line := self.lines.get(timeout=timeout)).startswith(start):
            pass
        return line

    def stop(self) -> int:
        self.process.terminate()
        code = self.process.wait(20)
        self.reading.join(20)  # stderr ends with the last process holding it
        return code


def edit_until_said(server: HttpServer, path: Path, text: str, start: str) -> str:
    """Write ``text`` until the server's stderr says ``start`` (see :func:`edit_until`)."""
    for _ in range(100):
        save(path, text)
        try:
            return server.line(start, timeout=0.2)
        except queue.Empty:
            continue
    raise AssertionError(f"the server never said {start!r}")


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    (tmp_path / "server.py").write_text(SERVER)
    server = HttpServer(tmp_path)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


def test_http_reload_restarts_the_server_on_an_edit(
    tmp_path: Path, http_server: HttpServer
) -> None:
    path = tmp_path / "server.py"
    http_server.line("mcpkit: reloading when a .py file under")
    session = initialize(http_server.port)  # waits in the backlog until the child listens
    headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    assert names(post(http_server.port, list_tools(1), headers).messages[0]) == ["greet"]

    said = edit_until_said(http_server, path, BROKEN, FAILED)
    assert said == f"{FAILED}server.py:7: {syntax_error_message(BROKEN)}"
    assert names(post(http_server.port, list_tools(2), headers).messages[0]) == ["greet"]

    said = edit_until_said(http_server, path, ADDED, "mcpkit: restarted the server process")
    assert said == "mcpkit: restarted the server process after changes to server.py"
    assert post(http_server.port, list_tools(3), headers).status == 404  # the session ended
    headers["mcp-session-id"] = initialize(http_server.port)
    assert names(post(http_server.port, list_tools(4), headers).messages[0]) == ["greet", "added"]
    assert http_server.stop() == 0


def test_a_first_version_that_does_not_load_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(BROKEN)
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", "server.py", "--reload"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mcpkit run: error: server.py:7: {syntax_error_message(BROKEN)}\n"
