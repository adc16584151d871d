"""How much a run measures (``FULL``, ``QUICK``) and what: every table, in order, with the
targets each row is judged against."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from importlib.util import find_spec
from typing import NamedTuple

from harness.report import Row, Target, median_row, percentile_rows
from harness.scenarios.compile import compile_runs
from harness.scenarios.http import HTTP_CONNECTIONS, Case, case_rates, http_rates
from harness.scenarios.http_open import open_costs
from harness.scenarios.stdio import PINNED, Session, sessions, spawn_once, startup
from harness.specs import (
    MANY_TOOLS,
    SMALL_TOOLS,
    STDLIB_FLOOR,
    ServerSpec,
    on_mcpkit_http,
    stdlib_floor_spec,
    with_middleware,
    with_otel,
)
from harness.weight import Weight, modules_imported, weights


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
    http_era_seconds: float  # per measurement of the by-era table (mcpkit and the floor)
    http_open: int  # idle sessions, and listen streams, held open at once


FULL = Plan(
    spawns=10,
    many_spawns=10,
    calls=5000,
    pipelined=10_000,
    compile_tools=1000,
    compile_repeats=5,
    http_seconds=5.0,
    http_rounds=3,
    http_era_seconds=5.0,
    http_open=1000,
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
    http_era_seconds=0.5,
    http_open=50,
)

# With four servers, fewer slow spawns and compiles keep ``--peers --quick`` under 3 minutes.
QUICK_PEERS = replace(QUICK, many_spawns=2, compile_repeats=2)


def choose(quick: bool, peers: bool) -> Plan:
    if not quick:
        return FULL
    return QUICK_PEERS if peers else QUICK


# Targets as ratios mcpkit / the named server (each applies only when that server ran): the
# runtime issue's against the floor, issue 8's against FastMCP, and issue 23's (tighter) against
# the official SDK wherever issue 23 sets one.
FLOOR_START = Target(1.3)


def against(bound: float, *versus: str, at_most: bool = True) -> list[Target]:
    return [Target(bound, at_most, name) for name in versus]


# Requests per second, by connections: at least 0.8x the bare ASGI floor at one connection.
HTTP = {
    1: [Target(0.8, at_most=False), *against(3.5, "mcp", at_most=False)],
    16: against(5, "mcp", at_most=False),
    64: against(3, "mcp", at_most=False),
}


class Table(NamedTuple):
    """A title and its rows; ``servers`` when they are not the run's (the subject first)."""

    title: str
    rows: list[Row]
    servers: list[str] | None = None


