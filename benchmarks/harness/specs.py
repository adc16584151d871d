"""The servers under test: how each is started, in what environment, in which order."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from harness.process import APPS, ROOT
from harness.venvs import CACHE, Venv, ensure_venv, install_key, shared_pins

SMALL_TOOLS = 4  # BENCH_TOOLS=3 selects the small set: add, add_async, describe, stats
MANY_TOOLS = 1000

Samples = dict[str, list[float]]  # one scenario's measurements, by server name


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
    """mcpkit (the subject) and the floor, in this interpreter."""
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


STDLIB_FLOOR = "floor-stdlib"


def stdlib_floor_spec() -> ServerSpec:
    """The start-up floor: the small set answered by the standard library and asyncio alone
    (``apps/floor_stdlib.py``), in this interpreter. Start-up tables only: it has no 1,000-tool
    listing and answers no other tool."""
    return ServerSpec(
        name=STDLIB_FLOOR,
        argv=(sys.executable, str(APPS / "floor_stdlib.py")),
        app=APPS / "floor_stdlib.py",
        imports="import asyncio, json",
    )


def on_mcpkit_http(floor: ServerSpec) -> ServerSpec:
    """The floor's ASGI app served by mcpkit's HTTP/1.1 protocol (``mcpkit run``'s) instead
    of uvicorn's h11: mcpkit's own request work is the difference from mcpkit's server."""
    assert floor.http is not None
    http = tuple("--http-mcpkit" if arg == "--http" else arg for arg in floor.http)
    return replace(floor, name="floor, mcpkit's HTTP", http=http)


def with_middleware(spec: ServerSpec) -> ServerSpec:
    """mcpkit's server with one pass-through middleware (``BENCH_MIDDLEWARE=1``)."""
    return replace(spec, name="mcpkit +1 mw", env={**spec.env, "BENCH_MIDDLEWARE": "1"})


def with_otel(spec: ServerSpec, setting: str) -> ServerSpec:
    """mcpkit's server with ``MCPKIT_OTEL=off`` (``"off"``) or with the OpenTelemetry SDK and an
    in-memory exporter (``"sdk"``: ``BENCH_OTEL=sdk``, a span per request)."""
    env = {"MCPKIT_OTEL": "off"} if setting == "off" else {"BENCH_OTEL": "sdk"}
    return replace(spec, name=f"mcpkit otel {setting}", env={**spec.env, **env})


# ---------------------------------------------------------------------------------- peers

MCP_PIN = "mcp==2.3.0"
FASTMCP_PIN = "fastmcp==4.2.3"
# Peers log at WARNING like ``mcpkit run``; FastMCP also skips its banner and update check.
FASTMCP_ENV = {
    "FASTMCP_LOG_LEVEL": "WARNING",
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
}
PEER_IMPORTS = {
    "mcp": "from mcp.server.mcpserver import MCPServer; import mcp.server.stdio",
    "fastmcp": "from fastmcp import FastMCP",
}


def peer_specs() -> list[ServerSpec]:
    """mcpkit, the official SDK, FastMCP, the floor; installs what is missing (bounded)."""
    pins = shared_pins()
    CACHE.mkdir(parents=True, exist_ok=True)
    mcp = ensure_venv("mcp", [MCP_PIN, *pins], ["mcp"])
    fastmcp = ensure_venv("fastmcp", [FASTMCP_PIN, *pins], ["fastmcp"])
    core = ensure_venv("mcpkit-core", [str(ROOT)], ["mcpkit"], salt=install_key())
    subject, floor = default_specs()
    peers = [peer_spec("mcp", mcp, {}), peer_spec("fastmcp", fastmcp, FASTMCP_ENV)]
    return [replace(subject, venv=core), *peers, floor]


def peer_spec(name: str, venv: Venv, env: Mapping[str, str]) -> ServerSpec:
    """``apps/peer_<name>.py`` run by ``venv``'s interpreter."""
    app = APPS / f"peer_{name}.py"
    return ServerSpec(
        name=name,
        argv=(venv.python, str(app)),
        app=app,
        imports=PEER_IMPORTS[name],
        env=env,
        python=venv.python,
        http=(venv.python, str(app), "--http", "{port}"),
        venv=venv,
    )


# ------------------------------------------------------------------------- running them

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


T = TypeVar("T")


def rotated(items: Sequence[T], turn: int) -> list[T]:
    """The visiting order for one turn: A B, then B A, ... (each goes first equally often)."""
    shift = turn % len(items)
    return [*items[shift:], *items[:shift]]


def visit_in_turn(
    specs: Sequence[ServerSpec], turns: int, measure: Callable[[ServerSpec], tuple[float, float]]
) -> tuple[Samples, Samples]:
    """Two figures ``measure``d of every spec each turn, visited in ``rotated`` order."""
    first: Samples = {spec.name: [] for spec in specs}
    second: Samples = {spec.name: [] for spec in specs}
    for turn in range(turns):
        for spec in rotated(specs, turn):
            one, two = measure(spec)
            first[spec.name].append(one)
            second[spec.name].append(two)
    return first, second
