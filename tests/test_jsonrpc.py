"""The JSON-RPC 2.0 envelope, I/O-free: ``decode``, ``parse``, ``encode`` and the error shapes
they produce on the wire (through the in-memory client's ``send_raw``)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from mcpkit import App
from mcpkit.exceptions import InvalidRequest, ParseError, Unencodable
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import Limits, Notification, Request, Response
from mcpkit.testing import Client, SyncClient

app = App("envelope", "1.0")


@app.tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def parse_error() -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}


def invalid(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": -32600, "message": "Invalid Request"},
    }


@pytest.fixture
def client() -> Any:
    with Client(app, protocol_version="2025-06-18") as connected:
        yield connected


# ------------------------------------------------------------------------------------ -32700


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"not json",
        b'{"jsonrpc": "2.0", "id": 1,}',
        b"\xff\xfe{}",
        b'{"a": "\xc3"}',
        b"NaN",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[-Infinity]}}',
    ],
    ids=[
        "truncated",
        "text",
        "trailing-comma",
        "bad-utf8-bom",
        "bad-utf8-inside",
        "nan",
        "nan-inside",
        "infinity-inside",
        "minus-infinity-inside",
    ],
)
def test_bad_json_or_utf8_is_a_parse_error_with_null_id(client: SyncClient, raw: bytes) -> None:
    assert client.send_raw(raw) == parse_error()


def test_decode_raises_parse_error() -> None:
    with pytest.raises(ParseError):
        jsonrpc.decode(b"\xc3\x28")


# ------------------------------------------------------------------------------------ -32600


@pytest.mark.parametrize(
    ("message", "request_id"),
    [
        ({"id": 1, "method": "ping"}, 1),
        ({"jsonrpc": "1.0", "id": 2, "method": "ping"}, 2),
        ({"jsonrpc": 2.0, "id": "two", "method": "ping"}, "two"),
        ({"jsonrpc": "2.0", "id": 3, "method": 5}, 3),
        ({"jsonrpc": "2.0", "id": 4, "method": None}, 4),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": 3}, 5),
        ({"jsonrpc": "2.0", "id": 6, "method": "ping", "params": "x"}, 6),
        ({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": None}, 7),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None),
        ({"jsonrpc": "2.0", "method": 5}, None),
        ({"method": "ping"}, None),
        ({"jsonrpc": "2.0", "method": "ping", "params": 3}, None),
        ({"jsonrpc": "2.0"}, None),
        ({"jsonrpc": "2.0", "id": 8}, 8),
        ("ping", None),
        (42, None),
        (None, None),
    ],
)
def test_not_a_request_object_is_invalid_request(
    client: SyncClient, message: Any, request_id: Any
) -> None:
    assert client.send(message) == invalid(request_id)


def test_parse_rejects_and_accepts() -> None:
    assert jsonrpc.parse({"jsonrpc": "2.0", "id": 1, "method": "m"}) == Request(1, "m")
    assert jsonrpc.parse({"jsonrpc": "2.0", "id": "a", "method": "m", "params": [1]}) == Request(
        "a", "m", [1]
    )
    assert jsonrpc.parse({"jsonrpc": "2.0", "method": "n", "params": {}}) == Notification("n", {})
    assert jsonrpc.parse({"jsonrpc": "2.0", "id": 1, "result": {}}) == Response(1, {})
    bad: dict[str, Any]
    for bad in (
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}},
        {"jsonrpc": "2.0", "id": None, "result": {}},
        {"jsonrpc": "2.0", "id": 1},
    ):
        with pytest.raises(InvalidRequest):
            jsonrpc.parse(bad)


def test_a_client_response_gets_no_answer(client: SyncClient) -> None:
    assert client.send({"jsonrpc": "2.0", "id": 99, "result": {}}) is None


# ----------------------------------------------------------------------------- notifications


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "no/such/method"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1, 2]},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": 5}},
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"x": 1}},
    ],
)
def test_a_valid_notification_is_never_answered(client: SyncClient, message: Any) -> None:
    assert client.send(message) is None
    assert client.request("ping") == {}  # and the connection still works


# ------------------------------------------------------------------------------------ limits


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_nesting_at_the_limit_is_fine_and_one_deeper_is_invalid_request(
    client: SyncClient,
) -> None:
    deep = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    # 128 levels in all: the envelope object is level 1.
    inner: Any = "x"
    for _ in range(126):
        inner = [inner]
    deep["params"] = {"name": "echo", "arguments": {"text": "hi"}, "extra": inner}
    assert jsonrpc.decode(jsonrpc.encode(deep)) == deep
    assert client.send(deep)["result"]["isError"] is False
    deep["params"] = {"name": "echo", "arguments": {"text": "hi"}, "extra": [inner]}
    assert client.send(deep) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: nesting too deep (limit 128)"},
    }


@pytest.mark.parametrize("depth", [129, 1_000, 100_000])
def test_very_deep_nesting_is_never_a_crash_or_a_parse_error(
    client: SyncClient, depth: int
) -> None:
    answer = client.send_raw(nested(depth))
    assert answer["error"] == {
        "code": -32600,
        "message": "Invalid Request: nesting too deep (limit 128)",
    }
    answer = client.send_raw(b'{"a":' * depth + b"1" + b"}" * depth)
    assert answer["error"]["code"] == -32600
    assert "nesting too deep" in answer["error"]["message"]


def test_limits_are_configurable() -> None:
    assert Limits() == Limits(max_bytes=16 * 1024 * 1024, max_depth=128)
    small = Limits(max_bytes=64, max_depth=3)
    assert jsonrpc.decode(b"[[[1]]]", small) == [[[1]]]
    with pytest.raises(InvalidRequest, match="nesting too deep"):
        jsonrpc.decode(b"[[[[1]]]]", small)
    with pytest.raises(InvalidRequest, match="larger than 64 bytes"):
        jsonrpc.decode(b" " * 65 + b"1", small)


@pytest.mark.parametrize("data", [b"[[[[]]]]", b"[[{}]]" + b" " * 30, "[[[[]]]]", b'{"a":[[[]]]}'])
def test_the_shortest_message_one_level_too_deep_is_refused(data: bytes | str) -> None:
    # Short messages skip the depth scan (two characters a level): the shortest one deep
    # enough must still be caught, and what is shallow passes however long.
    small = Limits(max_depth=3)
    if (data.count("[") if isinstance(data, str) else data.count(b"[")) <= 2:
        assert jsonrpc.decode(data, small) == [[{}]]
        return
    with pytest.raises(InvalidRequest, match="nesting too deep"):
        jsonrpc.decode(data, small)


def test_a_message_over_16_mib_is_invalid_request(client: SyncClient) -> None:
    text = "x" * (16 * 1024 * 1024)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    message["params"] = {"name": "echo", "arguments": {"text": text}}
    answer = client.send(message)
    assert answer == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: message larger than 16777216 bytes"},
    }


def test_a_message_just_under_the_limit_works(client: SyncClient) -> None:
    text = "y" * (16 * 1024 * 1024 - 200)
    answer = client.call_tool("echo", {"text": text})
    assert answer["isError"] is False
    assert answer["content"] == [{"type": "text", "text": text}]


# ------------------------------------------------------------------------------------ encode


def test_encode_is_compact_utf8_on_one_line() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb", "k": "프로젝트"}}
    data = jsonrpc.encode(message)
    assert b"\n" not in data
    assert b" " not in data
    assert "프로젝트".encode() in data
    assert json.loads(data) == message


def test_response_builders() -> None:
    assert jsonrpc.result_response(3, {}) == {"jsonrpc": "2.0", "id": 3, "result": {}}
    assert jsonrpc.error_response(None, ParseError()) == parse_error()


def test_notification_builder_leaves_out_params_it_is_not_given() -> None:
    assert jsonrpc.notification("notifications/tools/list_changed") == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
    }
    assert jsonrpc.notification("notifications/resources/updated", {"uri": "a://b"}) == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": "a://b"},
    }


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ({"result": {"x": math.nan}}, "NaN at result.x"),
        ({"result": [1.0, math.inf]}, "Infinity at result[1]"),
        ({"params": {"data": (-math.inf,)}}, "-Infinity at params.data[0]"),
        (
            {"result": {"owner": object()}},
            "Unable to serialize unknown type: <class 'object'> at result.owner",
        ),
        ({"result": ["\ud800"]}, "a string with a lone surrogate (not UTF-8) at result[0]"),
    ],
)
def test_encode_never_writes_what_json_cannot_carry(message: Any, reason: str) -> None:
    """JSON has no NaN or Infinity (strict clients drop the line): the encoder refuses them,
    saying what and where, rather than writing them or silently writing null."""
    with pytest.raises(Unencodable) as raised:
        jsonrpc.encode(message)
    assert str(raised.value) == reason


def test_encode_refuses_a_circular_message() -> None:
    loop: dict[str, Any] = {}
    loop["again"] = loop
    with pytest.raises(Unencodable) as raised:
        jsonrpc.encode({"result": loop})
    assert str(raised.value) == "a circular reference, or nesting deeper than 300 levels"


def test_text_that_spells_nan_or_infinity_is_just_text() -> None:
    message = {"result": {"text": "NaN, Infinity and -Infinity", "n": 1.5}}
    assert jsonrpc.encode(message) == b'{"result":{"text":"NaN, Infinity and -Infinity","n":1.5}}'


def test_an_encoded_message_keeps_its_bytes_and_a_batch_joins_them() -> None:
    first = jsonrpc.encoded(jsonrpc.result_response(1, {}))
    second = jsonrpc.encoded(jsonrpc.error_response(2, ParseError()))
    assert first == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert jsonrpc.encode(first) is first.data
    assert jsonrpc.encoded(first) is first
    assert (
        jsonrpc.encode([first, second])
        == json.dumps([first, second], separators=(",", ":")).encode()
    )


@pytest.mark.parametrize(
    "message",
    [
        {"result": [10**4300]},
        {"result": [12345] * 1000 + [10**4300]},  # many digits before the long one
        {"result": {"n": -(10**4300), "text": "9" * 5000}},
    ],
    ids=["alone", "after-5000-short-digits", "negative-next-to-digit-text"],
)
def test_an_integer_longer_than_clients_read_is_refused(message: Any) -> None:
    with pytest.raises(Unencodable) as raised:
        jsonrpc.encode(message)
    assert str(raised.value).startswith("an integer of more than 4300 digits at result")


@pytest.mark.parametrize(
    "value",
    [[12345] * 1000, 10**4299, ["9" * 4301], "7" * 9000],
    ids=["many-short-numbers", "4300-digits", "digits-in-a-string", "long-digit-text"],
)
def test_many_digits_or_digits_in_text_are_written(value: Any) -> None:
    assert (
        jsonrpc.encode({"result": value})
        == json.dumps({"result": value}, separators=(",", ":")).encode()
    )
