"""The HTTP scenario: stateless JSON-mode ``tools/call`` requests per second, from a stdlib
keep-alive load generator on loopback, every server up at once and measured in turn; in the
handshake era's shape (2025-11-25, no session) or the stateless era's (2026-07-28: ``_meta``
in the body, the ``Mcp-*`` headers mirroring it)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import IO, NamedTuple

from harness.driver import PROTOCOL_VERSION, call_line
from harness.process import READ_TIMEOUT, ROOT, BenchError
from harness.specs import SMALL_TOOLS, Samples, ServerSpec, child_env, rotated

HTTP_PATH = "/mcp"
HTTP_CONNECTIONS = (1, 16, 64)
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def http_request(port: int, request_id: int, modern: bool = False) -> bytes:
    """A keep-alive POST of ``tools/call add``: handshake era without a session, or (``modern``)
    2026-07-28 with ``_meta`` and the mirrored headers. Both are stateless."""
    if not modern:
        return post_bytes(port, call_line(request_id, "add")[:-1], PROTOCOL_VERSION)
    message = json.loads(call_line(request_id, "add"))
    message["params"]["_meta"] = MODERN_META
    body = json.dumps(message, separators=(",", ":")).encode()
    return post_bytes(port, body, MODERN, "Mcp-Method: tools/call\r\nMcp-Name: add\r\n")


def post_bytes(port: int, body: bytes, version: str, extra: str = "", session: str = "") -> bytes:
    """A keep-alive POST of ``body`` to the MCP endpoint; ``extra``: more header lines."""
    head = (
        f"POST {HTTP_PATH} HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {version}\r\n"
        + (f"Mcp-Session-Id: {session}\r\n" if session else "")
        + f"{extra}Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def response_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """An HTTP/1.1 response's status and headers (names in lower case)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers


async def http_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response: the status and the body (Content-Length or chunked)."""
    status, headers = await response_head(reader)
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() != "chunked":
        raise ValueError(f"a response without a length: {headers!r}")
    return status, await chunked_body(reader)


async def chunked_body(reader: asyncio.StreamReader) -> bytes:
    """A ``Transfer-Encoding: chunked`` body, read through its empty trailer."""
    body = bytearray()
    while size := int((await reader.readline()).split(b";")[0], 16):
        body += await reader.readexactly(size)
        await reader.readexactly(2)
    await reader.readuntil(b"\r\n")  # the empty trailer
    return bytes(body)


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


async def http_load(
    port: int, connections: int, seconds: float, modern: bool = False
) -> tuple[float, int]:
    """Requests per second answered right over ``connections`` keep-alive connections, and
    the number of wrong answers; each connection sends its next request when its last is
    answered, until ``seconds`` have passed (at least one request each). ``modern``: the
    2026-07-28 shape of the request (see :func:`http_request`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds

    async def client(index: int) -> tuple[int, int]:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        good = bad = 0
        request_id = index
        try:
            while True:  # at least one request per connection
                request_id += connections  # ids unique across connections
                writer.write(http_request(port, request_id, modern))
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

    def __init__(self, spec: ServerSpec, argv: Sequence[str] | None = None) -> None:
        """``argv``: another command than ``spec.http`` (with ``{port}`` in it)."""
        assert spec.http is not None
        self.spec = spec
        self.port = free_port()
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [arg.replace("{port}", str(self.port)) for arg in argv or spec.http],
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

    def load(self, connections: int, seconds: float, modern: bool = False) -> float:
        try:
            rate, bad = asyncio.run(http_load(self.port, connections, seconds, modern))
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


class Case(NamedTuple):
    """One load: how many connections, and whether requests take the 2026-07-28 shape."""

    connections: int
    modern: bool = False


def http_rates(specs: Sequence[ServerSpec], seconds: float, rounds: int) -> dict[int, Samples]:
    """Requests/s per connection count; every server up at once, measured in turn."""
    rates = case_rates(specs, [Case(n) for n in HTTP_CONNECTIONS], seconds, rounds)
    return {case.connections: samples for case, samples in rates.items()}


def case_rates(
    specs: Sequence[ServerSpec], cases: Sequence[Case], seconds: float, rounds: int
) -> dict[Case, Samples]:
    """Requests/s of each case; every server up at once, measured in turn."""
    servers: list[HttpServer] = []
    try:
        for spec in specs:
            if spec.http is not None:
                servers.append(HttpServer(spec))
        for server in servers:
            server.wait_ready()
            server.load(max(case.connections for case in cases), min(1.0, seconds))  # warm-up
        return measure_rates(servers, cases, seconds, rounds)
    finally:
        for server in servers:
            server.stop()
            server.stderr.close()


def measure_rates(
    servers: list[HttpServer], cases: Sequence[Case], seconds: float, rounds: int
) -> dict[Case, Samples]:
    rates: dict[Case, Samples] = {case: {s.spec.name: [] for s in servers} for case in cases}
    for turn in range(rounds):
        for case in cases:
            for server in rotated(servers, turn):
                rate = server.load(case.connections, seconds, case.modern)
                rates[case][server.spec.name].append(rate)
    return rates
