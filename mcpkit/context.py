"""The handle a running handler uses to ask for things: :class:`Context`.

Annotate a parameter with ``Context`` (any name) and mcpkit passes one in; it never appears in
the published schema::

    @app.tool
    async def crunch(n: int, ctx: Context) -> int:
        await ctx.report_progress(0, n)
        ...

The server supplies the powers behind the handle (:class:`ContextBackend`), so a handler never
asks which protocol era or transport it runs on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, Protocol

from mcpkit._elicitation import accepted_content, require_mode
from mcpkit._frozen import frozen
from mcpkit.exceptions import ClientCapabilityError
from mcpkit.protocol.versions import elicitation_modes, url_elicitation_ids
from mcpkit.schema import elicitation_schema
from mcpkit.types import RequestId

__all__ = [
    "LOG_LEVELS",
    "Context",
    "ContextBackend",
    "ElicitResult",
    "Lifespans",
    "RequestHeaders",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "x-api-key"})


@frozen
class ElicitResult:
    """The user's answer to :meth:`Context.elicit`.

    ``content`` is the validated form (an instance of the form type, or a dict for a raw JSON
    Schema) when ``action == "accept"``, else ``None``.
    """

    action: Literal["accept", "decline", "cancel"]
    content: Any = None


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""RFC 5424 severities, lowest first, as MCP names them."""


class RequestHeaders(Mapping[str, str]):
    """An HTTP request's headers, read-only; names are case-insensitive.

    ``headers["x-tenant"]`` is the header's value (several lines of one header are joined
    with ``", "``, as HTTP allows); :meth:`get_all` gives each line. Its ``repr`` (what a log
    line shows) masks credentials (``Authorization``, ``Cookie``, ...); never pass a client's
    token on to another service (MCP forbids token passthrough).
    """

    __slots__ = ("_raw",)

    def __init__(self, raw: Mapping[str, Sequence[str]]) -> None:
        self._raw = raw  # lower-case name -> values, as the transport read them

    def __getitem__(self, name: str) -> str:
        return ", ".join(self._raw[name.lower()])

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def get_all(self, name: str) -> list[str]:
        """Every value the header came with, in order (``[]`` when it is absent)."""
        return list(self._raw.get(name.lower(), ()))

    def __repr__(self) -> str:  # what a log line shows: never a credential
        shown = {name: "***" if name in _SECRET_HEADERS else value for name, value in self.items()}
        return f"RequestHeaders({shown!r})"


class ContextBackend(Protocol):
    """What the server knows and can do for one request (implemented by the server)."""

    request_id: RequestId | None
    protocol_version: str
    client_info: dict[str, Any] | None
    client_capabilities: dict[str, Any]
    state: Any
    principal: Any
    headers: Mapping[str, Sequence[str]] | None
    meta: dict[str, Any] | None
    transport: Literal["stdio", "http", "memory"]
    session: Any

    @property
    def settings(self) -> Any:
        """The App's validated settings instance, else ``None``."""

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Send ``notifications/progress`` if the request carried a progress token."""

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        """Send ``notifications/message`` if the client asked for this level."""

    async def ask(self, method: str, params: dict[str, Any], key: str | None) -> Any:
        """Ask the client (a request, or an input request in the stateless era)."""

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Read one of the app's own resources."""

    async def continue_as_task(self) -> None:
        """Answer the request with a task and run on in the background, if it may."""

    def elicitation_id(self, name: str) -> str:
        """The id of the URL elicitation ``name`` (kept in ``requestState`` in 2026-07-28)."""


class Lifespans:
    """What the lifespans of an App that includes others yielded, for one server: ``own`` is
    the App's own state, ``of`` maps each App (itself and every one it includes) to its own."""

    __slots__ = ("of", "own")

    def __init__(self, own: Any, of: Mapping[Any, Any]) -> None:
        self.own, self.of = own, of


