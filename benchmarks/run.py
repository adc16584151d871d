"""mcpkit's benchmark harness: real stdio pipes, every server measured interleaved in one run.

    python benchmarks/run.py [--quick] [--peers] [--json FILE]

Servers are ``ServerSpec``s (a command, its environment, the module that builds its tools
in-process and what it imports); every scenario visits them in turn (A B C A B C ..., rotating
who goes first) so machine drift hits all alike. The first spec is the subject (mcpkit), the
last the floor (stdlib JSON-RPC + pydantic); every table gives the ratio of the subject to each
other server. ``--peers`` adds the incumbents, the official ``mcp`` SDK and FastMCP, each
installed pinned into its own virtual environment in a cache folder outside the repository
(``~/.cache/mcpkit-bench``, or ``$MCPKIT_BENCH_CACHE``; created once, reused), plus the HTTP
scenario (stateless JSON-mode requests per second, a stdlib keep-alive load generator on
loopback) and the weight of each SDK's install. The driver is stdlib only. Exit code 0 when the
run completed (missed targets are reported, not failures); 1 when a server misbehaved (a crash,
a timeout, an error response, an id unmatched or a wrong result) or an install failed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import platform
import queue
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "benchmarks" / "apps"
PROTOCOL_VERSION = "2025-11-25"
READ_TIMEOUT = 60.0  # seconds any single response may take
SMALL_TOOLS = 4  # BENCH_TOOLS=3 selects the small set: add, add_async, describe, stats
MANY_TOOLS = 1000


class BenchError(Exception):
    """A server misbehaved: the run is invalid."""


@dataclass(frozen=True)
class ServerSpec:
    """One server under test. ``BENCH_TOOLS`` is added to ``env`` per scenario."""

    name: str
    argv: tuple[str, ...]
    app: Path  # a module with ``build(functions) -> definitions`` (the in-process scenario)
    imports: str  # the statement importing what the server needs (for the module count)
    env: Mapping[str, str] = field(default_factory=dict)
    python: str = sys.executable
    http: tuple[str, ...] | None = None  # serves stateless JSON-mode HTTP on ``{port}``
    venv: Venv | None = None  # the install whose weight is measured (--peers)


MCPKIT_TARGET = "benchmarks/apps/mcpkit_app.py:app"


def default_specs() -> list[ServerSpec]:
    return [
        ServerSpec(
            name="mcpkit",
            argv=(sys.executable, "-m", "mcpkit", "run", MCPKIT_TARGET),
            app=APPS / "mcpkit_app.py",
            imports="import mcpkit.protocol.server, mcpkit.transports.stdio",
            http=(
                *(sys.executable, "-m", "mcpkit", "run", MCPKIT_TARGET),
                *("--transport", "http", "--stateless", "--json-response", "--port", "{port}"),
            ),
        ),
        ServerSpec(
            name="floor",
            argv=(sys.executable, str(APPS / "floor.py")),
            app=APPS / "floor.py",
            imports="import asyncio, inspect, json; from pydantic import BaseModel, TypeAdapter",
            http=(sys.executable, str(APPS / "floor.py"), "--http", "{port}"),
        ),
    ]


# ---------------------------------------------------------------------------------- peers

MCP_PIN = "mcp==2.3.0"
FASTMCP_PIN = "fastmcp==4.2.3"
CACHE = Path(os.environ.get("MCPKIT_BENCH_CACHE") or Path.home() / ".cache" / "mcpkit-bench")
INSTALL_TIMEOUT = 900.0  # seconds for one ``pip install`` (downloads included)
# Peers log at WARNING like ``mcpkit run``; FastMCP also skips its banner and update check.
FASTMCP_ENV = {
    "FASTMCP_LOG_LEVEL": "WARNING",
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
}


@dataclass(frozen=True)
class Venv:
    """A virtual environment in the cache; ``roots`` are the distributions it is for."""

    folder: Path
    roots: tuple[str, ...]

    @property
    def python(self) -> str:
        if os.name == "nt":
            return str(self.folder / "Scripts" / "python.exe")
        return str(self.folder / "bin" / "python")

    def site_packages(self) -> Path:
        found = sorted(self.folder.glob("lib/python*/site-packages")) or [
            self.folder / "Lib" / "site-packages"
        ]
        return found[0]


def run_bounded(argv: Sequence[str], timeout: float, what: str) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{what}: took over {timeout:.0f} s") from None
    if done.returncode != 0:
        raise BenchError(f"{what}: exit code {done.returncode}\n{done.stderr[-3000:]}")
    return done.stdout


def ensure_venv(
    name: str, requirements: Sequence[str], roots: Sequence[str], salt: str = ""
) -> Venv:
    """``CACHE/<name>-<hash>`` with ``requirements`` installed; created once, then reused.

    The hash covers the requirements, the interpreter and ``salt``; a folder without its
    ``.complete`` marker (an interrupted install) is rebuilt, and stale siblings of the same
    name are removed.
    """
    key = json.dumps([sys.base_prefix, platform.python_version(), *requirements, salt])
    folder = CACHE / f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    venv = Venv(folder, tuple(roots))
    marker = folder / ".complete"
    if marker.exists():
        return venv
    for stale in CACHE.glob(f"{name}-????????????"):
        shutil.rmtree(stale, ignore_errors=True)
    started = time.perf_counter()
    shown = " ".join(Path(r).name if os.sep in r else r for r in requirements) or "nothing"
    print(f"installing {shown} into {folder} ...", flush=True)
    run_bounded([sys.executable, "-m", "venv", str(folder)], 300, f"creating {folder}")
    if requirements:
        pip = [venv.python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input"]
        run_bounded([*pip, "-q", *requirements], INSTALL_TIMEOUT, f"installing {shown}")
    marker.write_text(json.dumps(list(requirements)) + "\n")
    print(f"  done in {time.perf_counter() - started:.0f} s", flush=True)
    return venv


def installed_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def shared_pins() -> list[str]:
    """pydantic and uvicorn at the versions mcpkit runs with: the same for every server."""
    return [
        f"{dist}=={version}"
        for dist in ("pydantic", "uvicorn")
        if (version := installed_version(dist)) is not None
    ]


def install_key() -> str:
    """What the mcpkit install is rebuilt for: pyproject.toml (its dependencies) and the version.

    Not every source edit: the closure is what the weight compares, and mcpkit's own files
    change it by a few KiB.
    """
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    digest.update((ROOT / "mcpkit" / "_version.py").read_bytes())
    return digest.hexdigest()


def peer_specs() -> list[ServerSpec]:
    """mcpkit, the official SDK, FastMCP, the floor; installs what is missing (bounded)."""
    pins = shared_pins()
    CACHE.mkdir(parents=True, exist_ok=True)
    mcp = ensure_venv("mcp", [MCP_PIN, *pins], ["mcp"])
    fastmcp = ensure_venv("fastmcp", [FASTMCP_PIN, *pins], ["fastmcp"])
    core = ensure_venv("mcpkit-core", [str(ROOT)], ["mcpkit"], salt=install_key())
    subject, floor = default_specs()
    peers = []
    for name, venv, imports, env in (
        ("mcp", mcp, "from mcp.server.mcpserver import MCPServer; import mcp.server.stdio", {}),
        ("fastmcp", fastmcp, "from fastmcp import FastMCP", FASTMCP_ENV),
    ):
        app = APPS / f"peer_{name}.py"
        peers.append(
            ServerSpec(
                name=name,
                argv=(venv.python, str(app)),
                app=app,
                imports=imports,
                env=env,
                python=venv.python,
                http=(venv.python, str(app), "--http", "{port}"),
                venv=venv,
            )
        )
    return [replace(subject, venv=core), *peers, floor]


# Bytecode caches for every child, outside the repo: start-up then measures what an installed
# package costs (compiled once), not recompiling sources after each edit or under
# PYTHONDONTWRITEBYTECODE.
PYCACHE = Path(tempfile.gettempdir()) / "mcpkit-bench-pycache"


def child_env(spec: ServerSpec, tools: int | None = None) -> dict[str, str]:
    env = dict(os.environ)
    paths = [str(ROOT), str(APPS), env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    if tools is not None:
        env["BENCH_TOOLS"] = str(tools)
    env.update(spec.env)
    return env


def rotated(specs: Sequence[ServerSpec], turn: int) -> list[ServerSpec]:
    """The visiting order for one turn: A B, then B A, ... (each goes first equally often)."""
    shift = turn % len(specs)
    return [*specs[shift:], *specs[:shift]]


# ------------------------------------------------------------------------------ a server


class Server:
    """A spawned server: newline-delimited JSON-RPC over its stdin/stdout, every read bounded."""

    def __init__(self, spec: ServerSpec, tools: int) -> None:
        self.spec = spec
        self.tools = tools
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in cleanup)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            spec.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=ROOT,
            env=child_env(spec, tools),
            bufsize=0,
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.stdin_fd = self.proc.stdin.fileno()
        self.stdout_fd = self.proc.stdout.fileno()
        self.buffer = bytearray()
        self.next_id = 0

    def fail(self, what: str) -> BenchError:
        """Kill the server and describe what went wrong, with the end of its stderr."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].decode(errors="replace")
        self.cleanup()
        return BenchError(f"{self.spec.name} ({self.tools} tools): {what}\n--- its stderr:\n{tail}")

    def write(self, data: bytes) -> None:
        error = self.write_all(data)
        if error is not None:
            raise self.fail(f"cannot write to its stdin: {error}")

    def write_all(self, data: bytes) -> OSError | None:
        """Write everything (blocking); safe from another thread: an error is returned."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.stdin_fd, view) :]
        except OSError as exc:
            return exc
        return None

    def readline(self, timeout: float = READ_TIMEOUT) -> bytes:
        deadline = 0.0
        while (end := self.buffer.find(b"\n")) < 0:
            if not deadline:
                deadline = time.monotonic() + timeout
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.stdout_fd], [], [], remaining)[0]:
                raise self.fail(f"no complete response within {timeout:.0f} s")
            chunk = os.read(self.stdout_fd, 1 << 16)
            if not chunk:
                raise self.fail(f"closed its stdout (exit code {self.proc.poll()})")
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return line

    def response(self, request_id: int) -> dict[str, Any]:
        """The next response (notifications and server requests are skipped); checks the id."""
        while True:
            message = self.decode(self.readline())
            if "result" in message or "error" in message:
                break
        if message.get("id") != request_id:
            raise self.fail(f"answered id {message.get('id')!r}, expected {request_id}")
        if "error" in message:
            raise self.fail(f"error response to id {request_id}: {message['error']}")
        return message

    def decode(self, line: bytes) -> dict[str, Any]:
        try:
            message = json.loads(line)
        except ValueError:
            raise self.fail(f"wrote a line that is not JSON: {line[:200]!r}") from None
        if not isinstance(message, dict):
            raise self.fail(f"wrote a non-object message: {line[:200]!r}")
        return message

    def request_line(self, method: str, params: dict[str, Any]) -> tuple[int, bytes]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return self.next_id, json.dumps(message, separators=(",", ":")).encode() + b"\n"

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id, line = self.request_line(method, params)
        self.write(line)
        result: dict[str, Any] = self.response(request_id)["result"]
        return result

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcpkit-bench", "version": "1"},
            },
        )
        self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def list_tools(self) -> int:
        """Every page of ``tools/list``; checks the count and returns it."""
        count = 0
        params: dict[str, Any] = {}
        while True:
            result = self.request("tools/list", params)
            count += len(result["tools"])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            params = {"cursor": cursor}
        if count != self.tools:
            raise self.fail(f"tools/list gave {count} tools, expected {self.tools}")
        return count

    def peak_rss(self) -> float | None:
        """VmHWM in MiB (Linux); None where /proc is absent."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return None

    def close(self) -> None:
        """Close stdin and wait: a server must exit cleanly when its client goes away."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=READ_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise self.fail("did not exit within 60 s of stdin closing") from None
        if code != 0:
            raise self.fail(f"exited with code {code}")
        self.cleanup()

    def cleanup(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            if stream is not None and not stream.closed:
                stream.close()


# ----------------------------------------------------------------------------- scenarios

Samples = dict[str, list[float]]


def startup(specs: Sequence[ServerSpec], tools: int, spawns: int) -> tuple[Samples, Samples]:
    """Spawn -> ``initialize`` response and spawn -> complete ``tools/list``, in ms."""
    first: Samples = {spec.name: [] for spec in specs}
    listed: Samples = {spec.name: [] for spec in specs}
    for turn in range(spawns):
        for spec in rotated(specs, turn):
            to_init, to_list = spawn_once(spec, tools)
            first[spec.name].append(to_init)
            listed[spec.name].append(to_list)
    return first, listed


def spawn_once(spec: ServerSpec, tools: int) -> tuple[float, float]:
    server = Server(spec, tools)
    server.initialize()
    to_init = time.perf_counter() - server.started
    server.list_tools()
    to_list = time.perf_counter() - server.started
    server.close()
    return to_init * 1000, to_list * 1000


def check_sum(server: Server, message: dict[str, Any], expected: int) -> None:
    """A ``tools/call`` result of ``add``: structuredContent.result (or the text) is the sum."""
    result = message.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        raise server.fail(f"call id {message.get('id')} failed: {message}")
    structured = result.get("structuredContent")
    if isinstance(structured, dict) and "result" in structured:
        value = structured["result"]
    else:
        content = result.get("content") or [{}]
        value = content[0].get("text")
        value = int(value) if isinstance(value, str) and value.isdigit() else value
    if value != expected or isinstance(value, bool):
        raise server.fail(f"call id {message.get('id')} returned {value!r}, expected {expected}")


def call_line(request_id: int, tool: str) -> bytes:
    """``tool(a=id, b=2*id+1)``: the expected sum, 3*id+1, is known from the id alone."""
    arguments = {"a": request_id, "b": 2 * request_id + 1}
    params = {"name": tool, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def sequential(server: Server, tool: str, calls: int) -> list[float]:
    """Round-trip times in microseconds, one call in flight at a time."""
    times = []
    for _ in range(calls):
        server.next_id += 1
        request_id = server.next_id
        line = call_line(request_id, tool)
        started = time.perf_counter()
        server.write(line)
        raw = server.readline()
        times.append((time.perf_counter() - started) * 1e6)
        message = server.decode(raw)
        if message.get("id") != request_id:
            raise server.fail(f"answered id {message.get('id')!r}, expected {request_id}")
        check_sum(server, message, 3 * request_id + 1)
    return times


def pipelined(server: Server, tool: str, calls: int) -> float:
    """Calls per second with every request written at once by a writer thread."""
    first = server.next_id + 1
    server.next_id += calls
    blob = b"".join(call_line(i, tool) for i in range(first, first + calls))
    writer = threading.Thread(target=server.write_all, args=(blob,), daemon=True)
    pending = set(range(first, first + calls))
    started = time.perf_counter()
    writer.start()
    while pending:
        message = server.decode(server.readline())
        if "result" not in message and "error" not in message:
            continue  # a notification
        request_id = message.get("id")
        if request_id not in pending:
            raise server.fail(f"answered id {request_id!r}, which is unknown or answered twice")
        pending.discard(request_id)
        check_sum(server, message, 3 * request_id + 1)
    elapsed = time.perf_counter() - started
    writer.join(READ_TIMEOUT)
    return calls / elapsed


def interleaved(
    servers: Sequence[Server], turns: int, measure: Callable[[Server], list[float]]
) -> Samples:
    samples: Samples = {server.spec.name: [] for server in servers}
    for turn in range(turns):
        shift = turn % len(servers)
        for server in [*servers[shift:], *servers[:shift]]:
            samples[server.spec.name].extend(measure(server))
    return samples


@dataclass
class Session:
    """Results of the long-lived sessions: latency, throughput, memory."""

    latency: dict[str, Samples] = field(default_factory=dict)
    throughput: Samples = field(default_factory=dict)
    peak_rss: dict[str, float | None] = field(default_factory=dict)


def sessions(specs: Sequence[ServerSpec], calls: int, pipelined_calls: int) -> Session:
    """One small-app server per spec, alive through every call scenario, then its peak RSS."""
    servers = [Server(spec, SMALL_TOOLS) for spec in specs]
    out = Session()
    chunks = 10
    for server in servers:
        server.initialize()
        for tool in ("add", "add_async"):  # warm-up: first calls build validators, threads
            sequential(server, tool, max(50, calls // 20))
        pipelined(server, "add", max(100, pipelined_calls // 10))
    for tool in ("add", "add_async"):
        out.latency[tool] = interleaved(
            servers, chunks, partial(sequential, tool=tool, calls=calls // chunks)
        )
    out.throughput = interleaved(servers, 3, lambda s: [pipelined(s, "add", pipelined_calls)])
    for server in servers:
        out.peak_rss[server.spec.name] = server.peak_rss()
        server.close()
    return out


def modules_imported(spec: ServerSpec) -> int:
    code = f"import sys; {spec.imports}; print(len(sys.modules))"
    done = subprocess.run(
        [spec.python, "-c", code],
        env=child_env(spec),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=READ_TIMEOUT,
        check=False,
    )
    if done.returncode != 0:
        raise BenchError(f"{spec.name}: counting modules failed:\n{done.stderr[-2000:]}")
    return int(done.stdout.split()[-1])


def compile_seconds(spec: ServerSpec, count: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one fresh process building ``count`` tools."""
    argv = [spec.python, str(APPS / "compile_bench.py"), str(spec.app), str(count)]
    try:
        done = subprocess.run(
            argv,
            env=child_env(spec),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BenchError(f"{spec.name}: compiling {count} tools took over 300 s") from None
    if done.returncode != 0:
        raise BenchError(f"{spec.name}: compiling {count} tools failed:\n{done.stderr[-2000:]}")
    timing = json.loads(done.stdout.splitlines()[-1])
    return float(timing["seconds"]), float(timing["cpu_seconds"])


def compile_runs(specs: Sequence[ServerSpec], count: int, repeats: int) -> tuple[Samples, Samples]:
    wall: Samples = {spec.name: [] for spec in specs}
    cpu: Samples = {spec.name: [] for spec in specs}
    for turn in range(repeats):
        for spec in rotated(specs, turn):
            seconds, cpu_seconds = compile_seconds(spec, count)
            wall[spec.name].append(seconds * 1000)
            cpu[spec.name].append(cpu_seconds * 1000)
    return wall, cpu


# ---------------------------------------------------------------------------------- HTTP

HTTP_PATH = "/mcp"
HTTP_CONNECTIONS = (1, 16)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def http_request(port: int, request_id: int) -> bytes:
    """A keep-alive POST of ``tools/call add`` (handshake era, no session: stateless)."""
    body = call_line(request_id, "add")[:-1]
    head = (
        f"POST {HTTP_PATH} HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {PROTOCOL_VERSION}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def http_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response: the status and the body (Content-Length or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() != "chunked":
        raise ValueError(f"a response without a length: {head!r}")
    body = bytearray()
    while size := int((await reader.readline()).split(b";")[0], 16):
        body += await reader.readexactly(size)
        await reader.readexactly(2)
    await reader.readuntil(b"\r\n")  # the empty trailer
    return status, bytes(body)


def http_answer_ok(status: int, body: bytes, request_id: int) -> bool:
    """A 200 whose JSON answers ``request_id`` with the right sum (SSE bodies do not count)."""
    if status != 200:
        return False
    try:
        message = json.loads(body)
        result = message["result"]
        value = result["structuredContent"]["result"]
    except (ValueError, KeyError, TypeError):
        return False
    return bool(message.get("id") == request_id and value == 3 * request_id + 1)


async def http_load(port: int, connections: int, seconds: float) -> tuple[float, int]:
    """Requests per second answered right over ``connections`` keep-alive connections, and
    the number of wrong answers; each connection sends its next request when its last is
    answered, until ``seconds`` have passed (at least one request each)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds

    async def client(index: int) -> tuple[int, int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        good = bad = 0
        request_id = index
        try:
            while True:  # at least one request per connection
                request_id += connections  # ids unique across connections
                writer.write(http_request(port, request_id))
                status, body = await asyncio.wait_for(http_response(reader), READ_TIMEOUT)
                if http_answer_ok(status, body, request_id):
                    good += 1
                else:
                    bad += 1
                if loop.time() >= deadline:
                    break
        finally:
            writer.close()
        return good, bad

    started = time.perf_counter()
    counts = await asyncio.gather(*(client(i) for i in range(connections)))
    elapsed = time.perf_counter() - started
    return sum(good for good, _ in counts) / elapsed, sum(bad for _, bad in counts)


class HttpServer:
    """``spec.http`` on a free loopback port, BENCH_TOOLS=4; ready once it answers a call."""

    def __init__(self, spec: ServerSpec) -> None:
        assert spec.http is not None
        self.spec = spec
        self.port = free_port()
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [arg.replace("{port}", str(self.port)) for arg in spec.http],
            stdin=subprocess.DEVNULL,
            stdout=self.stderr,
            stderr=self.stderr,
            cwd=ROOT,
            env=child_env(spec, SMALL_TOOLS),
        )

    def fail(self, what: str) -> BenchError:
        self.stop()
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].decode(errors="replace")
        self.stderr.close()
        return BenchError(f"{self.spec.name} over HTTP: {what}\n--- its output:\n{tail}")

    def wait_ready(self, timeout: float = READ_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self.fail(f"exited with code {self.proc.returncode}")
            try:
                rate, bad = asyncio.run(http_load(self.port, 1, 0.0))
            except OSError:
                time.sleep(0.1)
                continue
            if bad or not rate:
                raise self.fail("did not answer a tools/call with a 200 and the right sum")
            return
        raise self.fail(f"not serving within {timeout:.0f} s")

    def load(self, connections: int, seconds: float) -> float:
        try:
            rate, bad = asyncio.run(http_load(self.port, connections, seconds))
        except (OSError, ValueError, asyncio.IncompleteReadError, asyncio.TimeoutError) as exc:
            raise self.fail(f"{connections} connections: {exc!r}") from None
        if bad:
            raise self.fail(f"{bad} answers were not a 200 with the right id and sum")
        return rate

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def http_rates(specs: Sequence[ServerSpec], seconds: float, rounds: int) -> dict[int, Samples]:
    """Requests/s per connection count; every server up at once, measured in turn."""
    served = [spec for spec in specs if spec.http is not None]
    servers: list[HttpServer] = []
    rates: dict[int, Samples] = {n: {s.name: [] for s in served} for n in HTTP_CONNECTIONS}
    try:
        for spec in served:
            servers.append(HttpServer(spec))
        for server in servers:
            server.wait_ready()
            server.load(max(HTTP_CONNECTIONS), min(1.0, seconds))  # warm-up
        for turn in range(rounds):
            for connections in HTTP_CONNECTIONS:
                shift = turn % len(servers)
                for server in [*servers[shift:], *servers[:shift]]:
                    rate = server.load(connections, seconds)
                    rates[connections][server.spec.name].append(rate)
    finally:
        for server in servers:
            server.stop()
            server.stderr.close()
    return rates


# -------------------------------------------------------------------------------- weight

# Run in a cache venv: its distributions and the dependency closure of some of them (pip's
# vendored ``packaging`` evaluates the markers; the driver itself stays stdlib only).
CLOSURE_SCRIPT = """
import json, re, sys
from importlib import metadata
from pip._vendor.packaging.requirements import Requirement
def norm(name): return re.sub(r"[-_.]+", "-", name).lower()
installed = {norm(d.metadata["Name"]): d for d in metadata.distributions()}
closure, seen, todo = set(), set(), [(norm(n), "") for n in sys.argv[1:]]
while todo:
    name, extra = todo.pop()
    if (name, extra) in seen or name not in installed:
        continue
    seen.add((name, extra))
    closure.add(name)
    for text in installed[name].requires or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": extra}):
            todo += [(norm(req.name), e) for e in ("", *sorted(req.extras))]
print(json.dumps({"installed": sorted(installed), "closure": sorted(closure)}))
"""
CORE_ROOTS = ("pydantic", "click", "docstring-parser")


def distributions(venv: Venv, roots: Sequence[str]) -> tuple[set[str], set[str]]:
    """The distributions installed in ``venv`` and the closure of ``roots`` among them."""
    out = run_bounded(
        [venv.python, "-c", CLOSURE_SCRIPT, *roots], READ_TIMEOUT, f"listing {venv.folder}"
    )
    found = json.loads(out)
    return set(found["installed"]), set(found["closure"])


def tree_size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
    return total


@dataclass
class Weight:
    size_mib: dict[str, float] = field(default_factory=dict)
    count: dict[str, float] = field(default_factory=dict)
    closures: dict[str, list[str]] = field(default_factory=dict)
    core_extra: list[str] | None = None  # mcpkit's distributions beyond its allowed core


def weights(specs: Sequence[ServerSpec]) -> Weight:
    """Installed size (site-packages minus a bare venv's) and distributions of each closure."""
    bare = ensure_venv("bare", [], [])
    bare_dists, _ = distributions(bare, [])
    bare_size = tree_size(bare.site_packages())
    out = Weight()
    for spec in specs:
        if spec.venv is None:
            continue
        installed, closure = distributions(spec.venv, spec.venv.roots)
        extra = installed - bare_dists - closure
        if extra:
            raise BenchError(f"{spec.venv.folder} holds more than {spec.name}'s closure: {extra}")
        size = tree_size(spec.venv.site_packages()) - bare_size
        out.size_mib[spec.name] = size / (1 << 20)
        out.count[spec.name] = float(len(closure))
        out.closures[spec.name] = sorted(closure)
        if spec.name == "mcpkit":
            _, allowed = distributions(spec.venv, CORE_ROOTS)
            out.core_extra = sorted(closure - allowed - {"mcpkit"})
    return out


# -------------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Target:
    """A bound on subject / ``versus``: ``at_most`` (lower is better) or ``at_least``."""

    bound: float
    at_most: bool = True
    versus: str = "floor"

    def text(self, named: bool) -> str:
        bound = f"{'<=' if self.at_most else '>='} {self.bound:g}x"
        return f"{bound} {self.versus}" if named else bound

    def met(self, ratio: float) -> bool:
        return ratio <= self.bound if self.at_most else ratio >= self.bound


@dataclass
class Row:
    metric: str
    unit: str
    values: dict[str, float]
    spread: dict[str, str] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    samples: dict[str, list[float]] = field(default_factory=dict)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def median_row(metric: str, unit: str, samples: Samples, targets: Sequence[Target] = ()) -> Row:
    samples = {name: s for name, s in samples.items() if s}
    values = {name: statistics.median(s) for name, s in samples.items()}
    spread = {name: f"{fmt(min(s))}-{fmt(max(s))}" for name, s in samples.items()}
    return Row(metric, unit, values, spread, list(targets), samples)


def percentile_rows(tool: str, samples: Samples, targets: Sequence[Target]) -> list[Row]:
    return [
        Row(f"{tool} p{q}", "us", {n: percentile(s, q) for n, s in samples.items()}, {}, list(t))
        for q, t in ((50, targets), (99, ()))
    ]


def ratio(row: Row, subject: str, baseline: str) -> float | None:
    low = row.values.get(baseline)
    high = row.values.get(subject)
    return high / low if high is not None and low else None


@dataclass(frozen=True)
class Verdict:
    table: str
    metric: str
    target: str
    ratio: float
    met: bool


def verdicts(title: str, row: Row, names: list[str]) -> list[Verdict]:
    """The row's targets whose reference server ran, each judged."""
    out = []
    for target in row.targets:
        r = ratio(row, names[0], target.versus) if target.versus in names else None
        if r is not None:
            text = target.text(named=True)
            out.append(Verdict(title, f"{row.metric} ({row.unit})", text, r, target.met(r)))
    return out


def render(title: str, rows: list[Row], names: list[str]) -> list[str]:
    """A Markdown table: each server's value [spread], the subject's ratio to each other."""
    subject, others = names[0], names[1:]
    named = len(others) > 1  # with one reference the target column need not name it
    header = ["metric", *names, *(f"{subject}/{name}" for name in others), "target", ""]
    table = [header]
    for row in rows:
        cells = [f"{row.metric} ({row.unit})"]
        for name in names:
            value = row.values.get(name)
            extra = f" [{row.spread[name]}]" if name in row.spread else ""
            cells.append("n/a" if value is None else fmt(value) + extra)
        for name in others:
            r = ratio(row, subject, name)
            cells.append("n/a" if r is None else f"{r:.2f}x")
        judged = verdicts(title, row, names)
        cells.append("; ".join(v.target if named else v.target.rsplit(" ", 1)[0] for v in judged))
        cells.append("; ".join("PASS" if v.met else "MISS" for v in judged))
        table.append(cells)
    return [f"## {title}", "", *markdown(table), ""]


def markdown(table: list[list[str]]) -> list[str]:
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = []
    for i, line in enumerate(table):
        lines.append(
            "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
        )
        if i == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines


def render_targets(judged: list[Verdict], core: tuple[bool, str] | None) -> list[str]:
    table = [["scenario", "metric", "target (mcpkit / server)", "ratio", ""]]
    for v in judged:
        table.append([v.table.split(" (")[0], v.metric, v.target, f"{v.ratio:.2f}x"])
        table[-1].append("PASS" if v.met else "MISS")
    if core is not None:
        met, detail = core
        table.append(["Weight", "core install", "pydantic, click, docstring-parser", detail])
        table[-1].append("PASS" if met else "MISS")
    passed = sum(v.met for v in judged) + (core is not None and core[0])
    total = len(judged) + (core is not None)
    return ["## Targets", "", *markdown(table), "", f"{passed} of {total} targets met", ""]


def load_average() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except (AttributeError, OSError):
        return "load average n/a"
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f}"


def cpu_times() -> tuple[int, int] | None:
    """(steal, total) in clock ticks over all CPUs since boot, from Linux's /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (fields[7], sum(fields)) if len(fields) == 8 else None


def steal_note(
    before: tuple[int, int] | None,
    after: tuple[int, int] | None,
    during: str = "since the previous table",
) -> str | None:
    """The share of CPU time the hypervisor gave to other guests between two readings (on a
    VM, the main cause of figures that jump between runs), when it is measurable."""
    if before is None or after is None or after[1] - before[1] < 100:
        return None
    share = (after[0] - before[0]) / (after[1] - before[1])
    return f"host steal {during}: {share:.1%} of CPU time"


def machine() -> str:
    pydantic = installed_version("pydantic") or "?"
    return (
        f"machine: {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.platform()}, pydantic {pydantic}"
    )


def thread_round_trip(trips: int = 5000) -> float:
    """Median microseconds for this Python to hand a lock to another thread and get it back:
    the least a sync tool run off the event loop costs over an async one on this machine."""
    jobs: queue.SimpleQueue[threading.Lock | None] = queue.SimpleQueue()

    def echo() -> None:
        while (lock := jobs.get()) is not None:
            lock.release()

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    times = []
    for _ in range(trips):
        lock = threading.Lock()
        lock.acquire()
        start = time.perf_counter_ns()
        jobs.put(lock)
        lock.acquire()
        times.append(time.perf_counter_ns() - start)
    jobs.put(None)
    thread.join()
    return statistics.median(times) / 1000


def versions(specs: Sequence[ServerSpec]) -> str:
    """The installed versions each server runs with (read in its own interpreter)."""
    code = (
        "from importlib import metadata as m; import sys\n"
        "for d in sys.argv[1:]:\n"
        "    try: print(d + ' ' + m.version(d))\n"
        "    except m.PackageNotFoundError: pass"
    )
    parts = []
    for spec in specs:
        if spec.venv is None and spec.name != "mcpkit":
            continue
        dists = [spec.name, "pydantic", "uvicorn"]
        out = run_bounded([spec.python, "-c", code, *dists], READ_TIMEOUT, "reading versions")
        parts.append(f"{spec.name}: " + ", ".join(out.split("\n")[:-1]))
    return "versions: " + "; ".join(parts)


# ---------------------------------------------------------------------------------- main


@dataclass(frozen=True)
class Plan:
    spawns: int
    many_spawns: int  # of the 1,000-tool app
    calls: int
    pipelined: int
    compile_tools: int
    compile_repeats: int
    http_seconds: float
    http_rounds: int


FULL = Plan(
    spawns=10,
    many_spawns=10,
    calls=5000,
    pipelined=10_000,
    compile_tools=1000,
    compile_repeats=5,
    http_seconds=5.0,
    http_rounds=3,
)
QUICK = Plan(
    spawns=3,
    many_spawns=3,
    calls=500,
    pipelined=1000,
    compile_tools=200,
    compile_repeats=3,
    http_seconds=2.0,
    http_rounds=1,
)

# With four servers, fewer slow spawns and compiles keep ``--peers --quick`` under 3 minutes.
QUICK_PEERS = replace(QUICK, many_spawns=2, compile_repeats=2)

# Issue 8's targets, as ratios mcpkit / incumbent (each applies only when that server ran).
INCUMBENTS = ("mcp", "fastmcp")


def against(bound: float, *versus: str, at_most: bool = True) -> list[Target]:
    return [Target(bound, at_most, name) for name in versus]


def measure(
    specs: Sequence[ServerSpec], plan: Plan, peers: bool
) -> Iterator[tuple[str, list[Row]]]:
    """Run every scenario, yielding each table as soon as it is measured."""
    floor_start = Target(1.3)
    for spec in specs:  # untimed: warms the OS page cache and writes the bytecode caches
        spawn_once(spec, SMALL_TOOLS)
    for tools, spawns, faster in (
        (SMALL_TOOLS, plan.spawns, 0.25),
        (MANY_TOOLS, plan.many_spawns, 0.5),
    ):
        first, listed = startup(specs, tools, spawns)
        yield (
            f"Start-up, {tools}-tool app (median [min-max] of {spawns} spawns)",
            [
                median_row("spawn -> initialize", "ms", first, [floor_start]),
                median_row(
                    "spawn -> tools/list",
                    "ms",
                    listed,
                    [floor_start, *against(faster, *INCUMBENTS)],
                ),
            ],
        )
    session = sessions(specs, plan.calls, plan.pipelined)
    yield (
        f"Sequential tools/call latency ({plan.calls:,} calls each)",
        percentile_rows("add", session.latency["add"], [Target(5), *against(0.25, "mcp")])
        + percentile_rows("add_async", session.latency["add_async"], against(0.125, "mcp")),
    )
    yield (
        f"Pipelined throughput of add ({plan.pipelined:,} calls; median [min-max] of 3)",
        [
            median_row(
                "add, pipelined",
                "calls/s",
                session.throughput,
                [Target(0.3, at_most=False), *against(15, "mcp", at_most=False)],
            )
        ],
    )
    if peers:
        rates = http_rates(specs, plan.http_seconds, plan.http_rounds)
        yield (
            f"HTTP, stateless JSON mode: tools/call add per second "
            f"({plan.http_seconds:g} s per measurement; median [min-max] of {plan.http_rounds})",
            [
                median_row(
                    f"{n} connection{'s' if n > 1 else ''}",
                    "req/s",
                    rates[n],
                    against(3, "mcp", at_most=False),
                )
                for n in HTTP_CONNECTIONS
            ],
        )
    modules = {spec.name: float(modules_imported(spec)) for spec in specs}
    rss = {name: v for name, v in session.peak_rss.items() if v is not None}
    rows = [
        Row("peak RSS after the pipelined run", "MiB", rss, targets=against(0.5, "mcp")),
        Row("modules imported", "count", modules),
    ]
    if peers:
        weight = weights(specs)
        rows += [
            Row("installed size (site-packages)", "MiB", weight.size_mib),
            Row("distributions in the closure", "count", weight.count),
        ]
        WEIGHTS.append(weight)
    yield "Memory and weight", rows
    wall, cpu = compile_runs(specs, plan.compile_tools, plan.compile_repeats)
    yield (
        f"In-process: {plan.compile_tools} tools -> full tools/list definitions "
        f"(median [min-max] of {plan.compile_repeats})",
        [
            median_row("compile + definitions, wall", "ms", wall, [Target(1.3)]),
            median_row("compile + definitions, CPU", "ms", cpu, [Target(1.3)]),
        ],
    )


WEIGHTS: list[Weight] = []  # the weight measured by ``measure`` (for the targets and JSON)


def core_verdict() -> tuple[bool, str] | None:
    if not WEIGHTS or WEIGHTS[0].core_extra is None:
        return None
    extra = WEIGHTS[0].core_extra
    return not extra, "only those" if not extra else "also " + ", ".join(extra)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a short run (under a minute; under 3 with --peers)"
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help=f"also measure {MCP_PIN} and {FASTMCP_PIN} (installed into {CACHE} on first use)",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the results here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(machine(), flush=True)
    try:
        specs = peer_specs() if args.peers else default_specs()
        names = [spec.name for spec in specs]
        if args.peers:
            print(versions(specs), flush=True)
        print(f"{load_average()} at the start", flush=True)
        hop = thread_round_trip()
        print(f"thread round trip: {fmt(hop)} us (the hop a sync tool pays over an async one)")
        print(f"servers: {', '.join(names)}; {'quick' if args.quick else 'full'} run\n", flush=True)
        report: list[dict[str, Any]] = []
        judged: list[Verdict] = []
        plan = (QUICK_PEERS if args.peers else QUICK) if args.quick else FULL
        first = last = cpu_times()
        for title, rows in measure(specs, plan, args.peers):
            now = cpu_times()
            print("\n".join(render(title, rows, names)), flush=True)
            if note := steal_note(last, now):
                print(f"{note}\n", flush=True)
            last = now
            report.append({"table": title, "rows": [row_json(row, names) for row in rows]})
            judged += [v for row in rows for v in verdicts(title, row, names)]
    except BenchError as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        return 1
    core = core_verdict()
    if WEIGHTS:
        for name, closure in WEIGHTS[0].closures.items():
            print(f"{name} closure ({len(closure)}): {', '.join(closure)}")
        print()
    print("\n".join(render_targets(judged, core)))
    print(f"{load_average()} at the end")
    if note := steal_note(first, cpu_times(), "during the run"):
        print(note)
    print(f"completed in {time.perf_counter() - started:.0f} s")
    if args.json:
        summary = {
            "machine": machine(),
            "thread_round_trip_us": hop,
            "quick": args.quick,
            "servers": names,
            "tables": report,
            "closures": WEIGHTS[0].closures if WEIGHTS else {},
            "core_install": core,
        }
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


def row_json(row: Row, names: list[str]) -> dict[str, Any]:
    return {
        "metric": row.metric,
        "unit": row.unit,
        "values": row.values,
        "ratios": {name: ratio(row, names[0], name) for name in names[1:]},
        "targets": [
            {"target": v.target, "ratio": v.ratio, "met": v.met} for v in verdicts("", row, names)
        ],
        "samples": row.samples,
    }


if __name__ == "__main__":
    sys.exit(main())
