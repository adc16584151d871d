"""``mcpkit.protocol.plain``: the standard library's ``json`` reads and writes a server's first
messages exactly as pydantic_core's codec would, or declines.

A server reads ``initialize`` and ``tools/list`` and writes their answers with ``json``, so that
pydantic_core's compiled module and its serializer's first imports (``uuid``, ``platform``,
``fractions``, ``decimal``, ``pathlib``) wait for the warm-up. That is only right if every
message it accepts comes out byte for byte as ``to_json`` writes it, every text it reads gives
the value ``from_json`` gives (same types, same key order), and everything else is declined and
left to pydantic_core, whose errors say what and where.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit._codec import from_json, to_json
from mcpkit.exceptions import InvalidRequest, ParseError
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.plain import DECLINED, plain_json, plain_value

ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=12)
"""Every code point, lone surrogates and C0/C1 controls included."""
PLAIN_SCALARS = st.none() | st.booleans() | st.integers(-(1 << 63) + 1, (1 << 63) - 1) | ANY_TEXT
OTHER_SCALARS = st.floats() | st.integers() | st.tuples(st.integers()) | st.binary(max_size=3)


def trees(scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
        max_leaves=30,
    )


@settings(database=None, max_examples=600, deadline=None)
@given(trees(PLAIN_SCALARS))
def test_a_plain_tree_is_written_as_to_json_writes_it(message: Any) -> None:
    data = plain_json(message)
    try:
        expected = to_json(message)
    except ValueError:  # a lone surrogate: the serializer refuses, so must plain_json
        assert data is None
        return
    assert data == expected  # accepted (a plain tree this small always is) and identical


@settings(database=None, max_examples=400, deadline=None)
@given(trees(PLAIN_SCALARS | OTHER_SCALARS))
def test_anything_else_is_declined_or_identical(message: Any) -> None:
    data = plain_json(message)
    if data is not None:
        assert data == to_json(message)


def test_what_plain_json_declines_and_why() -> None:
    assert plain_json({"a": 1.0}) is None  # json: 1.0, to_json: 1.0; but 1e16 differ
    assert plain_json({1: "a"}) is None  # keys: str only
    assert plain_json([1 << 63]) is None  # beyond 64 bits
    assert plain_json(("a",)) is None  # a tuple
    assert plain_json("\ud800") is None  # a lone surrogate
    deep: list[Any] = []
    for _ in range(70):
        deep = [deep]
    assert plain_json(deep) is None  # nesting deeper than 64
    assert plain_json(list(range(1001))) is None  # larger than a handshake
    assert plain_json({"k": "é\n\u2028\x7f\x1f"}) == b'{"k":"\xc3\xa9\\n\xe2\x80\xa8\x7f\\u001f"}'


def test_encode_writes_the_same_bytes_before_and_after_the_serializer_is_in_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a\tb", "n": -3}]}}
    monkeypatch.setattr(jsonrpc, "_plain_first", True)
    before = jsonrpc.encode(message)
    jsonrpc.serializer_in_use()
    assert jsonrpc.encode(message) == before == to_json(message)


# ------------------------------------------------------------------------------ reading


def same(a: Any, b: Any) -> bool:
    """Equal, with the same types all the way down (``1 == 1.0 == True`` in Python) and the same
    key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or (a != a and b != b)  # NaN


def read_alike(data: bytes | str) -> None:
    """``plain_value`` declines ``data``, or reads what ``from_json`` reads."""
    value = plain_value(data)
    if value is DECLINED:
        return
    try:
        expected = from_json(data, allow_inf_nan=False)
    except ValueError as exc:
        raise AssertionError(f"json read {value!r} from {data!r}; from_json: {exc}") from None
    assert same(value, expected), (data, value, expected)


ANY_NUMBER = st.integers() | st.floats() | st.integers(-(10**5000), 10**5000)
JSON_TREES = st.recursive(
    st.none() | st.booleans() | ANY_NUMBER | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=30,
)
SPACE = st.sampled_from(["", " ", "\n", "\t", "\r\n", "  "])


@st.composite
def texts(draw: st.DrawFn) -> str:
    """JSON text as clients write it: either escaping, any spacing, NaN and huge numbers too."""
    value = draw(JSON_TREES)
    try:
        text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    except ValueError:  # an integer past int()'s digit limit
        return "1" * 5000
    if draw(st.booleans()):
        space = draw(SPACE)
        text = text.replace(", ", "," + space).replace(": ", ":" + space)
    return draw(SPACE) + text + draw(SPACE)


@settings(database=None, max_examples=800, deadline=None)
@given(texts(), st.booleans())
def test_json_text_is_read_as_from_json_reads_it_or_declined(text: str, as_bytes: bool) -> None:
    read_alike(text.encode("utf-8", "surrogatepass") if as_bytes else text)


