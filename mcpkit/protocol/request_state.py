"""Multi round-trip requests (2026-07-28): ``InputRequiredResult`` and a signed ``requestState``.

In the stateless era a handler that needs the client (elicitation, sampling, roots) cannot send
it a request; instead the call returns ``inputRequests`` and the client retries with
``inputResponses``. The handler then runs again from the top, and each ``ctx.elicit(...)``
finds its answer under its key. Answers of earlier rounds travel in ``requestState``, signed
with HMAC-SHA256 so a client cannot forge or alter them; the key comes from configuration
(``ServerOptions(state_key=...)`` or ``MCPKIT_STATE_KEY``) so every worker and replica agrees.
"""

from __future__ import annotations

import base64
import json
import os
import time
from typing import Any

from mcpkit.exceptions import InvalidParams

__all__ = ["InputRequired", "StateSigner", "state_key"]

STATE_KEY_ENV = "MCPKIT_STATE_KEY"
STATE_MAX_AGE = 3600.0  # seconds a requestState stays valid
_MIN_KEY_BYTES = 16


class InputRequired(BaseException):
    """Raised through a handler when it needs input the client has not given yet.

    A ``BaseException`` (like ``CancelledError``) so a tool's own ``except Exception`` does not
    swallow it.
    """

    def __init__(self, requests: dict[str, dict[str, Any]]) -> None:
        super().__init__("input required")
        self.requests = requests


def state_key(configured: str | bytes | None) -> bytes:
    """The HMAC key: configured, else ``MCPKIT_STATE_KEY``, else random for this process."""
    value = configured if configured is not None else os.environ.get(STATE_KEY_ENV)
    if value is None:
        return os.urandom(32)  # what secrets.token_bytes is (not imported: start-up)
    key = value.encode() if isinstance(value, str) else value
    if len(key) < _MIN_KEY_BYTES:
        raise ValueError(
            f"the requestState key ({STATE_KEY_ENV} or ServerOptions(state_key=...)) must be at "
            f"least {_MIN_KEY_BYTES} bytes of secret; anyone can forge states under a short one"
        )
    return key


class StateSigner:
    """Encode and verify ``requestState``: the answers so far, bound to one request (method,
    name, arguments, caller) and valid for ``max_age`` seconds."""

    def __init__(self, key: bytes, max_age: float = STATE_MAX_AGE) -> None:
        self._key = key
        self._max_age = max_age

    def encode(self, method: str, target: str, responses: dict[str, Any]) -> str:
        payload = json.dumps(
            {"m": method, "t": target, "r": responses, "at": int(time.time())},
            separators=(",", ":"),
        )
        body = base64.urlsafe_b64encode(payload.encode()).decode()
        return f"{body}.{self._mac(body)}"

    def decode(self, state: Any, method: str, target: str) -> dict[str, Any]:
        """The answers a state carries; ``-32602`` if it was forged, altered or moved."""
        if not isinstance(state, str) or state.count(".") != 1:
            raise _tampered()
        body, mac = state.split(".")
        import hmac  # not at import: it loads OpenSSL's hashes (start-up)

        if not hmac.compare_digest(mac.encode(), self._mac(body).encode()):
            raise _tampered()
        try:
            data = json.loads(base64.urlsafe_b64decode(body.encode()))
        except ValueError:  # only with a valid MAC, so only if the key leaked
            raise _tampered() from None
        if (
            not isinstance(data, dict)
            or data.get("m") != method
            or data.get("t") != target
            or not isinstance(data.get("r"), dict)
            or not isinstance(data.get("at"), int)
        ):
            raise _tampered()
        if time.time() - data["at"] > self._max_age:
            raise InvalidParams("Invalid params: requestState expired; start the request again")
        responses: dict[str, Any] = data["r"]
        return responses

    def _mac(self, body: str) -> str:
        import hashlib  # not at import: it loads OpenSSL's hashes (start-up)
        import hmac

        digest = hmac.new(self._key, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def _tampered() -> InvalidParams:
    return InvalidParams("Invalid params: requestState failed verification")
