"""The stdio transport and ``mcpkit run``, as real subprocesses over pipes.

Includes the seed's four wire cases (the acceptance tests of the protocol runtime), copied here
as literals, against ``mcpkit run examples/build_app.py:app``.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from stdio_support import server_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/build_app.py:app"
TIMEOUT = 15.0


class Server:
    """``python -m mcpkit run TARGET`` with line readers on threads (every read has a timeout).

    ``read=False`` leaves stdout unread (a client that never reads) until :meth:`start_reading`;
    ``env``: another environment than :func:`server_env`.
    """

    def __init__(
        self,
        target: str,
        *args: str,
        cwd: Path = ROOT,
        read: bool = True,
        env: dict[str, str] | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mcpkit", "run", target, *args],
            cwd=cwd,
            env=server_env() if env is None else env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.stderr_lines: queue.Queue[bytes] = queue.Queue()
        self.stderr = b""
        if read:
            self.start_reading()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr_thread.start()

    def start_reading(self) -> None:
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")  # EOF

    def _pump_stderr(self) -> None:
        assert self.proc.stderr is not None
        read: list[bytes] = []
        for line in self.proc.stderr:
            read.append(line)
            self.stderr_lines.put(line)
        self.stderr = b"".join(read)

    def stderr_until(self, text: bytes, timeout: float = TIMEOUT) -> list[bytes]:
        """The stderr lines up to the first (still unseen) one holding ``text``, that one too."""
        seen: list[bytes] = []
        while not seen or text not in seen[-1]:
            try:
                seen.append(self.stderr_lines.get(timeout=timeout))
            except queue.Empty:
                raise AssertionError(f"no {text!r} on stderr within {timeout} s") from None
        return seen

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")

    def line(self, timeout: float = TIMEOUT) -> bytes:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line from the server within {timeout} s") from None

    def read(self, timeout: float = TIMEOUT) -> Any:
        line = self.line(timeout)
        assert line.endswith(b"\n"), f"not one whole line: {line[:200]!r}"
        return json.loads(line)

    def request(self, message: dict[str, Any]) -> Any:
        self.send(message)
        return self.read()

    def initialize(self, version: str) -> dict[str, Any]:
        answer = self.request(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = answer["result"]
        return result

    def all_stderr(self) -> bytes:
        """Everything the server wrote on stderr (call once it has exited)."""
        self._stderr_thread.join(TIMEOUT)
        return self.stderr

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float = TIMEOUT) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=TIMEOUT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def spawn() -> Iterator[Any]:
    started: list[Server] = []

    def start(target: str = EXAMPLE, *args: str, cwd: Path = ROOT, read: bool = True) -> Server:
        server = Server(target, *args, cwd=cwd, read=read)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def example() -> Iterator[Server]:
    """One server of the example app, initialized at 2025-06-18, shared by the module."""
    server = Server(EXAMPLE)
    try:
        server.initialize("2025-06-18")
        yield server
    finally:
        server.stop()


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", *args],
        cwd=cwd,
        env=server_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


# ------------------------------------------------------------------------ the seed's cases

CASE_1_REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
CASE_1_TOOLS = {
    "build-app": {
        "description": "프로젝트를 빌드한다",
        "inputSchema": {
            "type": "object",
            "properties": {
                "project_dir": {"type": "string"},
                "configuration": {"type": "string", "enum": ["Debug", "Release"]},
                "arch": {"type": "string", "enum": ["arm64", "x86_64"]},
            },
            "required": ["project_dir", "arch"],
        },
    },
    "lint-check": {
        "description": "코드 린트 검사를 실행한다",
        "inputSchema": {"type": "object", "properties": {}},
    },
}
CASE_2_REQUEST = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {
        "name": "build-app",
        "arguments": {"project_dir": "./app", "configuration": "Release", "arch": "arm64"},
    },
}
CASE_3_REQUEST = {
    "jsonrpc": "2.0",
    "id": 8,
    "method": "tools/call",
    "params": {"name": "build-app", "arguments": {"project_dir": "./app", "arch": "ARM"}},
}
CASE_3_ERROR = {
    "code": -32602,
    "message": "Invalid params",
    "data": {"field": "arch", "expected": ["arm64", "x86_64"], "received": "ARM"},
}
CASE_4_REQUEST = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def schema_exact(schema: Any) -> Any:
    """A schema for exact comparison, ``required`` compared as a set."""
    if isinstance(schema, dict):
        return {
            key: frozenset(value) if key == "required" else schema_exact(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [schema_exact(item) for item in schema]
    return schema


def test_seed_case_1_tools_list(example: Server) -> None:
    server = example
    answer = server.request(CASE_1_REQUEST)
    assert (answer["jsonrpc"], answer["id"]) == ("2.0", 1)
    tools = {tool["name"]: tool for tool in answer["result"]["tools"]}
    for name, expected in CASE_1_TOOLS.items():
        assert tools[name]["description"] == expected["description"]
        assert schema_exact(tools[name]["inputSchema"]) == schema_exact(expected["inputSchema"])


def test_seed_case_2_tools_call(example: Server) -> None:
    server = example
    answer = server.request(CASE_2_REQUEST)
    assert (answer["jsonrpc"], answer["id"]) == ("2.0", 7)
    assert answer["result"]["structuredContent"] == {
        "exit_code": 0,
        "output": "app-release-arm64.pkg",
    }
    assert answer["result"]["isError"] is False


def test_seed_case_3_invalid_params_up_to_2025_06_18(example: Server) -> None:
    server = example
    answer = server.request(CASE_3_REQUEST)
    assert answer == {"jsonrpc": "2.0", "id": 8, "error": CASE_3_ERROR}


def test_seed_case_3_is_error_form_at_2025_11_25(spawn: Any) -> None:
    server = spawn()
    server.initialize("2025-11-25")
    answer = server.request(CASE_3_REQUEST)
    assert (answer["jsonrpc"], answer["id"]) == ("2.0", 8)
    assert "error" not in answer
    result = answer["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert result["content"][0]["type"] == "text"
    for part in ("arch", '"arm64"', '"x86_64"', '"ARM"'):
        assert part in text


def test_seed_case_4_notification_gets_no_reply(example: Server) -> None:
    server = example  # initialized: it has sent notifications/initialized once already
    server.send(CASE_4_REQUEST)
    answer = server.request({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert answer == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_the_example_runs_without_attr(spawn: Any) -> None:
    """TARGET without :attr works when the module holds exactly one App."""
    for target in ("examples/build_app.py", "examples.build_app", "examples.build_app:app"):
        server = spawn(target)
        assert server.initialize("2025-06-18")["serverInfo"] == {
            "name": "builder",
            "version": "1.0.0",
        }


# --------------------------------------------------------------------------- stdout rules

NOISY_APP = """
    import os
    import sys

    from mcpkit import App

    print("banner at import time")
    app = App("noisy", "1.0")


    @app.tool
    def shout() -> str:
        \"\"\"Print things.\"\"\"
        print("hello")
        print("to stdout", file=sys.stdout, flush=True)
        os.write(1, b"raw fd 1\\n")
        return "said it"
