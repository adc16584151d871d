"""URI templates, the RFC 6570 subset resources use (``{var}``, ``{+var}``), matched in linear time.

A variable takes at least one character: ``{var}`` none of ``/ ? #``, ``{+var}`` anything but a
line break; the text between variables must appear as written. Most templates cut a URI at once:
when every variable but the last is a ``{var}`` followed by text holding one of ``/ ? #``
(``users://{id}/posts/{+path}``), each ends where that character is next found.

Other templates can split a URI more than one way (``{+owner}/{+path}`` against ``a/b/c``); each
variable then takes as much as it can, from the left (``a/b`` and ``c``). That is what the
backtracking regular expression used before matched, kept so that no template changes meaning,
but found without backtracking, which took seconds per 40 KB URI on the event loop: a pass from
the right finds, for each variable, every position where it may end with the rest of the template
still matching; a pass from the left then takes the furthest of those for each variable in turn.
Both passes visit each position a bounded number of times per variable, so the work is linear in
the URI's length, but in Python (~1 us a character): such templates match URIs of at most
:data:`MAX_SPLIT_LENGTH` characters, which bounds one match to milliseconds.

The text is cut where the URI has ``/ ? #`` as written, so a percent-encoded ``%2F`` never
separates variables; then each value is percent-decoded as :func:`decode` says.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable

__all__ = ["MAX_SPLIT_LENGTH", "VARIABLE", "UriTemplate", "decode"]

MAX_SPLIT_LENGTH = 16 * 1024
"""The longest URI a template that may split it more than one way matches (RFC 9110 asks for at
least 8,000 octets)."""

VARIABLE = re.compile(r"\{(\+?)([A-Za-z_][A-Za-z0-9_]*)\}")
"""One variable: ``{name}`` or ``{+name}`` (group 1 is the ``+``, group 2 the name)."""

_STOP = {False: re.compile(r"[/?#]"), True: re.compile(r"\n")}
"""What a variable cannot hold, by whether it is reserved (``{+var}``)."""

_MALFORMED = re.compile(r"%(?![0-9A-Fa-f]{2})")
_RESERVED = re.compile(
    "(" + "|".join(f"%{ord(c):02X}" for c in ":/?#[]@!$&'()*+,;=") + ")", re.IGNORECASE
)
"""A percent-encoded reserved character (RFC 3986 section 2.2), as one group to split on."""

_Spans = list[tuple[int, int]]
"""Sorted, disjoint ``(first, last)`` ranges of positions (both ends included)."""


class UriTemplate:
    """A parsed template: :meth:`split` cuts a URI into its variables' raw (encoded) values."""

    __slots__ = ("_head", "_literals", "_offsets", "names", "reserved")

    def __init__(self, template: str) -> None:
        pieces = VARIABLE.split(template)  # literal, plus, name, literal, plus, name, ..., literal
        self._head = pieces[0]
        self.reserved = tuple(plus == "+" for plus in pieces[1::3])
        self.names = tuple(pieces[2::3])
        self._literals = tuple(pieces[3::3])  # the text after each variable
        self._offsets = _stop_offsets(self.reserved, self._literals)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values in ``uri``, decoded; ``None`` if it does not match."""
        parts = self.split(uri)
        if parts is None:
            return None
        values = {}
        for name, reserved, part in zip(self.names, self.reserved, parts, strict=True):
            value = decode(part, reserved)
            if value is None:
                return None
            values[name] = value
        return values

    def split(self, uri: str) -> list[str] | None:
        """Each variable's part of ``uri`` (as written in it), or ``None`` if it does not match."""
        tail = self._literals[-1]
        lo, hi = len(self._head), len(uri) - len(tail)
        if hi - lo < len(self.names) or not uri.startswith(self._head) or not uri.endswith(tail):
            return None
        if self._offsets is not None:
            return self._cut(uri, lo, hi, self._offsets)
        if len(uri) > MAX_SPLIT_LENGTH:
            return None
        stops = _Stops(uri, lo, hi)
        ends = self._ends(uri, lo, hi, stops)
        return None if ends is None else self._take(uri, lo, ends, stops)

    def _cut(self, uri: str, lo: int, hi: int, offsets: tuple[int, ...]) -> list[str] | None:
        """Each variable but the last ends ``offset`` characters before the next ``/ ? #``."""
        values, start = [], lo
        for offset, literal in zip(offsets, self._literals, strict=False):
            stop = _STOP[False].search(uri, start, hi)
            end = -1 if stop is None else stop.start() - offset
            if end <= start or not uri.startswith(literal, end):
                return None
            values.append(uri[start:end])
            start = end + len(literal)
        last = uri[start:hi]
        if not last or _STOP[self.reserved[-1]].search(last):
            return None
        values.append(last)
        return values

    def _ends(self, uri: str, lo: int, hi: int, stops: _Stops) -> list[list[int]] | None:
        """From the right: for each variable, the sorted positions where it may end."""
        found: list[list[int]] = []
        starts: _Spans = [(hi, hi)]  # where what follows the variable may start
        for index in reversed(range(len(self.names))):
            literal = self._literals[index] if index < len(self.names) - 1 else ""
            ends = _literal_at(uri, literal, starts, lo + 1)
            starts = _reaching(ends, stops.last_before(self.reserved[index]), lo)
            if not starts:
                return None
            found.append(ends)
        found.reverse()
        return found if starts[0][0] == lo else None

    def _take(self, uri: str, lo: int, ends: list[list[int]], stops: _Stops) -> list[str]:
        """From the left: each variable takes the furthest end it can reach."""
        values, start = [], lo
        for index, candidates in enumerate(ends):
            limit = stops.next_from(self.reserved[index])(start)
            end = candidates[bisect_right(candidates, limit) - 1]
            values.append(uri[start:end])
            start = end + len(self._literals[index])
        return values


