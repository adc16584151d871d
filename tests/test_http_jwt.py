"""JWT access tokens (``JWTVerifier``, the ``jwt`` extra) over the real HTTP endpoint: keys made
here, a JWK Set served on loopback by the test (counting its fetches, ``jwt_support``), and what
a client sees on the wire for every accepted and refused token."""

from __future__ import annotations

import asyncio
import logging
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest
from asgi_support import InProcess, in_process
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, x25519
from http_support import Reply, free_port, modern_call, modern_headers, post
from jwt_support import (
    AUDIENCE,
    EC_KEY,
    ISSUER,
    OTHER_RSA_KEY,
    RSA_KEY,
    RSA_PEM,
    Clock,
    KeyServer,
    alg_none,
    b64,
    claims,
    ec_jwk,
    hs256_with_the_public_key,
    rsa_jwk,
    segments,
    signed_payload,
    token,
)

import mcpkit.transports.http
from mcpkit import App, Context
from mcpkit.transports.http import BearerAuth, HttpApp, JWTVerifier

CHALLENGE = (
    'Bearer error="invalid_token", '
    'resource_metadata="http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"'
)
UNAUTHORIZED = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Unauthorized: a valid bearer token is required"},
}

app = App("jwt-test", "1.0.0")


@app.tool
def whoami(ctx: Context) -> str:
    """The token's subject."""
    return str(ctx.principal["sub"])


# ------------------------------------------------------------------------------- fixtures


@pytest.fixture
def keys() -> Iterator[KeyServer]:
    with KeyServer().serving() as served:
        yield served


@pytest.fixture
def clock() -> Clock:
    return Clock()


def verifier(keys: KeyServer, clock: Clock, **options: Any) -> JWTVerifier:
    settings = {"issuer": ISSUER, "audience": AUDIENCE, "jwks_url": keys.url, **options}
    return JWTVerifier(clock=clock, **settings)


@pytest.fixture
def server(keys: KeyServer, clock: Clock) -> Iterator[InProcess]:
    with in_process(HttpApp(app, auth=BearerAuth(verifier(keys, clock)))) as served:
        yield served


# --------------------------------------------------------------------------------- tokens


def replace_segment(jwt_text: str, index: int, text: str) -> str:
    parts = jwt_text.split(".")
    parts[index] = text
    return ".".join(parts)


def call(server: InProcess, bearer: str) -> Reply:
    headers = modern_headers("tools/call", "whoami", authorization=f"Bearer {bearer}")
    return post(server, modern_call(1, "whoami", {}), headers)


def subject(principal: dict[str, Any] | None) -> Any:
    return None if principal is None else principal["sub"]


def assert_refused(reply: Reply) -> None:
    """The one answer every refused token gets: nothing says why."""
    assert (reply.status, reply.headers["www-authenticate"], reply.json) == (
        401,
        CHALLENGE,
        UNAUTHORIZED,
    )


# --------------------------------------------------------------------------------- accept