"""


def test_print_in_a_tool_does_not_corrupt_stdout(spawn: Any, tmp_path: Path) -> None:
    (tmp_path / "noisy.py").write_text(textwrap.dedent(NOISY_APP))
    server = spawn(str(tmp_path / "noisy.py") + ":app")
    server.initialize("2025-06-18")
    answer = server.request(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "shout"}}
    )
    assert answer["result"]["content"] == [{"type": "text", "text": "said it"}]
    assert server.request({"jsonrpc": "2.0", "id": 2, "method": "ping"})["id"] == 2
    server.close_stdin()
    assert server.wait() == 0
    assert server.line() == b""  # nothing else ever reached stdout
    stderr = server.all_stderr()
    for text in (b"banner at import time", b"hello", b"to stdout", b"raw fd 1"):
        assert text in stderr


def test_a_one_mib_message_works(example: Server) -> None:
    """Far beyond asyncio's default 64 KiB line limit."""
    server = example
    project = "p" * (1024 * 1024)
    answer = server.request(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {
                "name": "build-app",
                "arguments": {"project_dir": project, "arch": "x86_64"},
            },
        }
    )
    assert answer["result"]["structuredContent"]["output"] == project + "-debug-x86_64.pkg"


def test_an_oversize_line_is_rejected_and_the_server_keeps_serving(example: Server) -> None:
    server = example
    chunk = b"x" * (1024 * 1024)
    server.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"')
    for _ in range(17):
        server.write(chunk)
    server.write(b'"}}\n')
    assert server.read() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: message larger than 16777216 bytes"},
    }
    assert server.request({"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {},
    }


def test_bad_lines_get_errors_and_blank_lines_are_ignored(spawn: Any) -> None:
    server = spawn()
    server.write(b"\n   \n{not json\n")
    assert server.read() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }
    server.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n')
    assert server.read()["id"] == 1


