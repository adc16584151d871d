"""The Origin and Host guards against values that do not parse, in-process over ASGI: they are
refused like any value that is not allowed, never a 500 or a logged traceback."""

from __future__ import annotations

import gc
import logging
import tracemalloc

import http_app
import pytest
from asgi_support import Request, request, run

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
BAD_ORIGINS = ["http://[", "http://[::1", "https://[zz]:80", "http://[::1]x/", "http://u@localhost"]
BAD_HOSTS = ["[", "[::1", "[::1]x", "[]:80", ":", "localhost:8000:1", "localhost:x", ""]
CASES = [("origin", value, 403, "Forbidden: Origin") for value in [*BAD_ORIGINS, "null"]] + [
    ("host", value, 421, "Misdirected Request: Host") for value in BAD_HOSTS
]


@pytest.mark.parametrize(("header", "value", "status", "text"), CASES)
def test_a_value_that_does_not_parse_is_refused_like_a_disallowed_one(
    header: str, value: str, status: int, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def test() -> None:
        reply = await request(http_app.app.asgi(), "POST", LIST, {header: value})
        error = {"code": -32600, "message": f"{text} {value!r} not allowed"}
        assert (reply.status, reply.json) == (
            status,
            {"jsonrpc": "2.0", "id": None, "error": error},
        )

    with caplog.at_level(logging.DEBUG, logger="mcpkit"):
        run(test)
    assert caplog.records == []


GOOD = {"host": "127.0.0.1:8000", "origin": "http://localhost:3000"}
REFUSED = [
    ({"host": "evil.example"}, 421),
    ({"origin": "https://evil.example"}, 403),
    ({"content-type": "text/plain"}, 415),
    ({"accept": "text/html"}, 406),
]


def test_headers_that_passed_once_let_nothing_else_through() -> None:
    """The guards remember the header values that passed; every other value is checked."""

    async def test() -> None:
        asgi = http_app.app.asgi(stateless=True)
        for _ in range(2):
            assert (await request(asgi, "POST", LIST, GOOD)).status == 200
            for changed, status in REFUSED:
                assert (await request(asgi, "POST", LIST, {**GOOD, **changed})).status == status
        for number in range(300):  # more combinations than are remembered
            origin = {"origin": f"http://localhost:{number}"}
            assert (await request(asgi, "POST", LIST, {**GOOD, **origin})).status == 200
        for changed, status in REFUSED:
            assert (await request(asgi, "POST", LIST, {**GOOD, **changed})).status == status

    run(test)


def test_a_server_address_given_as_a_list_is_read_like_a_tuple() -> None:
    """ASGI allows ``scope["server"]`` as a list (Starlette's TestClient sends one)."""

    async def test() -> None:
        asgi = http_app.app.asgi(stateless=True)
        for bound, host, status in [
            ("127.0.0.1", "127.0.0.1:8000", 200),
            ("127.0.0.1", "evil.example", 421),
            ("0.0.0.0", "evil.example", 200),  # not a loopback bind: any Host
        ]:
            exchange = Request("POST", LIST, {**GOOD, "host": host})
            exchange.scope["server"] = [bound, 8000]
            await exchange.serve(asgi)
            assert exchange.status == status

    run(test)


def test_long_header_values_are_checked_every_time_not_kept() -> None:
    async def test() -> None:
        asgi = http_app.app.asgi(stateless=True, allowed_origins=["*"])
        assert (await request(asgi, "POST", LIST, GOOD)).status == 200
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for number in range(10):  # each origin 100 kB, each allowed
            origin = {"origin": f"http://localhost:{number}/" + "x" * 100_000}
            assert (await request(asgi, "POST", LIST, {**GOOD, **origin})).status == 200
        gc.collect()
        assert tracemalloc.get_traced_memory()[0] - before < 200_000  # not 1 MB of origins

    tracemalloc.start()
    try:
        run(test)
    finally:
        tracemalloc.stop()