def answer(subject: str) -> dict[str, Any]:
    """The wire answer of ``whoami`` for a principal whose ``sub`` is ``subject``."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": subject}],
            "isError": False,
            "resultType": "complete",
            "_meta": {
                "io.modelcontextprotocol/serverInfo": {"name": "jwt-test", "version": "1.0.0"}
            },
        },
    }


def test_rs256_and_es256_tokens_are_accepted(server: InProcess, keys: KeyServer) -> None:
    rsa_reply = call(server, token(sub="ada"))
    ec_reply = call(server, token("ec-1", "ES256", EC_KEY, sub="bob"))
    assert (rsa_reply.status, rsa_reply.json) == (200, answer("ada"))
    assert (ec_reply.status, ec_reply.json) == (200, answer("bob"))
    assert keys.fetches == 1  # fetched once, then cached


def test_the_principal_is_the_claims_dict(keys: KeyServer, clock: Clock) -> None:
    seen: list[Any] = []
    probe = App("probe", "1")

    @probe.tool
    def whoami(ctx: Context) -> str:
        seen.append(ctx.principal)
        return "ok"

    sent = claims(scope="notes:read notes:write", custom={"team": 7})
    with in_process(HttpApp(probe, auth=BearerAuth(verifier(keys, clock)))) as served:
        reply = call(served, jwt.encode(sent, RSA_KEY, algorithm="RS256", headers={"kid": "rsa-1"}))
    assert reply.status == 200
    assert seen == [sent]


def test_a_token_without_kid_uses_a_single_key_set(keys: KeyServer, server: InProcess) -> None:
    keys.keys = [rsa_jwk("only")]
    assert call(server, token(kid=None)).json == answer("ada")


def test_a_token_without_kid_is_refused_by_a_larger_set(keys: KeyServer, server: InProcess) -> None:
    keys.keys = [rsa_jwk("one"), rsa_jwk("two", OTHER_RSA_KEY)]
    assert_refused(call(server, token(kid=None)))


def test_public_key_mode_needs_no_key_set() -> None:
    verify = JWTVerifier(issuer=ISSUER, audience=AUDIENCE, public_key=RSA_PEM.decode())
    with in_process(HttpApp(app, auth=BearerAuth(verify))) as served:
        assert call(served, token(kid="whatever")).json == answer("ada")
        assert call(served, token(kid=None)).json == answer("ada")
        assert_refused(call(served, token("ec-1", "ES256", EC_KEY)))  # not this key's type
        assert_refused(call(served, token(key=OTHER_RSA_KEY)))
        assert_refused(call(served, hs256_with_the_public_key()))


def test_made_up_key_ids_do_not_grow_a_public_key_verifier() -> None:
    """An unauthenticated client choosing a fresh ``kid`` per token (a public key verifies
    every token whatever its kid) must not make the verifier keep one more thing per token."""
    verify = JWTVerifier(issuer=ISSUER, audience=AUDIENCE, public_key=RSA_PEM.decode())
    forged = [segments({"alg": "RS256", "kid": f"kid-{n}"}) + ".c2ln" for n in range(50)]
    valid = [token(kid=f"real-{n}") for n in range(50)]
    refused = [asyncio.run(verify(bearer)) for bearer in forged]
    accepted = [asyncio.run(verify(bearer)) for bearer in valid]
    assert refused == [None] * 50
    assert [subject(principal) for principal in accepted] == ["ada"] * 50
    assert len(verify._prepared) == 1  # one key, one algorithm: one prepared key


def test_audience_may_list_several_resources(keys: KeyServer, clock: Clock) -> None:
    verify = verifier(keys, clock, audience=["https://other.example.com", AUDIENCE])
    with in_process(HttpApp(app, auth=BearerAuth(verify))) as served:
        assert call(served, token()).status == 200
        assert_refused(call(served, token(aud="https://elsewhere.example.com")))


def test_a_padded_header_is_read(server: InProcess) -> None:
    header, payload, _ = token().split(".")
    signing = f"{header}{'=' * (-len(header) % 4)}.{payload}"
    assert "=." in signing  # some issuers pad, and sign what they sent
    signature = RSA_KEY.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
    assert call(server, f"{signing}.{b64(signature)}").json == answer("ada")


def test_leeway_allows_small_clock_skew(server: InProcess) -> None:
    now = int(time.time())
    assert call(server, token(exp=now - 10)).status == 200
    assert call(server, token(nbf=now + 10, iat=now + 10)).status == 200


# -------------------------------------------------------------------------------- refuse

REFUSED: list[tuple[str, Callable[[], str], str]] = [
    ("wrong-issuer", lambda: token(iss="https://evil.example.com"), "Invalid issuer"),
    ("issuer-prefix", lambda: token(iss="https://auth.example"), "Invalid issuer"),  # 2.10.0
    ("wrong-audience", lambda: token(aud="https://other.example.com/mcp"), "Audience"),
    ("no-audience", lambda: token(aud=None), '"aud"'),
    ("no-issuer", lambda: token(iss=None), '"iss"'),
    ("no-expiry", lambda: token(exp=None), '"exp"'),
    ("expired", lambda: token(exp=int(time.time()) - 120), "expired"),
    ("not-yet-valid", lambda: token(nbf=int(time.time()) + 120), "not yet valid"),
    ("issued-in-the-future", lambda: token(iat=int(time.time()) + 120), "not yet valid"),
    ("alg-none", alg_none, "'none' is not accepted"),
    ("hs256-with-the-rsa-pem", hs256_with_the_public_key, "'HS256' is not accepted"),
    ("alg-not-configured", lambda: token(alg="RS512"), "'RS512' is not accepted"),
    ("rsa-kid-on-an-ec-token", lambda: token("rsa-1", "ES256", EC_KEY), "key"),
    ("ec-kid-on-an-rsa-token", lambda: token("ec-1", "RS256"), "key"),
    ("unknown-kid", lambda: token("nobody"), "no key 'nobody'"),
    ("bad-signature", lambda: token(key=OTHER_RSA_KEY), "Signature verification failed"),
    ("garbage", lambda: "not-a-token", "Invalid header"),
    ("two-segments", lambda: segments({"alg": "RS256", "kid": "rsa-1"}), "Not enough segments"),
    ("bad-base64", lambda: "!!!.@@@.###", "Invalid header"),
    ("bad-base64-payload", lambda: replace_segment(token(), 1, "!!!!"), "Invalid payload"),
    ("bad-base64-signature", lambda: replace_segment(token(), 2, "@@@@"), "Invalid crypto"),
    ("header-not-json", lambda: b64(b"{nope") + "." + b64(b"{}") + ".c2ln", "Invalid header"),
    ("header-not-an-object", lambda: segments([1, 2]) + ".c2ln", "Invalid header"),
    ("header-nested-too-deep", lambda: segments(b"[" * 5000) + ".c2ln", "Invalid header"),
    ("kid-not-a-string", lambda: segments({"alg": "RS256", "kid": 5}) + ".c2ln", "Key ID"),
    ("payload-not-json", lambda: signed_payload(b"{nope"), "Invalid payload"),
    ("payload-not-an-object", lambda: signed_payload(b"[1]"), "Invalid payload"),
]


@pytest.mark.parametrize(
    ("make", "reason"),
    [(make, reason) for _, make, reason in REFUSED],
    ids=[i for i, *_ in REFUSED],
)
def test_refused_tokens_get_a_bare_401(
    server: InProcess, make: Callable[[], str], reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcpkit.http")
    assert_refused(call(server, make()))
    logged = [r for r in caplog.records if r.name == "mcpkit.http"]
    assert [r.levelno for r in logged] == [logging.DEBUG]
    assert logged[0].getMessage().startswith("bearer token refused: ")
    assert reason in logged[0].getMessage()


def test_a_key_bound_to_another_algorithm_is_refused(keys: KeyServer, clock: Clock) -> None:
    keys.keys = [rsa_jwk("rsa-1", alg="RS256")]
    verify = verifier(keys, clock, algorithms=("RS256", "RS384"))
    with in_process(HttpApp(app, auth=BearerAuth(verify))) as served:
        assert call(served, token(alg="RS256")).status == 200
        assert_refused(call(served, token(alg="RS384")))


def test_encryption_keys_in_the_set_are_ignored(keys: KeyServer, server: InProcess) -> None:
    keys.keys = [rsa_jwk("rsa-1", use="enc")]
    assert_refused(call(server, token()))


def test_keys_with_a_kid_that_is_not_a_string_are_ignored(
    keys: KeyServer, server: InProcess
) -> None:
    """A misconfigured set (a ``kid`` that is a list or an object) costs those keys only: the
    set's other keys still verify, and nothing answers 500."""
    bad = {**rsa_jwk("x", OTHER_RSA_KEY), "kid": ["rsa-1"]}
    keys.keys = [bad, {**rsa_jwk("y", OTHER_RSA_KEY), "kid": {"a": 1}}, rsa_jwk("rsa-1")]
    reply = call(server, token())
    assert reply.status == 200, reply.body
    assert reply.json == answer("ada")