def decode(part: str, reserved: bool) -> str | None:
    """The value a variable expanded to ``part`` (RFC 6570 section 3.2), or ``None`` if none did.

    ``{var}`` percent-encodes every character but the unreserved ones, so every triplet is
    decoded. ``{+var}`` lets reserved characters and triplets through as they are: ``/`` in its
    part was ``/`` in the value and ``%2F`` was ``%2F``, so the triplets of reserved characters
    stay encoded (the function can tell ``a%2Fb`` from ``a/b``) and the others are decoded. The
    decoded bytes must be UTF-8, and a ``%`` must start a triplet.
    """
    if "%" not in part:
        return part
    if _MALFORMED.search(part):
        return None
    from urllib.parse import unquote_to_bytes  # ~3 ms to import: the first %-escape pays it

    pieces = _RESERVED.split(part) if reserved else [part]  # text, kept triplet, text, ...
    try:
        decoded = [p if i % 2 else unquote_to_bytes(p).decode() for i, p in enumerate(pieces)]
    except UnicodeDecodeError:
        return None
    return "".join(decoded)


class _Stops:
    """The positions of the characters each kind of variable stops at, found once, on demand."""

    __slots__ = ("_found", "_hi", "_lo", "_uri")

    def __init__(self, uri: str, lo: int, hi: int) -> None:
        self._uri, self._lo, self._hi = uri, lo, hi
        self._found: dict[bool, list[int]] = {}

    def _positions(self, reserved: bool) -> list[int]:
        if reserved not in self._found:
            found = _STOP[reserved].finditer(self._uri, self._lo, self._hi)
            self._found[reserved] = [match.start() for match in found]
        return self._found[reserved]

    def last_before(self, reserved: bool) -> Callable[[int], int]:
        """``position -> the last stop before it`` (``-1`` if none)."""
        positions = self._positions(reserved)

        def last(position: int) -> int:
            index = bisect_left(positions, position) - 1
            return positions[index] if index >= 0 else -1

        return last

    def next_from(self, reserved: bool) -> Callable[[int], int]:
        """``position -> the first stop at or after it`` (the end of the URI if none)."""
        positions = self._positions(reserved)

        def following(position: int) -> int:
            index = bisect_left(positions, position)
            return positions[index] if index < len(positions) else self._hi

        return following


def _stop_offsets(reserved: tuple[bool, ...], literals: tuple[str, ...]) -> tuple[int, ...] | None:
    """Where ``/ ? #`` first stands in the text after each variable but the last (``None``
    unless each of those is a ``{var}`` and its text holds one)."""
    offsets = []
    for plus, literal in zip(reserved[:-1], literals, strict=False):
        stop = _STOP[False].search(literal)
        if plus or stop is None:
            return None
        offsets.append(stop.start())
    return tuple(offsets)


def _literal_at(uri: str, literal: str, starts: _Spans, first: int) -> list[int]:
    """Sorted positions ``p >= first`` where ``literal`` stands and is followed by a start."""
    size, found = len(literal), list[int]()
    for low, high in starts:
        begin, end = max(low - size, first), high - size
        if not size:
            found.extend(range(begin, end + 1))
            continue
        position = uri.find(literal, begin, high)
        while position != -1:
            found.append(position)
            position = uri.find(literal, position + 1, high)
    return found


def _reaching(ends: list[int], last_stop: Callable[[int], int], lo: int) -> _Spans:
    """The start positions from which a variable reaches one of ``ends`` without a stop."""
    spans: _Spans = []
    for end in ends:
        first = max(last_stop(end) + 1, lo)
        if first >= end:
            continue
        if spans and first <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], end - 1)
        else:
            spans.append((first, end - 1))
    return spans
