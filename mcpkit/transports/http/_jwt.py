"""JWT access tokens for :class:`~mcpkit.transports.http.BearerAuth` (the ``jwt`` extra):
:class:`JWTVerifier`, built on PyJWT and its ``cryptography`` backend.

Loaded only when ``JWTVerifier`` is first named, so neither ``import mcpkit`` nor
``import mcpkit.transports.http`` imports PyJWT. A token is refused (``None``: BearerAuth's 401
with ``error="invalid_token"``) unless its header names an accepted public-key algorithm and a
known key, its signature verifies with that key, and its ``iss``, ``aud``, ``exp`` (and ``nbf``,
``iat`` when present) hold; the reason goes to the ``mcpkit.http`` log at debug level, never to
the client.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from mcpkit.transports.http._jwks import JWK, KeySet

INSTALL = 'JWTVerifier needs PyJWT and cryptography: pip install "mcpkit[jwt]"'

try:
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm, requires_cryptography
except ImportError as error:
    raise ImportError(INSTALL) from error

__all__ = ["JWTVerifier"]

logger = logging.getLogger("mcpkit.http")

PublicKey: TypeAlias = (
    rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey
)
REQUIRED_CLAIMS = ["exp", "iss", "aud"]
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+={0,2}")  # padded, as some issuers send it, or not


class JWTVerifier:
    """Verifies JWT access tokens issued by one authorization server, for ``BearerAuth``.

    ``issuer`` is the server's issuer identifier (the token's ``iss``); ``audience`` is this
    MCP server's resource URL (RFC 8707: a token issued for another resource is refused), one
    string or several. The signing keys come from ``jwks_url`` (the server's ``jwks_uri``,
    ``https://``; ``http://`` only to a loopback host) or from one PEM ``public_key``.
    ``algorithms`` are the public-key algorithms accepted (never ``none`` or ``HS*``);
    ``leeway`` is the clock skew, in seconds, allowed on ``exp``, ``nbf`` and ``iat``.
    ``jwks_timeout`` bounds each fetch of the key set; ``clock`` (monotonic seconds) times the
    key-set cache, for tests. Calling the verifier with a token gives its claims (the
    principal tools read as ``ctx.principal``) or ``None``.
    """

    __slots__ = ("_prepared", "algorithms", "audience", "issuer", "keys", "leeway")

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        jwks_url: str | None = None,
        public_key: str | bytes | PublicKey | None = None,
        algorithms: Sequence[str] = ("RS256", "ES256"),
        leeway: float = 30,
        jwks_timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if (jwks_url is None) == (public_key is None):
            raise ValueError("JWTVerifier takes one of jwks_url= and public_key=")
        self.issuer = issuer
        self.audience = audience if isinstance(audience, str) else list(audience)
        if not issuer or not self.audience:
            raise ValueError("JWTVerifier needs an issuer and an audience (this server's URL)")
        self.algorithms = _public_key_algorithms(algorithms)
        self.leeway = leeway
        self.keys: KeySet | _OneKey = (
            KeySet(jwks_url, jwks_timeout, clock) if jwks_url is not None else _OneKey(public_key)
        )
        self._prepared: dict[tuple[str | None, str], tuple[JWK, jwt.PyJWK]] = {}

    async def __call__(self, token: str) -> dict[str, Any] | None:
        """The token's claims, or ``None`` if it is not valid here (the reason is logged)."""
        try:
            return await self._claims(token)
        except jwt.PyJWTError as error:
            logger.debug("bearer token refused: %s", error)
            return None

    async def _claims(self, token: str) -> dict[str, Any]:
        alg, kid = _routing(token)
        if alg not in self.algorithms:
            raise jwt.InvalidAlgorithmError(f"algorithm {alg!r} is not accepted")
        jwk = await self.keys.find(kid)
        if jwk is None:
            raise jwt.InvalidKeyError(f"no key {kid!r} in the key set")
        claims: dict[str, Any] = jwt.decode(
            token,
            self._key(kid, alg, jwk),
            algorithms=[alg],
            issuer=self.issuer,
            audience=self.audience,
            leeway=self.leeway,
            options={"require": REQUIRED_CLAIMS},
        )
        return claims

    def _key(self, kid: str | None, alg: str, jwk: JWK) -> jwt.PyJWK:
        """``jwk`` bound to ``alg`` (its own ``alg``, if it names one, must agree), built once
        per key and algorithm: a key of another type for ``alg`` raises ``InvalidKeyError``.
        Cached under the key's own ``kid``, never the token's: a single ``public_key``
        verifies any kid a client makes up, so the cache stays one entry per key."""
        slot = (jwk.get("kid"), alg)
        cached = self._prepared.get(slot)
        if cached is not None and cached[0] is jwk:
            return cached[1]
        if jwk.get("alg", alg) != alg:
            raise jwt.InvalidKeyError(f"key {kid!r} is for {jwk['alg']!r}, not {alg!r}")
        key = jwt.PyJWK(jwk, alg)
        self._prepared[slot] = (jwk, key)
        return key


def _routing(token: str) -> tuple[Any, str | None]:
    """The ``alg`` and ``kid`` of the token's header, read only to choose the key.

    PyJWT's own header reader checks all three segments character by character (~60 µs for a
    typical token); ``jwt.decode`` does that anyway, strictly, header included, and refuses an
    ``alg`` other than the one chosen here, so this reads the first segment alone."""
    segment = token.partition(".")[0]
    try:
        if not _BASE64URL.fullmatch(segment):
            raise ValueError("not base64url")
        segment = segment.rstrip("=")
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    # binascii.Error, JSONDecodeError, UnicodeDecodeError; absurdly nested JSON (a client's
    # few kilobytes of "[" must be a 401 like any bad token, not a 500 and a traceback)
    except (ValueError, RecursionError) as error:
        raise jwt.DecodeError(f"Invalid header: {error}") from None
    if not isinstance(header, dict):
        raise jwt.DecodeError("Invalid header: not a JSON object")
    kid = header.get("kid")
    if kid is not None and not isinstance(kid, str):
        raise jwt.InvalidTokenError("Key ID header parameter must be a string")
    return header.get("alg"), kid


class _OneKey:
    """A single configured public key: it verifies every token, whatever key id it names."""

    def __init__(self, key: str | bytes | PublicKey | None) -> None:
        self.jwk = _public_jwk(key)

    async def find(self, kid: str | None) -> JWK:
        return self.jwk


def _public_key_algorithms(algorithms: Sequence[str]) -> tuple[str, ...]:
    """The algorithms, checked: public-key signatures only (``none``, ``HS*`` are refused)."""
    chosen = (algorithms,) if isinstance(algorithms, str) else tuple(algorithms)
    wrong = [alg for alg in chosen if alg not in requires_cryptography]
    if wrong or not chosen:
        accepted = ", ".join(sorted(requires_cryptography))
        raise ValueError(f"JWTVerifier accepts public-key algorithms ({accepted}), not {wrong}")
    return chosen


def _public_jwk(key: object) -> JWK:
    """A PEM public key (or a ``cryptography`` public key object) as a JWK dict."""
    if isinstance(key, (str, bytes)):
        try:
            loaded = load_pem_public_key(key.encode() if isinstance(key, str) else key)
        except ValueError as error:
            raise ValueError(f"public_key is not a PEM public key: {error}") from None
        return _public_jwk(loaded)
    if isinstance(key, rsa.RSAPublicKey):
        return RSAAlgorithm.to_jwk(key, as_dict=True)
    if isinstance(key, ec.EllipticCurvePublicKey):
        return ECAlgorithm.to_jwk(key, as_dict=True)
    if isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey)):
        return OKPAlgorithm.to_jwk(key, as_dict=True)
    raise TypeError(f"public_key must be an RSA, EC or EdDSA public key, not {type(key).__name__}")
