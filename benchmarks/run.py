"""mcpkit's benchmark harness: real stdio pipes, every server measured interleaved in one run.

    python benchmarks/run.py [--quick] [--peers] [--pin] [--json FILE]

Servers are ``ServerSpec``s (a command, its environment, the module that builds its tools
in-process and what it imports); every scenario visits them in turn (A B C A B C ..., rotating
who goes first) so machine drift hits all alike. The first spec is the subject (mcpkit), the
last the floor (stdlib JSON-RPC + pydantic); every table gives the ratio of the subject to each
other server. ``--peers`` adds the incumbents, the official ``mcp`` SDK and FastMCP, each
installed pinned into its own virtual environment in a cache folder outside the repository
(``~/.cache/mcpkit-bench``, or ``$MCPKIT_BENCH_CACHE``; created once, reused), plus the HTTP
scenario (stateless JSON-mode requests per second, a stdlib keep-alive load generator on
loopback) and the weight of each SDK's install. ``--pin`` makes the sequential calls with the
client and every server on one CPU (the tables' titles say so). The driver is stdlib only. Exit
code 0 when the run completed (missed targets are reported, not failures); 1 when a server
misbehaved (a crash, a timeout, an error response, an id unmatched or a wrong result) or an
install failed.

This file is the command line; the harness itself is the ``harness`` package beside it (its
``__init__`` lists the modules), and ``harness/plan.py`` says what a run measures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from harness.machine import (
    CpuTimes,
    cpu_times,
    load_average,
    machine,
    steal_note,
    thread_round_trip,
    versions,
)
from harness.plan import Measurement, choose
from harness.process import BenchError
from harness.report import Results, fmt, render_targets
from harness.specs import FASTMCP_PIN, MCP_PIN, ServerSpec, default_specs, peer_specs
from harness.venvs import CACHE
from harness.weight import Weight


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a short run (under a minute; under 3 with --peers)"
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help=f"also measure {MCP_PIN} and {FASTMCP_PIN} (installed into {CACHE} on first use)",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help=(
            "make the sequential calls (latency, middleware and OpenTelemetry tables) with this "
            "client and every server on one CPU (Linux): on a VM whose idle CPUs halt, where "
            "the kernel puts the threads decides much of a p50 and changes between runs"
        ),
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the results here")
    args = parser.parse_args(argv)
    if args.pin and not hasattr(os, "sched_setaffinity"):
        parser.error("--pin needs os.sched_setaffinity (Linux)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    started = time.perf_counter()
    print(machine(), flush=True)
    try:
        specs = peer_specs() if args.peers else default_specs()
        hop = introduce(specs, args.peers, args.quick)
        results = Results([spec.name for spec in specs])
        plan = choose(args.quick, args.peers)
        measurement = Measurement(specs, plan, args.peers, pin=args.pin)
        first = cpu_times()
        print_tables(measurement, results, first)
    except BenchError as exc:
        print(f"\nFAILED: {exc}", file=sys.stderr)
        return 1
    weight = measurement.weight
    conclude(results, weight, first)
    print(f"completed in {time.perf_counter() - started:.0f} s")
    if args.json:
        summary = {
            "machine": machine(),
            "thread_round_trip_us": hop,
            "quick": args.quick,
            "pinned": args.pin,
            "servers": results.names,
            "tables": results.tables,
            "closures": weight.closures if weight is not None else {},
            "core_install": weight.core_verdict() if weight is not None else None,
        }
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    return 0


def introduce(specs: Sequence[ServerSpec], peers: bool, quick: bool) -> float:
    """Print what runs on what; return this machine's thread round trip in microseconds."""
    if peers:
        print(versions(specs), flush=True)
    print(f"{load_average()} at the start", flush=True)
    hop = thread_round_trip()
    print(f"thread round trip: {fmt(hop)} us (the hop a sync tool pays over an async one)")
    names = ", ".join(spec.name for spec in specs)
    print(f"servers: {names}; {'quick' if quick else 'full'} run\n", flush=True)
    return hop


def print_tables(measurement: Measurement, results: Results, since: CpuTimes | None) -> None:
    """Each table as soon as it is measured, with the host's steal time while it was."""
    last = since
    for table in measurement.tables():
        now = cpu_times()
        print("\n".join(results.add(*table)), flush=True)
        if note := steal_note(last, now):
            print(f"{note}\n", flush=True)
        last = now


def conclude(results: Results, weight: Weight | None, since: CpuTimes | None) -> None:
    """The closures (``--peers``), the targets table, and how loaded the machine was."""
    if weight is not None:
        for name, closure in weight.closures.items():
            print(f"{name} closure ({len(closure)}): {', '.join(closure)}")
        print()
    core = weight.core_verdict() if weight is not None else None
    print("\n".join(render_targets(results.judged, core)))
    print(f"{load_average()} at the end")
    if note := steal_note(since, cpu_times(), "during the run"):
        print(note)


if __name__ == "__main__":
    sys.exit(main())
