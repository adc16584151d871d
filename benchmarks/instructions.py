"""The instructions one stateless HTTP request costs, counted: the same on every run.

    python benchmarks/instructions.py [--tool add_async] [--connections 16] [--smoke]

Requests per second over loopback swing by several percent between runs on a VM, so a change
worth 1% cannot be seen there. Here uvicorn's HTTP protocol is driven in process, without
sockets or a client: ``--connections`` fake connections each get a keep-alive ``tools/call``
(the harness's bytes), the loop runs until every answer is out, and again, round after round.
Each server is run twice under valgrind's callgrind (``ROUNDS_LONG`` and ``ROUNDS_SHORT``
rounds); the difference, divided by the requests between them, is what a request costs with
start-up and warm-up cancelled out. The same code gives the same count to within ~0.3%.

Servers: ``mcpkit`` (the benchmark app as ``mcpkit run --transport http --stateless
--json-response`` serves it, on mcpkit's own HTTP/1.1 protocol), ``floor`` (the bare ASGI floor
on uvicorn's h11 protocol, as ``benchmarks/run.py`` serves it) and ``floor-mcpkit-http`` (the
floor's app on mcpkit's protocol: the difference from ``mcpkit`` is mcpkit's own request work).
An async tool (the default) keeps the count exact: a sync tool's worker thread makes it depend
on the scheduler, and valgrind runs one thread at a time anyway.

Needs valgrind (``apt-get install valgrind``). ``--smoke`` drives each server a few rounds
without it and checks every answer (what ``.ci/run`` does, so the tool keeps working).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVERS = ("mcpkit", "floor", "floor-mcpkit-http")
ROUNDS_SHORT, ROUNDS_LONG = 30, 130
PORT = 8000  # what the fake connections say they are bound to


sys.path[:0] = [str(HERE / "apps"), str(HERE)]
from harness.driver import PROTOCOL_VERSION, call_line  # noqa: E402 (benchmarks/ on the path)
from harness.scenarios.http import post_bytes  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", default="add_async")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--smoke", action="store_true", help="a few rounds, no valgrind")
    parser.add_argument("--drive", nargs=2, metavar=("SERVER", "ROUNDS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.drive:
        server, rounds = args.drive
        asyncio.run(drive(server, int(rounds), args.tool, args.connections))
        return 0
    if args.smoke:
        for server in SERVERS:
            asyncio.run(drive(server, 3, args.tool, args.connections, check_all=True))
        print(f"smoke: {len(SERVERS)} servers answered {3 * args.connections} requests each")
        return 0
    if shutil.which("valgrind") is None:
        print("instructions.py: needs valgrind (apt-get install valgrind)", file=sys.stderr)
        return 2
    requests = (ROUNDS_LONG - ROUNDS_SHORT) * args.connections
    print(f"instructions a request, tools/call {args.tool}, {args.connections} connections")
    counts = {}
    for server in SERVERS:
        long, short = (
            count(server, n, args.tool, args.connections) for n in (ROUNDS_LONG, ROUNDS_SHORT)
        )
        counts[server] = (long - short) / requests
        print(f"  {server:18s} {counts[server]:>10,.0f}")
    for floor in SERVERS[1:]:
        print(f"  mcpkit / {floor:17s} {counts['mcpkit'] / counts[floor]:7.3f}")
    return 0


def count(server: str, rounds: int, tool: str, connections: int) -> int:
    """Instructions callgrind counts for a whole process driving ``rounds`` rounds."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        str(Path(__file__).resolve()),
        "--drive",
        server,
        str(rounds),
        "--tool",
        tool,
        "--connections",
        str(connections),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"instructions.py: {server} failed under valgrind:\n{done.stderr[-2000:]}")
    return int(found.group(1))


