"""``jsonrpc.plain_json``: the standard library's bytes for the handshake are ``to_json``'s bytes.

A server encodes its first, small, plain answers (``initialize``, a short ``tools/list``) with
``json`` so that pydantic_core's serializer, whose first use imports ``uuid``, ``platform``,
``fractions``, ``decimal`` and ``pathlib``, waits for the warm-up. That is only right if every
message it accepts comes out byte for byte as ``to_json`` writes it, and every one it cannot
write so is declined (``None``) and left to the serializer, whose errors say what and where.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpkit._codec import to_json
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import plain_json

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


def test_encode_writes_the_same_bytes_before_and_after_the_serializer_is_in_use() -> None:
    message = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a\tb", "n": -3}]}}
    before = jsonrpc.encode(message)
    jsonrpc.serializer_in_use()
    assert jsonrpc.encode(message) == before == to_json(message)