def test_output_is_compact_utf8_one_message_per_line(example: Server) -> None:
    server = example
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    line = server.line()
    assert line.count(b"\n") == 1
    assert "프로젝트를 빌드한다".encode() in line
    assert b'{"jsonrpc":"2.0","id":1,' in line


UNREAD_APP = """
    import sys

    from mcpkit import App

    app = App("unread", "1")
    ran = 0


    @app.tool
    async def blob() -> str:
        \"\"\"10 kB of text; says on stderr that it ran.\"\"\"
        global ran
        ran += 1
        print(f"ran {ran}", file=sys.stderr, flush=True)
        return "x" * 10_000
"""


def test_a_client_that_does_not_read_stops_the_server_reading(spawn: Any, tmp_path: Path) -> None:
    """Output backpressure: while the client reads nothing, the server stops taking input once
    its stdout is full (the client's writes block); once the client reads, every call runs and
    is answered."""
    (tmp_path / "unread.py").write_text(textwrap.dedent(UNREAD_APP))
    server = spawn(str(tmp_path / "unread.py") + ":app", "--log-level", "debug", read=False)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    count = 3000  # ~600 kB: more than one read of the server (256 kB) and the pipe hold
    calls = [
        {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "blob", "_meta": meta},
        }
        for i in range(count)
    ]
    data = b"".join(json.dumps(c).encode() + b"\n" for c in calls)
    writer = threading.Thread(target=server.write, args=(data,), daemon=True)
    writer.start()
    server.stderr_until(b"input paused")
    assert writer.is_alive()  # the server takes no more: the client's write blocks
    server.start_reading()
    answers = [server.read() for _ in range(count)]
    writer.join(TIMEOUT)
    assert not writer.is_alive()
    assert sorted(answer["id"] for answer in answers) == list(range(count))
    server.close_stdin()
    assert server.wait() == 0
    stderr = server.all_stderr().splitlines()
    assert sum(line.startswith(b"ran ") for line in stderr) == count
    # Before the client read anything (the first resume): at most the 64 calls that may run at
    # once and the answers that filled the pipe and the write buffer (64 kB each: 14 of 10 kB),
    # though one read brought in hundreds of calls.
    before = stderr[: next(i for i, line in enumerate(stderr) if b"input resumed" in line)]
    assert sum(line.startswith(b"ran ") for line in before) <= 64 + 14


# ------------------------------------------------------------------------------- shutdown

SLOW_APP = """
    import asyncio
    import time

    from mcpkit import App

    app = App("slow", "1.0")


    @app.tool
    async def wait_async() -> str:
        \"\"\"Wait a minute.\"\"\"
        await asyncio.sleep(60)
        return "late"


    @app.tool
    def wait_sync() -> str:
        \"\"\"Block a minute.\"\"\"
        time.sleep(60)
        return "late"
"""