SPLICES = st.sampled_from(
    [
        b"NaN",
        b"-Infinity",
        b"1e400",
        b"-0",
        b"0.5",
        b"1E2",
        b"01",
        b"\\ud800",
        b"\\uDC00",
        b"\\ud83d\\ude00",
        b"\\u0000",
        b"\xef\xbb\xbf",
        b"\xed\xa0\x80",
        b"\xff",
        b"\x00",
        b"\t",
        b"\x0c",
        b"\x7f",
        b"[",
        b"]",
        b"{",
        b"}",
        b",",
        b":",
        b'"',
        b"\\",
        b"9" * 4400,
        b"\xc3\xa9",
        b"true",
        b"null",
    ]
)


@settings(database=None, max_examples=1500, deadline=None)
@given(texts(), st.lists(st.tuples(st.integers(0, 400), SPLICES), max_size=4))
def test_broken_and_unusual_bytes_are_read_as_from_json_reads_them_or_declined(
    text: str, splices: list[tuple[int, bytes]]
) -> None:
    """Random splices into a valid message: broken JSON, controls, BOMs, bad UTF-8, escaped and
    encoded surrogates, non-finite and overlong numbers."""
    data = text.encode("utf-8", "surrogatepass")
    for at, piece in splices:
        at = min(at, len(data))
        data = data[:at] + piece + data[at:]
    read_alike(data)


HANDSHAKE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    b'"2025-11-25", "capabilities": {"roots": {}}, "clientInfo": {"name": "\xec\xbd\x94'
    b'\xeb\x93\x9c", "version": "1.0"}}}'
)


def test_a_handshake_is_read_by_json_and_what_json_must_not_read_is_declined() -> None:
    assert plain_value(HANDSHAKE) == from_json(HANDSHAKE)  # UTF-8 (Korean) read as is
    assert plain_value(b' {"a": [1, -0, 12345678901234567890123, true, null, "\\n"]}\n') == {
        "a": [1, 0, 12345678901234567890123, True, None, "\n"]
    }
    declined: list[bytes | str] = [
        b'{"a": 1.5}',  # a fraction: floats are pydantic_core's to read
        b"[1e400]",  # an exponent (both read infinity, allow_inf_nan or not)
        b"[NaN]",
        b"[-Infinity]",
        b'["\\ud800"]',  # json reads a lone surrogate; from_json refuses it
        b'["\\ud83d\\ude00"]',  # a pair: both read it, declined all the same (cheap rule)
        b"\xef\xbb\xbf{}",  # a BOM
        b'["\xff"]',  # not UTF-8
        b'["\xed\xa0\x80"]',  # an encoded surrogate
        '["\u00e9"]',  # text (not bytes) that is not ASCII
        b"[" + b"9" * 4400 + b"]",  # past int()'s digit limit: from_json's answer
        b"[" * 65 + b"]" * 65,  # deeper than 64
        b'{"pad": "' + b"x" * 65536 + b'"}',  # larger than 64 KiB
        b'{"a": 1,}',  # broken: from_json's error is the one reported
        b"",
    ]
    for data in declined:
        assert plain_value(data) is DECLINED, data


@pytest.mark.parametrize("plain", [True, False])
def test_decode_gives_the_same_values_and_errors_with_and_without_json(
    plain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jsonrpc, "_plain_first", plain)
    assert jsonrpc.decode(HANDSHAKE)["params"]["clientInfo"]["name"] == "\ucf54\ub4dc"
    assert jsonrpc.decode(b'{"x": [1.5, 1e400]}') == {"x": [1.5, float("inf")]}
    with pytest.raises(ParseError):
        jsonrpc.decode(b'{"a": NaN}')
    with pytest.raises(ParseError):
        jsonrpc.decode(b'["\\ud800"]')
    with pytest.raises(ParseError):
        jsonrpc.decode(b'{"a": 1,}')
    with pytest.raises(InvalidRequest, match="nesting too deep"):
        jsonrpc.decode(b"[" * 129 + b"]" * 129)
    with pytest.raises(InvalidRequest, match="nesting too deep"):
        jsonrpc.decode(b"[" * 5000 + b"]" * 5000)


@pytest.mark.parametrize("limit", [0, 5000])
def test_with_the_interpreters_digit_limit_lifted_integers_are_left_to_from_json(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``json`` reads integers with ``int()``, which follows ``sys.set_int_max_str_digits``;
    ``from_json`` stops at 4,300 digits whatever it is: then the reader is always from_json."""
    long = b"[" + b"7" * 4301 + b"]"
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        assert plain_value(b"[1]") is DECLINED
        monkeypatch.setattr(jsonrpc, "_plain_first", True)
        with pytest.raises(ParseError):
            jsonrpc.decode(long)
    finally:
        sys.set_int_max_str_digits(previous)
    assert plain_value(b"[1]") == [1]
