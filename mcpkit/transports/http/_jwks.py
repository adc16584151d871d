"""The signing keys of an authorization server, read from its JWK Set URL (RFC 7517) with the
standard library only: fetched off the event loop, cached, refreshed at most once a minute.

A token naming a key id the cache lacks asks for a refresh (the server rotated its keys); a
refresh attempted less than ``MIN_INTERVAL`` seconds after the last one is skipped, so a flood of
tokens with made-up key ids costs the authorization server one request a minute, not one a
token. Concurrent requests share one fetch. A failed fetch keeps the keys already known and is
logged as a warning; the token that needed it is rejected by the caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import logging
import urllib.request
from collections.abc import Callable
from typing import IO, Any
from urllib.parse import urlsplit

from mcpkit.transports.http._guards import _loopback_host

__all__ = ["MAX_AGE", "MIN_INTERVAL", "KeySet", "check_jwks_url"]

logger = logging.getLogger("mcpkit.http")

MIN_INTERVAL = 60.0  # seconds between two fetches, at least
MAX_AGE = 3600.0  # a set older than this is fetched again on its next use (revoked keys go)
MAX_BYTES = 1 << 20  # a JWK Set larger than 1 MiB is refused
JWK = dict[str, Any]


def check_jwks_url(url: str) -> str:
    """``url`` if it is ``https://``, or ``http://`` to a loopback host; else ``ValueError``."""
    parts = urlsplit(url)
    if parts.hostname and (
        parts.scheme == "https" or (parts.scheme == "http" and _loopback_host(parts.hostname))
    ):
        return url
    raise ValueError(
        f"jwks_url must be an https:// URL (http:// only to a loopback host), not {url!r}"
    )


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to a URL ``check_jwks_url`` accepts (no downgrade to http)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        check_jwks_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def download(url: str, timeout: float) -> dict[str | None, JWK]:
    """The signature keys of the JWK Set at ``url`` by key id (blocking: run it in a thread)."""
    handlers: list[urllib.request.BaseHandler] = [_Redirects()]
    if _loopback_host(urlsplit(url).hostname or ""):
        handlers.append(urllib.request.ProxyHandler({}))  # never through a proxy
    request = urllib.request.Request(url, headers={"accept": "application/json"})
    with urllib.request.build_opener(*handlers).open(request, timeout=timeout) as response:
        body = response.read(MAX_BYTES + 1)
    if len(body) > MAX_BYTES:
        raise ValueError(f"the JWK Set is larger than {MAX_BYTES} bytes")
    document = json.loads(body)
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise ValueError('the document is not a JWK Set (no "keys" list)')
    return {
        key.get("kid"): key
        for key in keys
        if isinstance(key, dict)
        and key.get("use", "sig") == "sig"
        and isinstance(key.get("kid"), (str, type(None)))  # a kid is a string (RFC 7517)
    }


class KeySet:
    """The keys of one JWK Set URL, cached; ``await find(kid)`` is the key dict or ``None``."""

    def __init__(self, url: str, timeout: float, clock: Callable[[], float]) -> None:
        self.url = check_jwks_url(url)
        self.timeout = timeout
        self.clock = clock
        self.keys: dict[str | None, JWK] = {}
        self.fetched: float | None = None  # when the keys were fetched
        self.attempted: float | None = None  # when a fetch last started
        self.pending: concurrent.futures.Future[None] | None = None  # the fetch under way

    async def find(self, kid: str | None) -> JWK | None:
        """The key named ``kid`` (a token without one: the set's only key)."""
        key = self._lookup(kid)
        if key is None or self._stale():
            await self._refresh()
            key = self._lookup(kid)
        return key

    def _lookup(self, kid: str | None) -> JWK | None:
        key = self.keys.get(kid)
        if key is None and kid is None and len(self.keys) == 1:
            (key,) = self.keys.values()
        return key

    def _stale(self) -> bool:
        return self.fetched is None or self.clock() - self.fetched >= MAX_AGE

    async def _refresh(self) -> None:
        pending = self.pending
        if pending is not None:  # another request is fetching: wait for it (on any event loop)
            await asyncio.shield(asyncio.wrap_future(pending))
            return
        if self.attempted is not None and self.clock() - self.attempted < MIN_INTERVAL:
            return
        self.attempted = self.clock()
        self.pending = pending = concurrent.futures.Future()
        try:
            keys = await asyncio.to_thread(download, self.url, self.timeout)
        # URLError, HTTPError, timeouts (OSError); bad JSON, a refused redirect (ValueError);
        # a broken response (HTTPException); absurdly nested JSON (RecursionError)
        except (OSError, ValueError, http.client.HTTPException, RecursionError) as error:
            logger.warning("could not fetch the JWK Set %s: %s", self.url, error)
        else:
            self.keys, self.fetched = keys, self.clock()
        finally:
            self.pending = None
            pending.set_result(None)