@pytest.mark.parametrize("how", ["eof", "sigterm"])
@pytest.mark.parametrize("tool", ["wait_async", "wait_sync"])
def test_stdin_eof_and_sigterm_exit_0_promptly(
    spawn: Any, tmp_path: Path, how: str, tool: str
) -> None:
    (tmp_path / "slow.py").write_text(textwrap.dedent(SLOW_APP))
    server = spawn("slow.py:app", cwd=tmp_path)
    server.initialize("2025-06-18")
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool}})
    assert server.request({"jsonrpc": "2.0", "id": 2, "method": "ping"})["id"] == 2
    started = time.monotonic()
    if how == "eof":
        server.close_stdin()
    else:
        server.proc.send_signal(signal.SIGTERM)
    assert server.wait(timeout=10) == 0
    assert time.monotonic() - started < 5
    assert server.line() == b""  # the cancelled call got no response


def test_eof_right_after_start_exits_0(spawn: Any) -> None:
    server = spawn()
    server.close_stdin()
    assert server.wait() == 0
    assert server.line() == b""


# ---------------------------------------------------------------------------- mcpkit run


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("examples/no_such_file.py:app", "no such file: examples/no_such_file.py"),
        ("no_such_module_xyz:app", "no module named 'no_such_module_xyz'"),
        ("examples/build_app.py:nope", "has no attribute 'nope'"),
        ("examples/build_app.py:Arch", "is not an mcpkit App"),
    ],
)
def test_a_bad_target_prints_one_line_and_exits_2(target: str, says: str) -> None:
    done = run_cli(target)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("mcpkit run: error: ")
    assert says in lines[0]


def test_a_module_with_two_apps_needs_an_attr(tmp_path: Path) -> None:
    (tmp_path / "two.py").write_text(
        "from mcpkit import App\na = App('a', '1')\nb = App('b', '1')\n"
    )
    done = run_cli("two.py", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mcpkit run: error: two.py: name the App as MODULE:ATTR (Apps found: a, b)"
    ]


@pytest.mark.parametrize(
    ("options", "click_loaded"),
    [((), False), (("--log-level", "warning"), True), (("--transport", "stdio"), True)],
    ids=["plain", "log-level", "transport"],
)
def test_plain_run_serves_without_click_and_both_paths_agree(
    tmp_path: Path, options: tuple[str, ...], click_loaded: bool
) -> None:
    """``mcpkit run TARGET`` alone skips click (start-up time); with options click parses them.
    Either way the server answers, and a bad TARGET reads the same."""
    (tmp_path / "probe.py").write_text(
        "import sys\nfrom mcpkit import App\napp = App('probe', '1')\n"
        "print('click loaded:', 'click' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mcpkit", "run", "probe.py:app", *options],
        cwd=tmp_path,
        env=server_env(),
        input=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert done.stderr.splitlines()[:2] == [
        f"click loaded: {click_loaded}",
        "mcpkit: serving 'probe' 1 (0 tools) over stdio; waiting for a client on stdin",
    ]
    bad = run_cli("probe.py:nope", *options, cwd=tmp_path)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.splitlines()[-1] == (
        "mcpkit run: error: probe.py:nope: probe has no attribute 'nope'"
    )


def test_stdin_from_dev_null_ends_the_server_at_once() -> None:
    """``/dev/null`` passes for a pipe but epoll refuses it: read it from a thread instead of
    waiting forever for input that cannot come."""
    done = run_cli(EXAMPLE)  # run_cli gives the server subprocess.DEVNULL as stdin
    assert (done.returncode, done.stdout) == (0, "")
    assert "Traceback" not in done.stderr


