"""OpenTelemetry's seam in the server: whether requests are traced, decided here, without
importing OpenTelemetry until it is configured.

``MCPKIT_OTEL`` (read once, when a :class:`~mcpkit.protocol.server.Server` is made):

- ``on`` (the default): a SERVER span per request (:mod:`mcpkit.protocol.spans`) once a tracer
  provider is configured: ``ServerOptions(tracer_provider=...)``, or the global one an
  OpenTelemetry SDK installs. Until then a request costs a dictionary look-up here.
- ``propagate``: no span; the trace context a request carries in ``_meta`` is made current
  while its handler runs, so the handler's own spans join the caller's trace.
- ``off``: nothing (``Server.telemetry`` is ``None``: one attribute read per request).

Without ``opentelemetry-api`` (``pip install "mcpkit[otel]"``) every mode is ``off``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from mcpkit.protocol.headers import Headers
from mcpkit.protocol.incoming import Incoming, Refused, admit
from mcpkit.protocol.jsonrpc import Limits

if TYPE_CHECKING:
    from mcpkit.app import App
    from mcpkit.protocol.spans import Answer, Spans

__all__ = ["OTEL_ENV", "Telemetry", "answered", "telemetry_for"]

OTEL_ENV = "MCPKIT_OTEL"
MODES = ("on", "off", "propagate")


def telemetry_for(provider: Any) -> Telemetry | None:
    """The server's telemetry (``None``: off, or OpenTelemetry is not installed); ``provider``
    is ``ServerOptions.tracer_provider`` (``None``: the global one)."""
    mode = os.environ.get(OTEL_ENV, "").strip().lower() or "on"
    if mode not in MODES:
        raise ValueError(f"{OTEL_ENV} must be on, off or propagate, not {mode!r}")
    if mode == "off" or importlib.util.find_spec("opentelemetry") is None:
        return None
    return Telemetry(mode == "propagate", provider)


def answered(
    telemetry: Telemetry | None, one: Answer, session: Any, obj: Any, *, in_batch: bool
) -> Coroutine[Any, Any, Any]:
    """How ``session`` answers a message: ``one(obj)`` itself without telemetry or while nothing
    traces (no coroutine around it: ~1 us a request), else through the spans. Decided per
    message, never stored on the session: a session holding its own bound method is a reference
    cycle, which only the garbage collector frees (one per stateless HTTP request, whose
    throwaway session then lingers)."""
    if telemetry is None:
        return one(obj, in_batch=in_batch)
    spans = telemetry._spans
    if spans is None and (telemetry.eager or "opentelemetry.trace" in sys.modules):
        spans = telemetry.spans()
    if spans is None:
        return one(obj, in_batch=in_batch)
    return spans.answer(one, session, obj, in_batch=in_batch)


class Telemetry:
    """Traces requests once OpenTelemetry is configured (:class:`~mcpkit.protocol.spans.Spans`
    does the work; it is imported only then)."""

    __slots__ = ("_configured", "_spans", "eager", "propagate_only", "provider")

    def __init__(self, propagate_only: bool, provider: Any = None) -> None:
        self.propagate_only = propagate_only
        self.provider = provider
        self.eager = provider is not None or propagate_only  # else: once OpenTelemetry is in
        self._spans: Spans | None = None
        self._configured: Callable[..., Spans | None] | None = None

    def spans(self) -> Spans | None:
        """What traces requests; ``None`` while no tracer provider is configured (asked again
        on the next request, as an SDK may be set up after the server)."""
        # No SDK can be configured without importing OpenTelemetry's trace API first.
        if self._spans is None and (self.eager or "opentelemetry.trace" in sys.modules):
            configured = self._configured
            if configured is None:
                from mcpkit.protocol.spans import Spans  # OpenTelemetry, imported on first use

                configured = self._configured = Spans.configured
            self._spans = configured(self.provider, propagate_only=self.propagate_only)
        return self._spans

    def admit(self, data: bytes, headers: Headers, app: App, limits: Limits) -> Incoming:
        """:func:`~mcpkit.protocol.incoming.admit`; a request it refuses (HTTP answers it
        before any session sees it) gets its span here."""
        started = time.time_ns()
        try:
            return admit(data, headers, app, limits)
        except Refused as refused:
            spans = self._spans or self.spans()
            if spans is not None:
                spans.refused(refused.message, refused.response(), started)
            raise
