"""A SERVER span per request, as the OpenTelemetry semantic conventions for MCP say
(``docs/gen-ai/mcp.md`` in open-telemetry/semantic-conventions, "Server" and "Context
propagation"); imported only once OpenTelemetry is configured (:mod:`.telemetry`).

- Name ``{mcp.method.name} {target}``, the target being the tool or prompt name when there is
  one; kind SERVER. Attributes: :func:`request_attributes`, ``network.*`` by transport, and
  at the end :func:`outcome` (``error.type`` is the JSON-RPC code as a string, or
  ``tool_error`` for an ``isError`` result, with status ERROR and the error's message).
  Arguments and results are never recorded.
- Parent: the W3C trace context in the request's ``params._meta`` (``traceparent``,
  ``tracestate``, ``baggage``: SEP-414, the MCP 2026-07-28 ``_meta`` keys) when it holds a
  valid span, else the current context. A current span that is not the parent (a host
  framework's HTTP server span) becomes a link, never the parent nor replaced.
- Propagate only (``MCPKIT_OTEL=propagate``): no span; the ``_meta`` context is current while
  the handler runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mcpkit._version import __version__
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.jsonrpc import Request
from mcpkit.protocol.request import request_span
from mcpkit.protocol.versions import ALL_VERSIONS, META_VERSION, is_stateless
from mcpkit.types import RequestId

__all__ = ["Answer", "Spans", "outcome", "request_attributes"]

# The keys SEP-414 reserves are W3C formats whatever OTEL_PROPAGATORS says (that is for HTTP).
Answer = Callable[..., Coroutine[Any, Any, Any]]
"""``Session._one``: answers one message (``in_batch=`` keyword)."""

_W3C = CompositePropagator([TraceContextTextMapPropagator(), W3CBaggagePropagator()])
SERVER = trace.SpanKind.SERVER
_URI_METHODS = frozenset({"resources/read", "resources/subscribe", "resources/unsubscribe"})
_TRANSPORTS: dict[str, dict[str, str]] = {
    "stdio": {"network.transport": "pipe"},
    "http": {"network.transport": "tcp", "network.protocol.name": "http"},
    "memory": {},
}


class Spans:
    """Opens, fills and ends the spans of one server's requests."""

    __slots__ = ("tracer",)

    def __init__(self, tracer: trace.Tracer | None) -> None:
        self.tracer = tracer  # None: propagate only, no span

    @classmethod
    def configured(cls, provider: Any, *, propagate_only: bool) -> Spans | None:
        """Spans from ``provider`` (else the global provider); ``None`` while neither is set."""
        if propagate_only:
            return cls(None)
        if provider is None:
            provider = trace.get_tracer_provider()
            if isinstance(provider, trace.ProxyTracerProvider):
                return None  # no SDK (yet)
        return cls(provider.get_tracer("mcpkit", __version__))

    async def answer(self, one: Answer, session: Any, obj: Any, *, in_batch: bool) -> Any:
        """``one(obj)`` inside the span of the request ``obj`` is; a notification, an answer or
        what names no method passes untraced."""
        asked = _asked(obj)
        if asked is None:
            return await one(obj, in_batch=in_batch)
        method, params, attributes = asked
        parent, links = _parentage(params)
        if self.tracer is None:  # propagate only
            if parent is None:
                return await one(obj, in_batch=in_batch)
            return await _within(parent, one, obj, in_batch)
        attributes.update(_TRANSPORTS.get(session.transport, {}))
        span = self.tracer.start_span(
            _name(method, params), parent, SERVER, attributes=attributes, links=links
        )
        span_token = request_span.set(span)
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        try:
            response = await one(obj, in_batch=in_batch)
        except BaseException as exc:
            span.set_attribute("error.type", _error_name(exc))
            span.set_status(trace.StatusCode.ERROR)
            raise
        else:
            span.set_attributes(_session_attributes(session, method, params))
            outcome(span, response)
            return response
        finally:
            otel_context.detach(token)
            request_span.reset(span_token)
            span.end()

    def refused(self, message: Any, response: dict[str, Any], started: int) -> None:
        """The span of a request refused before it reached a session (HTTP)."""
        asked = _asked(message)
        if asked is None or self.tracer is None:
            return
        method, params, attributes = asked
        parent, links = _parentage(params)
        attributes.update(_TRANSPORTS["http"])
        version = _meta_version(params)
        if version is not None:
            attributes["mcp.protocol.version"] = version
        span = self.tracer.start_span(
            _name(method, params),
            parent,
            SERVER,
            attributes=attributes,
            links=links,
            start_time=started,
        )
        outcome(span, response)
        span.end()