@dataclass
class Measurement:
    """Every scenario of ``plan`` over ``specs``, table by table; ``weight`` once measured
    (``peers`` only: it needs the installs). ``pin``: sequential calls on one CPU."""

    specs: Sequence[ServerSpec]
    plan: Plan
    peers: bool
    weight: Weight | None = None
    pin: bool = False

    def calls(self, what: str) -> str:
        """How the sequential calls of a table were made, for its title."""
        return f"{self.plan.calls:,} {what}" + (f"; {PINNED}" if self.pin else "")

    def sessions(self, specs: Sequence[ServerSpec]) -> Session:
        return sessions(specs, self.plan.calls, self.plan.pipelined, self.pin)

    def tables(self) -> Iterator[Table]:
        """Run every scenario, yielding each table as soon as it is measured."""
        for spec in self.specs:  # untimed: warms the OS page cache, writes the bytecode caches
            spawn_once(spec, SMALL_TOOLS)
        yield self.startup(SMALL_TOOLS, self.plan.spawns, (0.15, 0.25))
        yield self.stdlib_floor()
        yield self.startup(MANY_TOOLS, self.plan.many_spawns, (0.08, 0.5))
        session = self.sessions(self.specs)
        yield self.latency(session)
        yield self.throughput(session)
        yield self.middleware()
        yield self.otel()
        if self.peers:
            yield self.http()
        yield self.http_eras()
        yield self.http_open()
        yield self.memory(session)
        yield self.compile()

    def startup(self, tools: int, spawns: int, faster: tuple[float, float]) -> Table:
        """``faster``: the bounds on the time to a full tools/list against mcp and fastmcp."""
        first, listed = startup(self.specs, tools, spawns)
        listing = [FLOOR_START, *against(faster[0], "mcp"), *against(faster[1], "fastmcp")]
        return Table(
            f"Start-up, {tools}-tool app (median [min-max] of {spawns} spawns)",
            [
                median_row("spawn -> initialize", "ms", first, [FLOOR_START]),
                median_row("spawn -> tools/list", "ms", listed, listing),
            ],
        )

    def stdlib_floor(self) -> Table:
        """Start-up against Python + asyncio + hand-written answers: what is left is mcpkit's
        own import and work (pydantic loads after the listing, so it is not in this figure)."""
        specs = [self.specs[0], stdlib_floor_spec()]
        spawn_once(specs[1], SMALL_TOOLS)  # untimed: the page cache and bytecode, as above
        first, listed = startup(specs, SMALL_TOOLS, self.plan.spawns)
        target = [Target(1.3, versus=STDLIB_FLOOR)]
        return Table(
            f"Start-up against the stdlib + asyncio floor, {SMALL_TOOLS}-tool app "
            f"(median [min-max] of {self.plan.spawns} spawns)",
            [
                median_row("spawn -> initialize", "ms", first, target),
                median_row("spawn -> tools/list", "ms", listed, target),
            ],
            [spec.name for spec in specs],
        )

    def latency(self, session: Session) -> Table:
        add, add_async = session.latency["add"], session.latency["add_async"]
        return Table(
            f"Sequential tools/call latency ({self.calls('calls each')})",
            percentile_rows("add", add, [Target(5), *against(0.10, "mcp")])
            + percentile_rows("add_async", add_async, against(0.08, "mcp")),
        )

    def throughput(self, session: Session) -> Table:
        targets = [Target(0.3, at_most=False), *against(25, "mcp", at_most=False)]
        return Table(
            f"Pipelined throughput of add ({self.plan.pipelined:,} calls; median [min-max] of 3)",
            [median_row("add, pipelined", "calls/s", session.throughput, targets)],
        )

    def middleware(self) -> Table:
        """What the pipeline costs: none registered (the handler is called directly) against
        one pass-through middleware, the same server otherwise."""
        specs = [self.specs[0], with_middleware(self.specs[0])]
        session = self.sessions(specs)
        return Table(
            f"Middleware: none vs one pass-through ({self.calls('sequential calls each')})",
            [
                *percentile_rows("add", session.latency["add"], []),
                median_row("add, pipelined", "calls/s", session.throughput),
            ],
            [spec.name for spec in specs],
        )

    def otel(self) -> Table:
        """What OpenTelemetry costs: installed but no SDK configured (the subject, as most run
        it), ``MCPKIT_OTEL=off``, and the SDK recording a span per request into memory."""
        specs = [self.specs[0], with_otel(self.specs[0], "off")]
        title = "OpenTelemetry: no SDK vs off vs SDK + in-memory exporter"
        if find_spec("opentelemetry") is not None:
            specs.append(with_otel(self.specs[0], "sdk"))
        else:  # the `otel` extra is missing: measure what can be, say what is not
            title += " (SDK column skipped: the `otel` extra is not installed)"
        session = self.sessions(specs)
        return Table(
            f"{title} ({self.calls('sequential calls each')})",
            [
                *percentile_rows("add", session.latency["add"], []),
                median_row("add, pipelined", "calls/s", session.throughput),
            ],
            [spec.name for spec in specs],
        )

    def http(self) -> Table:
        seconds, rounds = self.plan.http_seconds, self.plan.http_rounds
        rates = http_rates(self.specs, seconds, rounds)
        return Table(
            f"HTTP, stateless JSON mode: tools/call add per second "
            f"({seconds:g} s per measurement; median [min-max] of {rounds})",
            [
                median_row(f"{n} connection{'s' if n > 1 else ''}", "req/s", rates[n], HTTP[n])
                for n in HTTP_CONNECTIONS
            ],
        )

    def http_eras(self) -> Table:
        """mcpkit and the floor only (no target yet): the 2026-07-28 shape of a request next to
        the 2025-11-25 one, and 64 connections; and the floor's app served by mcpkit's HTTP/1.1
        protocol as ``mcpkit run`` serves mcpkit's (what mcpkit's own request work costs)."""
        seconds = self.plan.http_era_seconds
        rounds = self.plan.http_rounds
        specs = [self.specs[0], self.specs[-1], on_mcpkit_http(self.specs[-1])]
        cases = {
            "2025-11-25, 1 connection": Case(1),
            "2026-07-28 (_meta, Mcp-* headers), 1 connection": Case(1, modern=True),
            "2025-11-25, 16 connections": Case(16),
            "2025-11-25, 64 connections": Case(64),
            "2026-07-28, 64 connections": Case(64, modern=True),
        }
        rates = case_rates(specs, list(cases.values()), seconds, rounds)
        return Table(
            f"HTTP, stateless JSON mode, by era and protocol: tools/call add per second "
            f"({seconds:g} s per measurement; median [min-max] of {rounds})",
            [median_row(label, "req/s", rates[case]) for label, case in cases.items()],
            [spec.name for spec in specs],
        )

    def http_open(self) -> Table:
        """mcpkit only (no target yet): what open sessions and listen streams cost."""
        count = self.plan.http_open
        costs = open_costs(self.specs[0], count)
        name = self.specs[0].name
        return Table(
            f"HTTP, {count:,} idle handshake-era sessions, then {count:,} open "
            f"subscriptions/listen streams (one connection each)",
            [
                Row("resident memory per idle session", "KiB", {name: costs.session_kib}),
                Row(
                    "time to open a session (initialize + initialized)",
                    "ms",
                    {name: costs.session_ms},
                ),
                Row("resident memory per open listen stream", "KiB", {name: costs.stream_kib}),
                Row(
                    "time to open a listen stream (to its acknowledgement)",
                    "ms",
                    {name: costs.stream_ms},
                ),
            ],
            [name],
        )

    def memory(self, session: Session) -> Table:
        modules = {spec.name: float(modules_imported(spec)) for spec in self.specs}
        rss = {name: v for name, v in session.peak_rss.items() if v is not None}
        rows = [
            Row("peak RSS after the pipelined run", "MiB", rss, targets=against(0.3, "mcp")),
            Row("modules imported", "count", modules),
        ]
        if self.peers:
            self.weight = weights(self.specs)
            rows += [
                Row("installed size (site-packages)", "MiB", self.weight.size_mib),
                Row("distributions in the closure", "count", self.weight.count),
            ]
        return Table("Memory and weight", rows)

    def compile(self) -> Table:
        tools, repeats = self.plan.compile_tools, self.plan.compile_repeats
        wall, cpu = compile_runs(self.specs, tools, repeats)
        return Table(
            f"In-process: {tools} tools -> full tools/list definitions "
            f"(median [min-max] of {repeats})",
            [
                median_row("compile + definitions, wall", "ms", wall, [Target(1.3)]),
                median_row("compile + definitions, CPU", "ms", cpu, [Target(1.3)]),
            ],
        )
