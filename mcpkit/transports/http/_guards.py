"""Request guards: ``Host`` (DNS rebinding on loopback binds, 421), ``Origin`` (403), and
content negotiation (``Content-Type`` 415, ``Accept`` 406)."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Iterable
from typing import Any

from mcpkit.exceptions import InvalidRequest
from mcpkit.transports.http._exchange import JSON, SSE, Exchange, HttpError

__all__ = ["Guards", "accepts"]

_JSON_ONLY, _JSON_AND_SSE = (JSON,), (JSON, SSE)  # what a POST's Accept must allow
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_PASSED = 256  # header combinations remembered as allowed (then forgotten all at once)
_REMEMBERED_CHARACTERS = 512  # the longest combination remembered


class Guards:
    """The Host/Origin allow-lists (``None``: loopback only) and what a POST must accept."""

    def __init__(
        self,
        allowed_origins: Iterable[str] | None,
        allowed_hosts: Iterable[str] | None,
        *,
        json_response: bool,
    ) -> None:
        self.allowed_origins = _lowered(allowed_origins)
        self.allowed_hosts = _lowered(allowed_hosts)
        self.needed = _JSON_ONLY if json_response else _JSON_AND_SSE
        # What passed, by the values the checks read: clients send the same few combinations.
        self._passed: dict[tuple[Any, ...], None] = {}
        self._passed_content: dict[tuple[Any, ...], None] = {}

    def check_caller(self, http: Exchange) -> None:
        """:meth:`check_host`, then :meth:`check_origin` (remembered when both pass)."""
        server = http.scope.get("server")  # (ASGI allows a list: keyed by what is read of it)
        host, origin = http.headers.get("host"), http.headers.get("origin")  # (values' lists)
        bound = str(server[0]) if server else None
        key = (bound, host[0] if host else None, origin[0] if origin else None)
        if key not in self._passed:
            self.check_host(http)
            self.check_origin(http)
            _remember(self._passed, key)

    def check_post(self, http: Exchange) -> None:
        """:meth:`check_content` (remembered when it passes)."""
        content_type, accept = http.headers.get("content-type"), http.headers.get("accept")
        key = (content_type[0] if content_type else None, accept[0] if accept else None)
        if key not in self._passed_content:
            self.check_content(http)
            _remember(self._passed_content, key)

    def check_host(self, http: Exchange) -> None:
        if self.allowed_hosts is None and not _loopback_bind(http.scope.get("server")):
            return
        host = (http.header("host") or "").lower()
        if self.allowed_hosts is None:
            ok = _hostname(host) in _LOOPBACK_NAMES
        else:
            ok = "*" in self.allowed_hosts or host in self.allowed_hosts
            ok = ok or _hostname(host) in self.allowed_hosts
        if not ok:
            raise HttpError(421, InvalidRequest(f"Misdirected Request: Host {host!r} not allowed"))

    def check_origin(self, http: Exchange) -> None:
        origin = http.header("origin")
        if origin is None:
            return
        if self.allowed_origins is None:
            scheme, _, authority = origin.lower().partition("://")
            ok = scheme in ("http", "https") and _hostname(authority.rstrip("/")) in _LOOPBACK_NAMES
        else:
            ok = "*" in self.allowed_origins or origin.lower().rstrip("/") in self.allowed_origins
        if not ok:
            raise HttpError(403, InvalidRequest(f"Forbidden: Origin {origin!r} not allowed"))

    def check_content(self, http: Exchange) -> None:
        content_type = (http.header("content-type") or "").partition(";")[0].strip().lower()
        if content_type != JSON:
            raise HttpError(415, InvalidRequest("Unsupported Media Type: send application/json"))
        accept = http.header("accept")
        if not all(accepts(accept, kind) for kind in self.needed):
            wanted = " and ".join(self.needed)
            raise HttpError(406, InvalidRequest(f"Not Acceptable: the client must accept {wanted}"))


def _remember(passed: dict[tuple[Any, ...], None], key: tuple[Any, ...]) -> None:
    if sum(len(value) for value in key if value is not None) > _REMEMBERED_CHARACTERS:
        return  # long values are checked each time, not kept
    if len(passed) >= _PASSED:  # many different values (a scan, an attack): start again
        passed.clear()
    passed[key] = None


def _lowered(values: Iterable[str] | None) -> frozenset[str] | None:
    return None if values is None else frozenset(v.lower().rstrip("/") for v in values)


def _loopback_bind(server: Any) -> bool:
    return bool(server) and _loopback_host(str(server[0]))


@functools.lru_cache(maxsize=64)
def _loopback_host(host: str) -> bool:
    """Whether the server's bound address is a loopback one (parsed once per address)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def _hostname(authority: str) -> str | None:
    """``host[:port]`` -> host (``[::1]:8000`` -> ``::1``), or ``None`` if it does not parse
    (``[::1``, ``[::1]x``, ``a:b:c``): such a value is refused like one not allowed."""
    if authority.startswith("["):
        host, bracket, port = authority[1:].partition("]")
        if not bracket or (port and port[0] != ":"):
            return None
        port = port[1:]
    else:
        host, _, port = authority.partition(":")
    return host if host and (not port or port.isdigit()) else None


def accepts(accept: str | None, wanted: str) -> bool:
    """Whether an ``Accept`` header allows ``wanted`` (no header allows anything)."""
    if accept is None:
        return True
    if len(accept) <= _CACHED_ACCEPT:  # clients send the same few values: parsed once
        return _accept_allows_cached(accept, wanted)
    return _accept_allows(accept, wanted)


def _accept_allows(accept: str, wanted: str) -> bool:
    family = wanted.partition("/")[0] + "/*"
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if media.lower() in (wanted, family, "*/*") and not _zero_quality(params):
            return True
    return False


_CACHED_ACCEPT = 256  # characters: the longest Accept value cached (256 of them at most)
_accept_allows_cached = functools.lru_cache(maxsize=256)(_accept_allows)


def _zero_quality(params: list[str]) -> bool:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return float(value) == 0
            except ValueError:
                return False
    return False
