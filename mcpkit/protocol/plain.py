"""The standard library's ``json`` standing in for pydantic_core's codec, for a server's first
messages: the exact value ``from_json`` reads (:func:`plain_value`) and the exact bytes
``to_json`` writes (:func:`plain_json`), or a refusal, never an approximation.

A server reads ``initialize`` and ``tools/list`` and writes their answers before its first call.
pydantic_core's compiled module (5 MB, with ``datetime``) and its serializer's first use (which
imports ``uuid``, ``platform``, ``fractions``, ``decimal`` and ``pathlib``) cost ~15 ms of a
start-up on a slow VM that those messages do not need; the warm-up after the listing loads them
with pydantic. ``mcpkit.protocol.jsonrpc`` decides when to use these (until the serializer is
in use); this module only says what ``json`` can stand in for. The property tests in
``tests/test_jsonrpc_plain.py`` hold both sides equal, byte for byte and type for type.
"""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["DECLINED", "plain_json", "plain_value"]

_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
_PLAIN_NODES = 1000  # the handshake and a small listing (~150 for 4 tools); a page of 100 is larger
_PLAIN_DEPTH = 64  # far from the serializer's own limit (~255 levels), so it never differs
_PLAIN_INT = 1 << 63


def plain_json(message: Any) -> bytes | None:
    """The bytes ``to_json`` writes for ``message``, written by the standard library's ``json``,
    when ``message`` is a small tree of exact ``dict`` (``str`` keys), ``list``, ``str``,
    ``int`` (64-bit), ``bool`` and ``None`` (no floats: ``json`` prints ``1e+16``, ``to_json``
    ``1e16``); else ``None``. Both escape the same characters the same way (``"``, ``\\``,
    and the C0 controls, as ``\\b \\f \\n \\r \\t`` or lowercase ``\\u00xx``): the
    property test holds them byte-identical."""
    stack: list[tuple[Any, int]] = [(message, 0)]
    budget = _PLAIN_NODES
    while stack:
        node, depth = stack.pop()
        budget -= 1
        kind = type(node)
        if budget < 0 or depth > _PLAIN_DEPTH:
            return None
        if kind is dict:
            if not all(type(key) is str for key in node):
                return None
            stack.extend([(value, depth + 1) for value in node.values()])
        elif kind is list:
            stack.extend([(item, depth + 1) for item in node])
        elif kind is int:
            if not -_PLAIN_INT < node < _PLAIN_INT:
                return None
        elif not (kind is str or kind is bool or node is None):
            return None
    try:
        return _DUMPS(message).encode()
    except UnicodeEncodeError:  # a lone surrogate: the serializer's error says where
        return None


class _Declined(Exception):
    """A number ``json`` would read, but not as pydantic_core does (see :func:`plain_value`)."""


def _decline(text: str) -> Any:
    raise _Declined


DECLINED: Any = object()
"""What :func:`plain_value` returns for data it leaves to ``from_json``."""
_LOADS = json.JSONDecoder(parse_float=_decline, parse_constant=_decline).decode
_INT_DIGITS = 4300  # the longest integer from_json reads, whatever the interpreter's limit
_int_digits = getattr(sys, "get_int_max_str_digits", lambda: 0)  # before 3.10.7: no limit
_PLAIN_BYTES = 65536  # a handshake is ~200 bytes; larger data would be read twice when declined


def plain_value(data: bytes | str) -> Any:
    """The value ``from_json`` reads from ``data``, read by the standard library's ``json``, or
    :data:`DECLINED` (then ``from_json`` reads it: its value, or its error). Declined: more than
    64 KiB, bytes that are not UTF-8, text (``str``) that is not ASCII, brackets enough
    to nest past ``_PLAIN_DEPTH``, a ``\\ud`` escape (``json`` reads a lone surrogate,
    ``from_json`` refuses it), a fraction or an exponent (floats: both read ``1e400`` as
    infinity, but two float readers are two decisions), ``NaN`` and ``Infinity``, and anything
    ``json`` refuses (broken JSON, an integer past 4,300 digits; everything while the
    interpreter's limit on them is lifted or above that, since ``json`` then reads what
    ``from_json`` refuses). The property test holds the two equal, types and key order
    included."""
    if len(data) > _PLAIN_BYTES or not 0 < _int_digits() <= _INT_DIGITS:
        return DECLINED  # json's int() follows the interpreter's digit limit; from_json does not
    if isinstance(data, str):
        if not data.isascii():
            return DECLINED  # it may hold a lone surrogate, which from_json refuses
        text = data
    else:
        try:
            text = data.decode()
        except UnicodeDecodeError:
            return DECLINED
    if "\\ud" in text or "\\uD" in text or text.count("[") + text.count("{") > _PLAIN_DEPTH:
        return DECLINED
    try:
        return _LOADS(text)
    except (ValueError, _Declined):  # JSONDecodeError, an integer too long for int()
        return DECLINED