async def drive(
    server: str, rounds: int, tool: str, connections: int, *, check_all: bool = False
) -> None:
    """``rounds`` rounds of one request on each of ``connections`` fake connections; every
    answer checked (``check_all``), or the last round's."""
    config, protocol = _server(server)
    from uvicorn.server import ServerState

    state = ServerState()
    counter = _Counter()
    pairs = []
    for _ in range(connections):
        transport = _Transport(counter)
        handler = protocol(config, state, {})
        handler.connection_made(transport)
        pairs.append((handler, transport))
    request_id = first_checked = 0
    for done in range(1, rounds + 1):
        if done == rounds and not check_all:  # only the last round is read back: the counted
            first_checked = request_id  # runs then pay the same for it, whatever their length
            for _, transport in pairs:
                transport.chunks.clear()
        counter.wanted += connections
        counter.all_out = asyncio.get_running_loop().create_future()
        for handler, _ in pairs:
            request_id += 1
            handler.data_received(_request(request_id, tool))
        await counter.all_out  # (no polling: what the loop does between is the server's)
    answered = [json.loads(body) for _, transport in pairs for body in transport.bodies()]
    for answer in answered:  # the harness's call_line: a=id, b=2*id+1, the sum 3*id+1
        if answer["result"]["structuredContent"] != {"result": 3 * answer["id"] + 1}:
            raise SystemExit(f"instructions.py: {server} answered {answer!r}")
    if sorted(answer["id"] for answer in answered) != list(
        range(first_checked + 1, request_id + 1)
    ):
        raise SystemExit(f"instructions.py: {server} did not answer each request once")


def _server(server: str) -> tuple[Any, Callable[..., asyncio.Protocol]]:
    """uvicorn's loaded config for ``server``'s ASGI app, and its per-connection protocol."""
    os.environ["BENCH_TOOLS"] = "4"
    from uvicorn.config import Config

    if server == "mcpkit":
        from mcpkit.transports.http._h1 import http_protocol

        bench = importlib.import_module("mcpkit_app")  # (benchmarks/apps: not a package)
        asgi = bench.app.asgi("/mcp", stateless=True, json_response=True)
        protocol: Callable[..., asyncio.Protocol] = http_protocol
    elif server in ("floor", "floor-mcpkit-http"):
        floor = importlib.import_module("floor")
        functions = importlib.import_module("bench_tools").tool_functions(4)
        asgi = floor.asgi_app(floor.Floor([floor.FloorTool(fn) for fn in functions]))
        if server == "floor":
            from uvicorn.protocols.http.h11_impl import H11Protocol

            def protocol(config: Any, server_state: Any, app_state: Any) -> asyncio.Protocol:
                return H11Protocol(config=config, server_state=server_state, app_state=app_state)
        else:
            from mcpkit.transports.http._h1 import http_protocol as protocol
    else:
        raise SystemExit(f"instructions.py: no server {server!r} (one of {', '.join(SERVERS)})")
    config = Config(app=asgi, lifespan="off", log_level="warning", access_log=False, ws="none")
    config.load()
    return config, protocol


def _request(request_id: int, tool: str) -> bytes:
    message = json.loads(call_line(request_id, "add"))
    message["params"]["name"] = tool
    return post_bytes(PORT, json.dumps(message, separators=(",", ":")).encode(), PROTOCOL_VERSION)


class _Counter:
    """The responses out so far, and the future a round waits on until ``wanted`` are."""

    def __init__(self) -> None:
        self.out = 0
        self.wanted = 0
        self.all_out: asyncio.Future[None] | None = None

    def seen(self) -> None:
        self.out += 1
        if self.out == self.wanted and self.all_out is not None:
            self.all_out.set_result(None)


class _Transport(asyncio.Transport):
    """A connection whose writes are kept, and its responses counted as their heads go out (a
    head leaves in one write: uvicorn's, or the held writes' one piece); what a write costs
    here is the same for every server, and the responses are read once the rounds are over."""

    def __init__(self, counter: _Counter) -> None:
        super().__init__()
        self.chunks: list[bytes] = []
        self.counter = counter

    def write(self, data: bytes | bytearray | memoryview) -> None:
        chunk = bytes(data)
        self.chunks.append(chunk)
        if chunk.startswith(b"HTTP/1.1 "):
            self.counter.seen()

    def bodies(self) -> list[bytes]:
        """Each response's body (Content-Length framed, as every server here answers); one pass
        over the bytes (no copies of what is left: the count must grow with requests only)."""
        data, bodies, at = b"".join(self.chunks), [], 0
        while at < len(data):
            end = data.index(b"\r\n\r\n", at)
            length = re.search(rb"content-length: (\d+)", data[at:end], re.IGNORECASE)
            if length is None:
                raise SystemExit(f"instructions.py: a response without a length: {data[at:end]!r}")
            at = end + 4 + int(length.group(1))
            bodies.append(data[end + 4 : at])
        return bodies

    def writelines(self, chunks: Any) -> None:
        self.write(b"".join(chunks))

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", PORT)}.get(name, default)

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def close(self) -> None:
        pass


if __name__ == "__main__":
    sys.exit(main())
