"""``HeldWrites``: the writes uvicorn makes for one response leave in one piece, and nothing is
held back past the loop's next turn."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mcpkit.transports.http._writes import HeldWrites

HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


class Transport:
    """What reached the socket: each write, and whether it was closed after them."""

    def __init__(self) -> None:
        self.log: list[Any] = []

    def write(self, data: bytes) -> None:
        self.log.append(data)

    def writelines(self, chunks: list[bytes]) -> None:
        self.log.append(b"".join(chunks))  # one send of them all

    def close(self) -> None:
        self.log.append("closed")

    def write_eof(self) -> None:
        self.log.append("eof")

    def get_extra_info(self, name: str) -> Any:
        return {"peername": ("127.0.0.1", 5555)}.get(name)


class Cycle:
    def __init__(self) -> None:
        self.response_complete = False


class Protocol:
    """uvicorn's protocol as HeldWrites reads it: the request it is serving."""

    def __init__(self) -> None:
        self.cycle: Cycle | None = Cycle()


def held() -> tuple[HeldWrites, Transport, Protocol]:
    transport, protocol = Transport(), Protocol()
    return HeldWrites(transport, protocol), transport, protocol  # type: ignore[arg-type]


def test_a_complete_response_leaves_in_one_write_as_soon_as_it_is_complete() -> None:
    async def scenario() -> list[Any]:
        writes, transport, protocol = held()
        writes.write(HEAD)
        writes.write(b"{}")
        assert transport.log == []  # not complete yet
        assert protocol.cycle is not None
        protocol.cycle.response_complete = True
        writes.write(b"")  # uvicorn's end of a Content-Length message
        seen = list(transport.log)
        await asyncio.sleep(0)  # the loop's next turn adds nothing
        assert transport.log == seen
        return seen

    assert asyncio.run(scenario()) == [HEAD + b"{}"]


def test_a_streamed_response_is_held_back_one_turn_of_the_loop_at_most() -> None:
    async def scenario() -> list[Any]:
        writes, transport, _ = held()
        writes.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        writes.write(b"d\r\nevent: message\r\n")
        assert transport.log == []
        await asyncio.sleep(0)
        writes.write(b"5\r\ndata:\r\n")
        await asyncio.sleep(0)
        return transport.log

    assert asyncio.run(scenario()) == [
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nd\r\nevent: message\r\n",
        b"5\r\ndata:\r\n",
    ]


def test_the_streams_of_many_connections_leave_together_at_the_next_turn() -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        sent: list[Any] = []  # every connection's writes, in the order they reached a socket
        connections = [held() for _ in range(4)]
        for _, transport, _ in connections:
            transport.log = sent
        for index in (2, 0, 1):
            connections[index][0].write(b"part %d" % index)
        answered, _, protocol = connections[3]  # one answered in this turn: leaves at once
        answered.write(HEAD)
        assert protocol.cycle is not None
        protocol.cycle.response_complete = True
        answered.write(b"{}")
        before = list(sent)
        await asyncio.sleep(0)
        return before, sent

    before, after = asyncio.run(scenario())
    assert before == [HEAD + b"{}"]
    assert after == [HEAD + b"{}", b"part 2", b"part 0", b"part 1"]


def test_a_connection_whose_write_fails_holds_up_no_other(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Failing(Transport):
        def write(self, data: bytes) -> None:
            raise RuntimeError("Cannot call write() after write_eof()")

    async def scenario() -> list[Any]:
        failing = HeldWrites(Failing(), Protocol())  # type: ignore[arg-type]
        failing.write(b"lost")
        writes, transport, _ = held()
        writes.write(b"part")
        await asyncio.sleep(0)
        return transport.log

    assert asyncio.run(scenario()) == [b"part"]
    assert [record.getMessage() for record in caplog.records] == ["a held response write failed"]


def test_what_is_held_goes_out_before_the_connection_closes_or_ends_its_writes() -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        closing, closed, _ = held()
        closing.write(HEAD)
        closing.close()
        ending, ended, _ = held()
        ending.write(HEAD)
        ending.write_eof()
        await asyncio.sleep(0)
        return closed.log, ended.log

    assert asyncio.run(scenario()) == ([HEAD, "closed"], [HEAD, "eof"])


def test_without_a_request_in_hand_a_write_leaves_at_once() -> None:
    async def scenario() -> list[Any]:
        writes, transport, protocol = held()
        protocol.cycle = None  # e.g. uvicorn's 400 for a request it could not parse
        writes.writelines([b"HTTP/1.1 400 Bad Request\r\n\r\n"])
        return transport.log

    assert asyncio.run(scenario()) == [b"HTTP/1.1 400 Bad Request\r\n\r\n"]


def test_everything_else_is_the_transports_own() -> None:
    async def scenario() -> Any:
        writes, _, _ = held()
        return writes.get_extra_info("peername")

    assert asyncio.run(scenario()) == ("127.0.0.1", 5555)


def test_every_method_of_an_asyncio_transport_is_there_and_the_transports_own() -> None:
    """Without a ``__getattr__`` (it would make uvicorn's every read of the transport a slow
    lookup), each method of asyncio's transport API is handed on, or held writes' own."""
    names = {
        name
        for kind in (asyncio.ReadTransport, asyncio.WriteTransport)
        for name in dir(kind)
        if not name.startswith("_")
    }

    class Full:
        def __getattr__(self, name: str) -> Any:
            return lambda *args: (name, args)

    async def scenario() -> None:
        writes = HeldWrites(Full(), Protocol())  # type: ignore[arg-type]
        for name in sorted(names):
            assert callable(getattr(writes, name)), name
        handed: Any = writes  # (what the methods return here is the fake's)
        assert handed.pause_reading() == ("pause_reading", ())
        assert handed.set_write_buffer_limits(1, 2) == ("set_write_buffer_limits", (1, 2))

    asyncio.run(scenario())


def test_abort_drops_what_is_held() -> None:
    class Aborting(Transport):
        def abort(self) -> None:
            self.log.append("aborted")

    async def scenario() -> list[Any]:
        transport = Aborting()
        writes = HeldWrites(transport, Protocol())  # type: ignore[arg-type]
        writes.write(HEAD)
        writes.abort()
        await asyncio.sleep(0)  # nothing left for the next turn either
        return transport.log

    assert asyncio.run(scenario()) == ["aborted"]


def test_each_loop_has_its_own_next_turn_flush_in_one_thread_after_another_and_at_once() -> None:
    """Connections of two loops run one after the other in this thread, and of a third loop
    running meanwhile in another thread: each loop's streams leave at that loop's next turn."""

    async def scenario() -> list[Any]:
        writes, transport, _ = held()
        writes.write(b"part")
        await asyncio.sleep(0)
        return transport.log

    other: list[list[Any]] = []
    thread = threading.Thread(target=lambda: other.append(asyncio.run(scenario())))
    thread.start()
    assert asyncio.run(scenario()) == [b"part"]
    assert asyncio.run(scenario()) == [b"part"]
    thread.join(5)
    assert other == [[b"part"]]