class Context:
    """What a running tool (or resource, or prompt) may ask of the client and server."""

    __slots__ = ("_scope",)

    def __init__(self, scope: ContextBackend) -> None:
        self._scope = scope

    @property
    def request_id(self) -> RequestId | None:
        """The JSON-RPC id of the request being answered."""
        return self._scope.request_id

    @property
    def protocol_version(self) -> str:
        """The protocol version this request is served under (negotiated or from ``_meta``)."""
        return self._scope.protocol_version

    @property
    def client_info(self) -> dict[str, Any] | None:
        """The client's self-reported ``Implementation`` (name, version, ...), if it sent one."""
        return self._scope.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """The capabilities the client declared (``{}`` when none)."""
        return self._scope.client_capabilities

    def client_extension(self, extension_id: str) -> dict[str, Any] | None:
        """The settings the client declared for an extension (``capabilities.extensions``),
        or ``None`` when it did not declare it."""
        declared = self._scope.client_capabilities.get("extensions")
        settings = declared.get(extension_id) if isinstance(declared, dict) else None
        return settings if isinstance(settings, dict) else None

    def client_supports(self, extension_id: str) -> bool:
        """Whether the client declared the extension ``extension_id`` for this request."""
        return self.client_extension(extension_id) is not None

    @property
    def state(self) -> Any:
        """What the ``App``'s lifespan yielded (``None`` without a lifespan); in a definition of
        an included app, what that app's own lifespan yielded."""
        state = self._scope.state
        return state.own if type(state) is Lifespans else state

    @property
    def settings(self) -> Any:
        """The App's validated settings instance (``App(settings=...)``), else ``None``."""
        return self._scope.settings

    @property
    def principal(self) -> Any:
        """The authenticated caller (what the HTTP ``auth=`` verifier returned), else ``None``."""
        return self._scope.principal

    @property
    def headers(self) -> RequestHeaders | None:
        """The HTTP request's headers (case-insensitive, read-only); ``None`` on stdio."""
        raw = self._scope.headers
        return None if raw is None else RequestHeaders(raw)

    @property
    def meta(self) -> Mapping[str, Any]:
        """The request's ``_meta`` (read-only; ``{}`` when it had none)."""
        meta = self._scope.meta
        return _EMPTY if meta is None else MappingProxyType(meta)

    @property
    def session_id(self) -> str | None:
        """The ``Mcp-Session-Id`` of a handshake-era HTTP session; else ``None``."""
        return getattr(self._scope.session, "session_id", None)

    @property
    def transport(self) -> Literal["stdio", "http", "memory"]:
        """How the request came: ``"stdio"``, ``"http"`` or ``"memory"`` (the test client)."""
        return self._scope.transport

    async def continue_as_task(self) -> None:
        """Become a task now: the client gets a ``CreateTaskResult`` and this tool runs on in
        the background (``task="optional"`` or ``"required"`` tools, 2026-07-28 clients that
        declare the tasks extension; otherwise it does nothing and the call goes on inline).

        Before it, ``elicit`` and friends are input rounds of the call itself (the tool runs
        again from the top with the answers); after it, they park the task in
        ``input_required`` until the client answers with ``tasks/update``. A task-supporting
        tool that never calls it becomes a task before its first line.
        """
        await self._scope.continue_as_task()

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress; sent only when the client asked (a ``progressToken``).

        ``progress`` must increase with every call; a value that does not is dropped.
        """
        await self._scope.progress(progress, total, message)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send a log message to the client at ``level`` (one of :data:`LOG_LEVELS`)."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        await self._scope.log(level, data, logger)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    # ------------------------------------------------------------- asking the client

    async def elicit(self, message: str, schema: Any, *, key: str | None = None) -> ElicitResult:
        """Ask the user to fill in a form (``elicitation/create``, form mode).

        ``schema`` is a model, dataclass or TypedDict of primitive fields (or a JSON Schema
        dict, sent as it is). In the 2026-07-28 era the call returns to the client and your
        handler runs again from the top with the answer: ask before side effects. ``key``
        names the question across those rounds (default: the call order).
        Raises :class:`~mcpkit.ClientCapabilityError` when the client cannot elicit.
        """
        require_mode(self.client_capabilities, self.protocol_version, "form")
        form = (
            schema
            if isinstance(schema, dict)
            else elicitation_schema(schema, version=self.protocol_version)
        )
        params: dict[str, Any] = {"message": message, "requestedSchema": form}
        if elicitation_modes(self.protocol_version):
            params["mode"] = "form"
        answer = await self._scope.ask("elicitation/create", params, key)
        action = answer.get("action") if isinstance(answer, dict) else None
        if action in ("decline", "cancel"):
            return ElicitResult(action)
        if action != "accept":
            return ElicitResult("cancel")
        content = answer.get("content") or {}
        if not isinstance(schema, dict):
            content = accepted_content(schema, content)
        return ElicitResult("accept", content)

    def elicitation_id(self, name: str = "url") -> str:
        """An id for a URL elicitation (what :meth:`elicit_url` sends, what
        ``App.complete_elicitation`` takes): random, the same for every call with this ``name``
        in this request. In the 2026-07-28 era it stays the same on every round of the request
        (it travels in the signed ``requestState``), so the handler that runs again after the
        user consented finds its own flow again."""
        return self._scope.elicitation_id(name)

    async def elicit_url(
        self,
        url: str,
        message: str,
        *,
        elicitation_id: str | None = None,
        key: str | None = None,
    ) -> ElicitResult:
        """Ask the user to visit ``url`` out of band (``elicitation/create``, URL mode): an
        OAuth flow with a third party, a payment, a secret that must not pass the client.

        ``accept`` means the user consented to open the URL, not that the flow finished: check
        your own state (the token you stored, the payment you saw) before going on. In 2025-11-25
        the request carries ``elicitationId`` (``elicitation_id``, default
        :meth:`elicitation_id`); ``App.complete_elicitation`` then tells the client the flow
        finished. In 2026-07-28 the call returns to the client as an input request and your
        handler runs again from the top with the answer. Raises
        :class:`~mcpkit.ClientCapabilityError` unless the client declared ``elicitation.url``.
        """
        require_mode(self.client_capabilities, self.protocol_version, "url")
        params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
        if url_elicitation_ids(self.protocol_version):
            params["elicitationId"] = elicitation_id or self.elicitation_id()
        answer = await self._scope.ask("elicitation/create", params, key)
        action = answer.get("action") if isinstance(answer, dict) else None
        return ElicitResult(action if action in ("accept", "decline") else "cancel")

    async def sample(
        self,
        messages: str | Sequence[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion (``sampling/createMessage``).

        ``messages`` is a string (one user message) or a list of ``SamplingMessage`` dicts.
        Returns the client's ``CreateMessageResult`` (``role``, ``content``, ``model``, ...).
        """
        if not isinstance(self.client_capabilities.get("sampling"), dict):
            raise ClientCapabilityError(
                {"sampling": {}}, "Missing required client capability: sampling"
            )
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": list(messages), "maxTokens": max_tokens}
        optional = {
            "systemPrompt": system_prompt,
            "temperature": temperature,
            "stopSequences": stop_sequences,
            "modelPreferences": model_preferences,
        }
        params.update({k: v for k, v in optional.items() if v is not None})
        result: dict[str, Any] = await self._scope.ask("sampling/createMessage", params, key)
        return result

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``): a list of ``{"uri", "name"?}``."""
        if not isinstance(self.client_capabilities.get("roots"), dict):
            raise ClientCapabilityError({"roots": {}}, "Missing required client capability: roots")
        result = await self._scope.ask("roots/list", {}, key)
        roots: list[dict[str, Any]] = result.get("roots", []) if isinstance(result, dict) else []
        return roots

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Read one of this app's own resources: its ``contents`` list."""
        return await self._scope.read_resource(uri)
