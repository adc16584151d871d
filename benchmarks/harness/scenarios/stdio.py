"""The stdio scenarios: start-up, sequential latency, pipelined throughput, memory of a session."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from harness.driver import Server, call_line
from harness.process import READ_TIMEOUT
from harness.specs import SMALL_TOOLS, Samples, ServerSpec, rotated, visit_in_turn


def startup(specs: Sequence[ServerSpec], tools: int, spawns: int) -> tuple[Samples, Samples]:
    """Spawn -> ``initialize`` response and spawn -> complete ``tools/list``, in ms."""
    return visit_in_turn(specs, spawns, partial(spawn_once, tools=tools))


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
        for server in rotated(servers, turn):
            samples[server.spec.name].extend(measure(server))
    return samples


@dataclass
class Session:
    """Results of the long-lived sessions: latency, throughput, memory."""

    latency: dict[str, Samples] = field(default_factory=dict)
    throughput: Samples = field(default_factory=dict)
    peak_rss: dict[str, float | None] = field(default_factory=dict)


def sessions(
    specs: Sequence[ServerSpec], calls: int, pipelined_calls: int, pin: bool = False
) -> Session:
    """One small-app server per spec, alive through every call scenario, then its peak RSS.
    ``pin``: the sequential calls with this client and every server on one CPU."""
    servers = [Server(spec, SMALL_TOOLS) for spec in specs]
    out = Session()
    chunks = 10
    for server in servers:
        warm_up(server, calls, pipelined_calls)
    with one_cpu(servers, pin):
        for tool in ("add", "add_async"):
            out.latency[tool] = interleaved(
                servers, chunks, partial(sequential, tool=tool, calls=calls // chunks)
            )
    out.throughput = interleaved(servers, 3, lambda s: [pipelined(s, "add", pipelined_calls)])
    for server in servers:
        out.peak_rss[server.spec.name] = server.peak_rss()
        server.close()
    return out


PINNED = "client and servers on one CPU"


@contextmanager
def one_cpu(servers: Sequence[Server], pin: bool) -> Iterator[None]:
    """With ``pin``, this thread and every thread of ``servers`` on the first CPU this process
    may use while inside, then back on every CPU it may use.

    On a VM whose idle CPUs halt at once, a wake-up across CPUs costs tens of microseconds, and
    where the kernel puts client and server threads changes between runs and after a flood;
    on one CPU every hand-over between threads is a direct switch, so a p50 measures the
    server's own work and varies less. The peers gain from it as mcpkit does."""
    if not pin:
        yield
        return
    allowed = os.sched_getaffinity(0)
    one = {min(allowed)}
    os.sched_setaffinity(0, one)
    for server in servers:
        server.pin(one)
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)
        for server in servers:
            server.pin(allowed)


def warm_up(server: Server, calls: int, pipelined_calls: int) -> None:
    """Initialize, then untimed calls: the first ones build validators and threads."""
    server.initialize()
    for tool in ("add", "add_async"):
        sequential(server, tool, max(50, calls // 20))
    pipelined(server, "add", max(100, pipelined_calls // 10))