async def _within(parent: otel_context.Context, one: Answer, obj: Any, in_batch: bool) -> Any:
    token = otel_context.attach(parent)
    try:
        return await one(obj, in_batch=in_batch)
    finally:
        otel_context.detach(token)


def request_attributes(
    method: str, request_id: RequestId | None, params: dict[str, Any]
) -> dict[str, Any]:
    """What the request says about itself (known before it runs, so samplers see it)."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if request_id is not None:
        attributes["jsonrpc.request.id"] = str(request_id)
    name = params.get("name")
    if method == "tools/call":
        attributes["gen_ai.operation.name"] = "execute_tool"
        if isinstance(name, str):
            attributes["gen_ai.tool.name"] = name
    elif method == "prompts/get" and isinstance(name, str):
        attributes["gen_ai.prompt.name"] = name
    uri = params.get("uri")
    if method in _URI_METHODS and isinstance(uri, str):
        attributes["mcp.resource.uri"] = uri
    return attributes


def outcome(span: trace.Span, response: Any) -> None:
    """``error.type`` and the status from the answer (``None``: cancelled, unanswered)."""
    if not isinstance(response, dict):
        span.set_attribute("error.type", "cancelled")
        span.set_status(trace.StatusCode.ERROR)
        return
    error = response.get("error")
    if isinstance(error, dict):
        code = str(error.get("code"))
        span.set_attributes({"error.type": code, "rpc.response.status_code": code})
        message = error.get("message")
        span.set_status(trace.StatusCode.ERROR, message if isinstance(message, str) else None)
        return
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        span.set_attribute("error.type", "tool_error")
        span.set_status(trace.StatusCode.ERROR)


def _asked(obj: Any) -> tuple[str, dict[str, Any], dict[str, Any]] | None:
    """``(method, params, attributes)`` of a request, or of what tries to be one (a refused
    envelope still names its method); ``None`` for notifications, answers and the rest."""
    if type(obj) is Request:
        params = obj.params if isinstance(obj.params, dict) else {}
        return obj.method, params, request_attributes(obj.method, obj.id, params)
    if not isinstance(obj, dict) or "id" not in obj or "result" in obj or "error" in obj:
        return None
    method = obj.get("method")
    if not isinstance(method, str):
        return None
    given = obj.get("params")
    params = given if isinstance(given, dict) else {}
    attributes = request_attributes(method, jsonrpc.readable_id(obj), params)
    version = obj.get("jsonrpc")
    if version != "2.0" and isinstance(version, str):  # recorded when it is not 2.0
        attributes["jsonrpc.protocol.version"] = version
    return method, params, attributes


def _parentage(
    params: dict[str, Any],
) -> tuple[otel_context.Context | None, list[trace.Link] | None]:
    """The parent context (``None``: the current one) and the links of a request's span."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or not any(key in meta for key in _W3C.fields):
        return None, None
    carrier = {key: value for key in _W3C.fields if isinstance(value := meta.get(key), str)}
    current = otel_context.get_current()
    extracted = _W3C.extract(carrier, current)
    remote = trace.get_current_span(extracted).get_span_context()
    if not remote.is_valid:
        return (extracted if "baggage" in carrier else None), None
    ambient = trace.get_current_span(current).get_span_context()
    if ambient.is_valid and ambient.span_id != remote.span_id:
        return extracted, [trace.Link(ambient)]
    return extracted, None


def _name(method: str, params: dict[str, Any]) -> str:
    if method in ("tools/call", "prompts/get"):
        name = params.get("name")
        if isinstance(name, str):
            return f"{method} {name}"
    return method


def _session_attributes(session: Any, method: str, params: dict[str, Any]) -> dict[str, str]:
    """The version the request was served at, and its HTTP session's id when it has one."""
    attributes: dict[str, str] = {}
    version = _meta_version(params) if is_stateless(method, params) else session.version
    if version is not None:
        attributes["mcp.protocol.version"] = version
    if session.session_id is not None:
        attributes["mcp.session.id"] = session.session_id
    return attributes


def _meta_version(params: dict[str, Any]) -> str | None:
    meta = params.get("_meta")
    version = meta.get(META_VERSION) if isinstance(meta, dict) else None
    return version if version in ALL_VERSIONS else None


def _error_name(exc: BaseException) -> str:
    return "cancelled" if isinstance(exc, asyncio.CancelledError) else type(exc).__qualname__