# ---------------------------------------------------------------------------- the key set


def test_unknown_kids_refetch_at_most_once_a_minute(
    keys: KeyServer, clock: Clock, server: InProcess
) -> None:
    assert call(server, token()).status == 200
    assert keys.fetches == 1
    clock.now += 100
    assert_refused(call(server, token("random-1")))
    assert keys.fetches == 2  # an unknown kid: one refetch
    clock.now += 30
    assert_refused(call(server, token("random-2")))
    assert_refused(call(server, token("random-3")))
    assert keys.fetches == 2  # within the minute: none
    clock.now += 31
    assert_refused(call(server, token("random-4")))
    assert keys.fetches == 3


def test_a_rotated_in_key_is_accepted_after_one_refetch(
    keys: KeyServer, clock: Clock, server: InProcess
) -> None:
    assert call(server, token()).status == 200
    keys.keys = [rsa_jwk("rsa-2", OTHER_RSA_KEY), *keys.keys]
    clock.now += 61
    assert call(server, token("rsa-2", key=OTHER_RSA_KEY)).json == answer("ada")
    assert call(server, token("rsa-2", key=OTHER_RSA_KEY)).status == 200
    assert call(server, token()).status == 200
    assert keys.fetches == 2


def test_a_removed_key_goes_when_the_set_is_an_hour_old(
    keys: KeyServer, clock: Clock, server: InProcess
) -> None:
    assert call(server, token()).status == 200
    keys.keys = [ec_jwk("ec-1")]
    clock.now += 3599
    assert call(server, token()).status == 200  # cached
    clock.now += 1
    assert_refused(call(server, token()))
    assert keys.fetches == 2