def test_the_users_own_import_error_shows_its_traceback(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(
        "from mcpkit import App\napp = App('b', '1')\nimport no_such_dependency_xyz\n"
    )
    for target in ("broken.py:app", "broken:app"):
        done = run_cli(target, cwd=tmp_path)
        assert done.returncode not in (0, 2)
        assert done.stdout == ""
        assert "Traceback (most recent call last)" in done.stderr
        assert "broken.py" in done.stderr
        assert "No module named 'no_such_dependency_xyz'" in done.stderr


def test_the_current_directory_is_importable(spawn: Any, tmp_path: Path) -> None:
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text("from mcpkit import App\nmy_app = App('pkg', '2.0')\n")
    server = spawn("mypkg.server", "--log-level", "debug", "--transport", "stdio", cwd=tmp_path)
    assert server.initialize("2025-11-25")["serverInfo"] == {"name": "pkg", "version": "2.0"}


BROKEN_DEFINITIONS_APP = """
from mcpkit import App

app = App("broken", "1")


class Opaque:
    pass


@app.tool
def fine() -> str:
    \"\"\"Works.\"\"\"
    return "ok"


@app.tool
def opaque(thing: Opaque) -> str:
    \"\"\"pydantic cannot describe Opaque.\"\"\"
    return "never"


@app.prompt
def also_opaque(thing: Opaque) -> str:
    \"\"\"Nor here.\"\"\"
    return "never"
"""


def test_broken_definitions_show_on_stderr_after_the_first_answer(
    spawn: Any, tmp_path: Path
) -> None:
    (tmp_path / "broken_defs.py").write_text(textwrap.dedent(BROKEN_DEFINITIONS_APP))
    server = spawn(str(tmp_path / "broken_defs.py") + ":app")
    server.initialize("2025-11-25")  # answered at once; compiling everything comes after
    answer = server.request(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "fine"}}
    )
    assert answer["result"]["content"] == [{"type": "text", "text": "ok"}]
    listed = server.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["fine"]  # not the broken one
    broken = server.request(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "opaque"}}
    )
    assert broken["error"] == {"code": -32603, "message": "Internal error"}
    server.close_stdin()
    assert server.wait() == 0
    stderr = server.all_stderr()
    assert b"tool 'opaque' cannot be compiled" in stderr
    assert b"prompt 'also_opaque' cannot be compiled" in stderr
    assert b"parameter 'thing'" in stderr


QUITTING_APP = """
    import sys

    from mcpkit import App

    app = App("quitting", "1")

    @app.tool
    async def add(a: int, b: int) -> int:
        return a + b

    @app.tool
    async def quit_now() -> str:
        sys.exit(3)

    @app.tool
    def interrupt() -> str:
        raise KeyboardInterrupt
"""


def test_a_tool_that_exits_fails_its_call_and_the_server_keeps_serving(
    spawn: Any, tmp_path: Path
) -> None:
    """``sys.exit()`` or ``KeyboardInterrupt`` in a tool is that call's failure (masked, its
    reference in the log); the calls around it are answered and the server serves on. Only a
    real signal or the end of input stops it."""
    (tmp_path / "quitting.py").write_text(textwrap.dedent(QUITTING_APP))
    server = spawn(str(tmp_path / "quitting.py") + ":app")
    server.initialize("2025-11-25")
    calls = [
        {"name": "add", "arguments": {"a": 1, "b": 2}},
        {"name": "quit_now", "arguments": {}},
        {"name": "interrupt", "arguments": {}},
        {"name": "add", "arguments": {"a": 3, "b": 4}},
    ]
    server.write(
        b"".join(
            json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": p}).encode()
            + b"\n"
            for i, p in enumerate(calls, start=1)
        )
    )
    answers = {answer["id"]: answer["result"] for answer in [server.read() for _ in calls]}
    assert answers[1]["structuredContent"] == {"result": 3}
    assert answers[4]["structuredContent"] == {"result": 7}
    references = {}
    for request_id, tool in ((2, "quit_now"), (3, "interrupt")):
        text = answers[request_id]["content"][0]["text"]
        references[tool] = text.rsplit("reference ", 1)[-1].rstrip(").")
        assert answers[request_id] == {
            "content": [
                {
                    "type": "text",
                    "text": f"Tool {tool!r} failed with an internal error "
                    f"(reference {references[tool]}).",
                }
            ],
            "isError": True,
        }
    later = {"name": "add", "arguments": {"a": 5, "b": 6}}
    again = server.request({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": later})
    assert again["result"]["structuredContent"] == {"result": 11}
    server.close_stdin()
    assert server.wait() == 0
    stderr = server.all_stderr().decode()
    for tool, reference in references.items():
        assert f"tool {tool!r} failed (reference {reference})" in stderr
