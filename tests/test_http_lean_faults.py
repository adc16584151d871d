"""mcpkit's HTTP/1.1 protocol when the app gets an answer's framing wrong, hands over headers
it can read only once, or the client pipelines many requests: the connection never carries a
second answer after a broken one, and every request is answered once, in order."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import uvicorn
from uvicorn.server import ServerState

from mcpkit.transports.http._h1 import LeanHTTP

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]
DATE = [(b"date", b"Thu, 01 Jan 2026 00:00:00 GMT"), (b"server", b"uvicorn")]
HEAD = b"HTTP/1.1 200 OK\r\ndate: Thu, 01 Jan 2026 00:00:00 GMT\r\nserver: uvicorn\r\n"


class Transport(asyncio.Transport):
    """What the protocol writes, joined; closed or not."""

    def __init__(self) -> None:
        super().__init__()
        self.written = b""
        self.closed = False

    def write(self, data: Any) -> None:
        if not self.closed:
            self.written += bytes(data)

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5000)}.get(name)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def serve(app: App, *reads: bytes) -> tuple[Transport, list[str]]:
    """``reads`` received by a connection serving ``app``, each once the loop has run what the
    one before started; the transport after that, and the paths the app was called for."""
    seen: list[str] = []

    async def recording(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["path"])
        await app(scope, receive, send)

    async def main() -> Transport:
        config = uvicorn.Config(recording, log_config=None, access_log=False, lifespan="off")
        config.load()
        state = ServerState()
        state.default_headers = list(DATE)
        protocol = LeanHTTP(config, state, {})
        transport = Transport()
        protocol.connection_made(transport)
        for data in reads:
            if not transport.closed:  # (asyncio reads nothing more from a closed socket)
                protocol.data_received(data)
            for _ in range(1000):  # (a turn or two per request)
                await asyncio.sleep(0)
        protocol.connection_lost(None)
        for _ in range(5):
            await asyncio.sleep(0)
        return transport

    return asyncio.run(main()), seen


def request(path: str) -> bytes:
    return b"GET %s HTTP/1.1\r\nHost: x\r\n\r\n" % path.encode()


async def short_then_carry_on(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Declares 10 bytes, sends 5, and swallows the error it gets."""
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"10")]}
    )
    with contextlib.suppress(RuntimeError):
        await send({"type": "http.response.body", "body": b"12345"})


async def long_then_carry_on(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Declares 2 bytes, sends 5, and swallows the error it gets."""
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    with contextlib.suppress(RuntimeError):
        await send({"type": "http.response.body", "body": b"12345"})


def test_an_answer_shorter_than_its_length_closes_the_connection_whatever_the_app_does() -> None:
    transport, seen = serve(short_then_carry_on, request("/a"), request("/b"))
    assert transport.written == HEAD + b"content-length: 10\r\n\r\n12345"
    assert transport.closed
    assert seen == ["/a"]  # the next request is never read: its answer would end this one's


def test_an_answer_longer_than_its_length_closes_the_connection_after_its_head() -> None:
    transport, seen = serve(long_then_carry_on, request("/a"), request("/b"))
    assert transport.written == HEAD + b"content-length: 2\r\n\r\n"
    assert transport.closed
    assert seen == ["/a"]


async def generated_headers(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Headers as a one-pass generator, one value a str (which only uvicorn's cycle frames)."""
    headers = iter([(b"x-a", "v"), (b"x-b", b"k"), (b"content-length", b"2")])
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"ok"})


def test_headers_given_as_a_generator_all_reach_the_wire() -> None:
    transport, _ = serve(generated_headers, request("/"))
    assert transport.written == HEAD + b"x-a: v\r\nx-b: k\r\ncontent-length: 2\r\n\r\nok"


async def echo_path(scope: dict[str, Any], receive: Any, send: Any) -> None:
    data = scope["path"].encode()
    head = [(b"content-length", b"%d" % len(data))]
    await send({"type": "http.response.start", "status": 200, "headers": head})
    await send({"type": "http.response.body", "body": data})


def answers(count: int) -> Iterator[bytes]:
    for index in range(count):
        data = b"/%d" % index
        yield HEAD + b"content-length: %d\r\n\r\n%s" % (len(data), data)


def test_two_hundred_requests_pipelined_in_one_read_are_each_answered_once_in_order() -> None:
    data = b"".join(request(f"/{index}") for index in range(200))
    transport, seen = serve(echo_path, data)
    assert seen == [f"/{index}" for index in range(200)]
    assert transport.written == b"".join(answers(200))