def test_an_old_set_is_kept_when_its_refresh_fails(
    keys: KeyServer, clock: Clock, server: InProcess, caplog: pytest.LogCaptureFixture
) -> None:
    assert call(server, token()).status == 200
    keys.status = 503
    clock.now += 3600
    assert call(server, token()).status == 200
    assert call(server, token()).status == 200
    assert keys.fetches == 2
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"could not fetch the JWK Set {keys.url}: HTTP Error 503: Service Unavailable"
    ]


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (500, None, "HTTP Error 500: Internal Server Error"),
        (200, b"not json", "Expecting value"),
        (200, b'{"no": "keys"}', 'the document is not a JWK Set (no "keys" list)'),
        (200, b"[" * 100_000 + b"]" * 100_000, "maximum recursion depth"),
        (200, b" " * (1 << 20) + b"{}", "the JWK Set is larger than 1048576 bytes"),
    ],
    ids=["http-500", "not-json", "no-keys", "too-deep", "too-large"],
)
def test_a_failed_fetch_refuses_the_token_and_warns(
    keys: KeyServer,
    server: InProcess,
    status: int,
    body: bytes | None,
    reason: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    keys.status, keys.body = status, body
    assert_refused(call(server, token()))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"could not fetch the JWK Set {keys.url}: ")
    assert reason in warnings[0]


def test_an_unreachable_key_set_refuses_the_token(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{free_port()}/jwks"
    verify = JWTVerifier(issuer=ISSUER, audience=AUDIENCE, jwks_url=url, clock=clock)
    with in_process(HttpApp(app, auth=BearerAuth(verify))) as served:
        assert_refused(call(served, token()))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "Connection refused" in warnings[0]


def test_a_redirect_to_plain_http_elsewhere_is_not_followed(
    keys: KeyServer, server: InProcess, caplog: pytest.LogCaptureFixture
) -> None:
    keys.location = "http://keys.example.com/jwks.json"
    assert_refused(call(server, token()))
    assert keys.fetches == 1
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "jwks_url must be an https:// URL" in warnings[0]


def test_a_redirect_to_an_acceptable_url_is_followed(keys: KeyServer, server: InProcess) -> None:
    keys.location = keys.url.replace("/jwks.json", "/moved.json")
    assert call(server, token()).json == answer("ada")
    assert keys.fetches == 2  # the redirect, then the set


def test_concurrent_requests_share_one_fetch(keys: KeyServer, clock: Clock) -> None:
    verify = verifier(keys, clock)
    keys.release.clear()

    async def both() -> list[Any]:
        first = asyncio.ensure_future(verify(token(sub="a")))
        second = asyncio.ensure_future(verify(token(sub="b")))
        await asyncio.to_thread(keys.started.wait, 10)
        keys.release.set()
        return [await first, await second]

    assert [subject(claims) for claims in asyncio.run(both())] == ["a", "b"]
    assert keys.fetches == 1


def test_one_verifier_serves_several_event_loops(keys: KeyServer, clock: Clock) -> None:
    verify = verifier(keys, clock)
    assert subject(asyncio.run(verify(token()))) == "ada"
    clock.now += 61
    assert asyncio.run(verify(token("unknown"))) is None
    assert keys.fetches == 2


# --------------------------------------------------------------------------- construction


@pytest.mark.parametrize(
    "url",
    [
        "http://auth.example.com/jwks",
        "http://10.0.0.1/jwks",
        "file:///etc/passwd",
        "ftp://auth.example.com/jwks",
        "https:///jwks",
        "jwks.json",
    ],
)
def test_a_key_set_url_must_be_https_unless_loopback(url: str) -> None:
    with pytest.raises(ValueError, match="jwks_url must be an https:// URL") as raised:
        JWTVerifier(issuer=ISSUER, audience=AUDIENCE, jwks_url=url)
    assert str(raised.value) == (
        f"jwks_url must be an https:// URL (http:// only to a loopback host), not {url!r}"
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example.com/.well-known/jwks.json",
        "http://127.0.0.1:9000/jwks",
        "http://localhost/jwks",
        "http://[::1]:9000/jwks",
    ],
)
def test_https_and_loopback_key_set_urls_are_accepted(url: str) -> None:
    assert isinstance(JWTVerifier(issuer=ISSUER, audience=AUDIENCE, jwks_url=url), JWTVerifier)


