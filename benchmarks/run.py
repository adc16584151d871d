"""mcpkit's benchmark harness: real stdio pipes, every server measured interleaved in one run.

    python benchmarks/run.py [--quick] [--json FILE]

Servers are ``ServerSpec``s (a command, its environment, the module that builds its tools
in-process and what it imports); every scenario visits them in turn (A B A B ..., rotating who
goes first) so machine drift hits all alike. The first spec is the subject, the last the
baseline (the floor: stdlib JSON-RPC + pydantic); ratios are subject / baseline. Issue 8 adds
the incumbents as more specs. The driver is stdlib only. Exit code 0 when the run completed
(missed targets are reported, not failures); 1 when a server misbehaved (a crash, a timeout,
an error response, an id unmatched or a wrong result).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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


def default_specs() -> list[ServerSpec]:
    return [
        ServerSpec(
            name="mcpkit",
            argv=(sys.executable, "-m", "mcpkit", "run", "benchmarks/apps/mcpkit_app.py:app"),
            app=APPS / "mcpkit_app.py",
            imports="import mcpkit.protocol.server, mcpkit.transports.stdio",
        ),
        ServerSpec(
            name="floor",
            argv=(sys.executable, str(APPS / "floor.py")),
            app=APPS / "floor.py",
            imports="import asyncio, inspect, json; from pydantic import BaseModel, TypeAdapter",
        ),
    ]


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


# -------------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Target:
    """A bound on subject / baseline: ``at_most`` (lower is better) or ``at_least``."""

    bound: float
    at_most: bool = True

    def text(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.bound:g}x"

    def met(self, ratio: float) -> bool:
        return ratio <= self.bound if self.at_most else ratio >= self.bound


@dataclass
class Row:
    metric: str
    unit: str
    values: dict[str, float]
    spread: dict[str, str] = field(default_factory=dict)
    target: Target | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def fmt(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def median_row(metric: str, unit: str, samples: Samples, target: Target | None = None) -> Row:
    values = {name: statistics.median(s) for name, s in samples.items()}
    spread = {name: f"{fmt(min(s))}-{fmt(max(s))}" for name, s in samples.items()}
    return Row(metric, unit, values, spread, target, samples)


def percentile_rows(tool: str, samples: Samples, target: Target | None) -> list[Row]:
    return [
        Row(f"{tool} p{q}", "us", {n: percentile(s, q) for n, s in samples.items()}, {}, t)
        for q, t in ((50, target), (99, None))
    ]


def ratio(row: Row, subject: str, baseline: str) -> float | None:
    low = row.values.get(baseline)
    high = row.values.get(subject)
    return high / low if high is not None and low else None


def verdict(target: Target | None, r: float | None) -> str:
    if target is None or r is None:
        return ""
    return "PASS" if target.met(r) else "MISS"


def render(title: str, rows: list[Row], names: list[str]) -> list[str]:
    subject, baseline = names[0], names[-1]
    header = ["metric", *names, f"{subject}/{baseline}", "target", ""]
    table = [header]
    for row in rows:
        cells = [f"{row.metric} ({row.unit})"]
        for name in names:
            value = row.values.get(name)
            extra = f" [{row.spread[name]}]" if name in row.spread else ""
            cells.append("n/a" if value is None else fmt(value) + extra)
        r = ratio(row, subject, baseline)
        cells.append("n/a" if r is None else f"{r:.2f}x")
        cells.append(row.target.text() if row.target else "")
        cells.append(verdict(row.target, r))
        table.append(cells)
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [f"## {title}", ""]
    for i, line in enumerate(table):
        lines.append(
            "| " + " | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) + " |"
        )
        if i == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return [*lines, ""]


def machine() -> str:
    try:
        pydantic = metadata.version("pydantic")
    except metadata.PackageNotFoundError:
        pydantic = "?"
    return (
        f"machine: {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.platform()}, pydantic {pydantic}"
    )


# ---------------------------------------------------------------------------------- main


@dataclass(frozen=True)
class Plan:
    spawns: int
    calls: int
    pipelined: int
    compile_tools: int
    compile_repeats: int


FULL = Plan(spawns=10, calls=5000, pipelined=10_000, compile_tools=1000, compile_repeats=5)
QUICK = Plan(spawns=3, calls=500, pipelined=1000, compile_tools=200, compile_repeats=3)


def measure(specs: Sequence[ServerSpec], plan: Plan) -> Iterator[tuple[str, list[Row]]]:
    """Run every scenario, yielding each table as soon as it is measured."""
    start_target = Target(1.3)
    for spec in specs:  # untimed: warms the OS page cache and writes the bytecode caches
        spawn_once(spec, SMALL_TOOLS)
    for tools in (SMALL_TOOLS, MANY_TOOLS):
        first, listed = startup(specs, tools, plan.spawns)
        yield (
            f"Start-up, {tools}-tool app (median [min-max] of {plan.spawns} spawns)",
            [
                median_row("spawn -> initialize", "ms", first, start_target),
                median_row("spawn -> tools/list", "ms", listed, start_target),
            ],
        )
    session = sessions(specs, plan.calls, plan.pipelined)
    yield (
        f"Sequential tools/call latency ({plan.calls:,} calls each)",
        percentile_rows("add", session.latency["add"], Target(5))
        + percentile_rows("add_async", session.latency["add_async"], None),
    )
    yield (
        f"Pipelined throughput of add ({plan.pipelined:,} calls; median [min-max] of 3)",
        [median_row("add, pipelined", "calls/s", session.throughput, Target(0.3, at_most=False))],
    )
    modules = {spec.name: float(modules_imported(spec)) for spec in specs}
    rss = {name: v for name, v in session.peak_rss.items() if v is not None}
    yield (
        "Memory and weight",
        [
            Row("peak RSS after the pipelined run", "MiB", rss),
            Row("modules imported", "count", modules),
        ],
    )
    wall, cpu = compile_runs(specs, plan.compile_tools, plan.compile_repeats)
    yield (
        f"In-process: {plan.compile_tools} tools -> full tools/list definitions "
        f"(median [min-max] of {plan.compile_repeats})",
        [
            median_row("compile + definitions, wall", "ms", wall, Target(1.3)),
            median_row("compile + definitions, CPU", "ms", cpu, Target(1.3)),
        ],
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (well under a minute)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the results here")
    args = parser.parse_args(argv)
    specs = default_specs()
    names = [spec.name for spec in specs]
    started = time.perf_counter()
    print(machine(), flush=True)
    print(f"servers: {', '.join(names)}; {'quick' if args.quick else 'full'} run\n", flush=True)
    report: list[dict[str, Any]] = []
    try:
        for title, rows in measure(specs, QUICK if args.quick else FULL):
            print("\n".join(render(title, rows, names)), flush=True)
            report.append({"table": title, "rows": [row_json(row, names) for row in rows]})
    except BenchError as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        return 1
    print(f"completed in {time.perf_counter() - started:.0f} s")
    if args.json:
        summary = {"machine": machine(), "quick": args.quick, "tables": report}
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


def row_json(row: Row, names: list[str]) -> dict[str, Any]:
    r = ratio(row, names[0], names[-1])
    return {
        "metric": row.metric,
        "unit": row.unit,
        "values": row.values,
        "ratio": r,
        "target": row.target.text() if row.target else None,
        "met": row.target.met(r) if row.target and r is not None else None,
        "samples": row.samples,
    }


if __name__ == "__main__":
    sys.exit(main())
