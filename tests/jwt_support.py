"""JWT test support: keys made on the spot, a JWK Set served on loopback that counts its
fetches, a clock that moves only when told, and tokens (valid, or broken in a chosen way) for an
issuer and audience of its own."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://auth.example.com"
AUDIENCE = "https://mcp.example.com/mcp"
RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_RSA_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EC_KEY = ec.generate_private_key(ec.SECP256R1())
RSA_PEM = RSA_KEY.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
)


def rsa_jwk(kid: str, key: rsa.RSAPrivateKey = RSA_KEY, **extra: str) -> dict[str, Any]:
    return {**RSAAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": kid, **extra}


def ec_jwk(kid: str) -> dict[str, Any]:
    return {**ECAlgorithm.to_jwk(EC_KEY.public_key(), as_dict=True), "kid": kid}


class KeyServer:
    """A JWK Set served on loopback (``with KeyServer().serving() as keys``): ``keys`` may
    change; ``fetches`` counts the GETs; ``status`` and ``body`` replace the answer."""

    def __init__(self) -> None:
        self.keys = [rsa_jwk("rsa-1"), ec_jwk("ec-1")]
        self.fetches = 0
        self.status = 200
        self.body: bytes | None = None  # replaces the JWK Set when set
        self.location = ""  # when set, /jwks.json redirects there (302)
        self.started = threading.Event()  # a fetch has begun
        self.release = threading.Event()  # lets a fetch answer
        self.release.set()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.fetches += 1
                owner.started.set()
                owner.release.wait(10)
                body = owner.body or json.dumps({"keys": owner.keys}).encode()
                moved = owner.location and self.path == "/jwks.json"
                self.send_response(302 if moved else owner.status)
                self.send_header("content-type", "application/json")
                if moved:
                    self.send_header("location", owner.location)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/jwks.json"

    @contextlib.contextmanager
    def serving(self) -> Iterator[KeyServer]:
        thread = threading.Thread(target=self.http.serve_forever, args=(0.01,), daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.release.set()
            self.http.shutdown()
            self.http.server_close()
            thread.join(10)


class Clock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def claims(**changes: Any) -> dict[str, Any]:
    """Valid claims for this server; a change to ``None`` removes the claim."""
    now = int(time.time())
    base = {"iss": ISSUER, "aud": AUDIENCE, "sub": "ada", "iat": now, "exp": now + 300}
    base.update(changes)
    return {name: value for name, value in base.items() if value is not None}


def token(kid: str | None = "rsa-1", alg: str = "RS256", key: Any = RSA_KEY, **changes: Any) -> str:
    headers = {} if kid is None else {"kid": kid}
    return jwt.encode(claims(**changes), key, algorithm=alg, headers=headers)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def segments(header: Any, payload: Any = None) -> str:
    """``header.payload`` of a hand-made token (JSON-encoded unless already bytes)."""
    parts = [header, claims() if payload is None else payload]
    return ".".join(b64(p if isinstance(p, bytes) else json.dumps(p).encode()) for p in parts)


def alg_none() -> str:
    return segments({"alg": "none", "typ": "JWT", "kid": "rsa-1"}) + "."


def hs256_with_the_public_key() -> str:
    """Algorithm confusion: HMAC-SHA256 keyed with the RSA public key's PEM text."""
    signing = segments({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"})
    signature = hmac.new(RSA_PEM, signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{b64(signature)}"


def signed_payload(payload: bytes) -> str:
    """A correctly signed token whose payload is ``payload`` (JSON or not)."""
    return jwt.api_jws.encode(payload, RSA_KEY, algorithm="RS256", headers={"kid": "rsa-1"})
