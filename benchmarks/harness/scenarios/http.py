"""The HTTP scenario: stateless JSON-mode ``tools/call`` requests per second, from a stdlib
keep-alive load generator on loopback, every server up at once and measured in turn."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import IO

from harness.driver import PROTOCOL_VERSION, call_line
from harness.process import READ_TIMEOUT, ROOT, BenchError
from harness.specs import SMALL_TOOLS, Samples, ServerSpec, child_env, rotated

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
    servers: list[HttpServer] = []
    try:
        for spec in specs:
            if spec.http is not None:
                servers.append(HttpServer(spec))
        for server in servers:
            server.wait_ready()
            server.load(max(HTTP_CONNECTIONS), min(1.0, seconds))  # warm-up
        return measure_rates(servers, seconds, rounds)
    finally:
        for server in servers:
            server.stop()
            server.stderr.close()


def measure_rates(servers: list[HttpServer], seconds: float, rounds: int) -> dict[int, Samples]:
    rates: dict[int, Samples] = {n: {s.spec.name: [] for s in servers} for n in HTTP_CONNECTIONS}
    for turn in range(rounds):
        for connections in HTTP_CONNECTIONS:
            for server in rotated(servers, turn):
                rates[connections][server.spec.name].append(server.load(connections, seconds))
    return rates