NEEDS = "JWTVerifier needs an issuer and an audience (this server's URL)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "JWTVerifier takes one of jwks_url= and public_key="),
        (
            {"jwks_url": "https://a.example.com/j", "public_key": RSA_PEM},
            "JWTVerifier takes one of jwks_url= and public_key=",
        ),
        ({"public_key": RSA_PEM, "algorithms": ("RS256", "HS256")}, "not ['HS256']"),
        ({"public_key": RSA_PEM, "algorithms": ("none",)}, "not ['none']"),
        ({"public_key": RSA_PEM, "algorithms": ()}, "not []"),
        ({"public_key": "not a pem"}, "public_key is not a PEM public key: "),
        ({"public_key": RSA_PEM, "issuer": ""}, NEEDS),
        ({"public_key": RSA_PEM, "audience": ""}, NEEDS),
        ({"public_key": RSA_PEM, "audience": []}, NEEDS),
    ],
    ids=[
        "no-keys",
        "both-keys",
        "hs256",
        "none",
        "no-algorithms",
        "bad-pem",
        "no-issuer",
        "no-audience",
        "empty-audiences",
    ],
)
def test_unusable_configurations_fail_at_construction(options: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        JWTVerifier(**{"issuer": ISSUER, "audience": AUDIENCE, **options})


def test_a_private_key_is_not_a_public_key() -> None:
    private = RSA_KEY.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    with pytest.raises(ValueError, match=r"^public_key is not a PEM public key: "):
        JWTVerifier(issuer=ISSUER, audience=AUDIENCE, public_key=private)


def test_key_objects_are_accepted_as_public_keys() -> None:
    verify = JWTVerifier(
        issuer=ISSUER, audience=AUDIENCE, public_key=EC_KEY.public_key(), algorithms=["ES256"]
    )
    assert subject(asyncio.run(verify(token("x", "ES256", EC_KEY)))) == "ada"


def test_eddsa_public_keys_are_accepted() -> None:
    private = ed25519.Ed25519PrivateKey.generate()
    verify = JWTVerifier(
        issuer=ISSUER, audience=AUDIENCE, public_key=private.public_key(), algorithms=["EdDSA"]
    )
    assert subject(asyncio.run(verify(token(None, "EdDSA", private)))) == "ada"


def test_a_key_exchange_key_is_refused() -> None:
    exchange = x25519.X25519PrivateKey.generate().public_key()
    with pytest.raises(TypeError, match=r"^public_key must be an RSA, EC or EdDSA public key"):
        JWTVerifier(issuer=ISSUER, audience=AUDIENCE, public_key=exchange)  # type: ignore[arg-type]


def test_other_names_are_still_missing() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'JWTVerify'"):
        _ = mcpkit.transports.http.JWTVerify


@pytest.mark.parametrize("missing", ["jwt", "cryptography"])
def test_without_the_extra_the_error_says_what_to_install(missing: str) -> None:
    code = (
        f"import sys\nsys.modules[{missing!r}] = None\n"
        "from mcpkit.transports.http import JWTVerifier"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        'ImportError: JWTVerifier needs PyJWT and cryptography: pip install "mcpkit[jwt]"'
    )
