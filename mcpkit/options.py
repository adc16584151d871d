"""``ServerOptions``: how an App's server speaks the protocol (errors, pagination, caching hints,
access, timeouts, extensions and tasks), checked when made."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from mcpkit._availability import CacheScope, check_server_access
from mcpkit._extensions import extension_settings
from mcpkit._frozen import frozen
from mcpkit._profiles import SchemaProfile, check_profile
from mcpkit.tools import is_seconds

__all__ = ["ServerOptions"]


@frozen
class ServerOptions:
    """How the server speaks the protocol: ``App(name, version, options=ServerOptions(...))``.

    ``mask_errors=False`` shows exception text to clients (for development).
    ``invalid_arguments`` forces how argument failures travel for every protocol version:
    ``"protocol"`` (a JSON-RPC ``-32602`` error) or ``"result"`` (``isError: true``); by default
    it follows the client's version. ``page_size`` sets list pagination; ``ttl_ms`` and
    ``cache_scope`` are the caching hints of 2026-07-28 list results (``cache`` overrides them
    per method: ``{"tools/list": (60_000, "private")}``). ``state_key`` signs
    ``requestState`` (else ``MCPKIT_STATE_KEY``, else a random key per process).
    ``on_missing_scope``: a caller without a definition's scopes does not see it (``"hide"``),
    or, over authenticated HTTP, sees it listed and is answered 403 ``insufficient_scope``
    when it calls it (``"challenge"``: OAuth step-up). ``stdio_principal`` is the principal of
    every request served over stdio (which authenticates nobody).
    ``tool_timeout`` (seconds) is the timeout of every tool that does not set its own.
    ``extensions`` maps extension ids (``"com.example/thing"``) to the settings the server
    declares for them in ``capabilities.extensions``. ``task_ttl_ms`` (``None``: unlimited)
    and ``task_poll_interval_ms`` are the defaults of tools that run as tasks; at most
    ``max_tasks`` tasks run at once, and ``max_tasks_per_caller`` of one caller (a call that
    would start one more is refused).
    ``store`` is where task records live and how replicas tell each other about changes:
    ``None`` (else ``MCPKIT_STORE``, else this process's memory) or ``"redis://host:port/db"``
    (``pip install "mcpkit[redis]"``; see ``docs/deployment.md``, the fleet recipe).
    ``tracer_provider`` is the OpenTelemetry ``TracerProvider`` of the server's spans (``None``:
    the global one; ``MCPKIT_OTEL`` turns them off; see ``docs/observability.md``).
    ``schema_profile`` shapes every tool's published ``inputSchema`` for model providers:
    ``"default"``, ``"portable"`` or ``"openai-strict"`` (see ``docs/schemas.md``); a tool's
    own ``schema_profile`` wins. It is read when a tool is registered.
    """

    mask_errors: bool = True
    invalid_arguments: Literal["protocol", "result"] | None = None
    page_size: int = 100
    ttl_ms: int = 0
    cache_scope: CacheScope = "public"
    state_key: str | bytes | None = None
    on_missing_scope: Literal["hide", "challenge"] = "hide"
    stdio_principal: Any = None
    cache: Mapping[str, tuple[int, CacheScope]] | None = None
    tool_timeout: float | None = None
    extensions: Mapping[str, dict[str, Any]] | None = None
    task_ttl_ms: int | None = 3_600_000
    task_poll_interval_ms: int = 1_000
    max_tasks: int = 1_000
    max_tasks_per_caller: int = 100
    store: str | None = None
    tracer_provider: Any = None
    schema_profile: SchemaProfile = "default"

    def __post_init__(self) -> None:
        timeout = self.tool_timeout
        if timeout is not None and not (is_seconds(timeout) and timeout != math.inf):
            raise ValueError(
                f"tool_timeout must be a positive, finite number of seconds or None, "
                f"not {self.tool_timeout!r}"
            )
        if self.extensions is not None:
            object.__setattr__(self, "extensions", extension_settings(self.extensions))
        if not _is_int(self.page_size) or self.page_size < 1:
            raise ValueError(f"page_size must be an integer of at least 1, not {self.page_size!r}")
        if not _is_int(self.ttl_ms) or self.ttl_ms < 0:
            raise ValueError(f"ttl_ms must be an integer of at least 0, not {self.ttl_ms!r}")
        for key in ("task_ttl_ms", "task_poll_interval_ms", "max_tasks", "max_tasks_per_caller"):
            value = getattr(self, key)
            if (value is not None or key != "task_ttl_ms") and (not _is_int(value) or value < 1):
                raise ValueError(f"{key} must be a positive integer, not {value!r}")
        if self.invalid_arguments not in (None, "protocol", "result"):
            raise ValueError(
                'invalid_arguments must be "protocol", "result" or None, '
                f"not {self.invalid_arguments!r}"
            )
        if self.cache_scope not in ("public", "private"):
            raise ValueError(f'cache_scope must be "public" or "private", not {self.cache_scope!r}')
        check_server_access(self.on_missing_scope, self.cache)
        check_profile(self.schema_profile, "", ValueError)
        if self.store is not None and not _is_store(self.store):
            raise ValueError(
                f'store must be "memory" or a redis:// (rediss://, unix://) URL, not {self.store!r}'
            )


def _is_store(url: object) -> bool:
    return isinstance(url, str) and (
        url == "memory" or url.startswith(("redis://", "rediss://", "unix://"))
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
