"""The one error tree of mcpkit.

::

    MCPKitError
    ├── DefinitionError          a tool, resource or prompt cannot be defined (bad signature,
    │                            a type pydantic cannot express, a bad name, a duplicate)
    ├── SettingsError            an App's settings fail validation (every problem, one per
    │                            variable; secret values never shown)
    ├── ToolError                raised by a tool's own code: an ``isError: true`` result
    ├── ClientRequestError       the client answered a server request (elicitation, sampling,
    │                            roots) with a JSON-RPC error
    ├── Unencodable              a message JSON cannot carry (an object it cannot serialize,
    │                            NaN or an infinity); the server answers that call's error
    └── ProtocolError            anything answered as a JSON-RPC error object
        ├── ParseError                        -32700
        ├── InvalidRequest                    -32600
        ├── MethodNotFound                    -32601
        ├── InvalidParams                     -32602
        │   └── InvalidArguments              tool arguments that fail the input schema
        ├── InternalError                     -32603
        ├── ResourceNotFound                  -32002 (up to 2025-11-25)
        ├── HeaderMismatch                    -32020 (2026-07-28, HTTP)
        ├── ClientCapabilityError             -32021 (a client capability is missing)
        ├── UnsupportedProtocolVersion        -32022 (2026-07-28)
        └── UrlElicitationRequired            -32042 (2025-11-25; an input request after)

Handlers raise these; exactly one place (the server) turns them into wire messages, according to
the negotiated protocol version. Messages say what went wrong and, where it helps, how to fix it.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ClientCapabilityError",
    "ClientRequestError",
    "DefinitionError",
    "HeaderMismatch",
    "InternalError",
    "InvalidArguments",
    "InvalidParams",
    "InvalidRequest",
    "MCPKitError",
    "MethodNotFound",
    "ParseError",
    "ProtocolError",
    "ResourceNotFound",
    "SettingsError",
    "ToolError",
    "Unencodable",
    "UnsupportedProtocolVersion",
    "UrlElicitationRequired",
]


class MCPKitError(Exception):
    """Root of every exception mcpkit raises on purpose."""


class DefinitionError(MCPKitError, TypeError):
    """A tool, resource or prompt cannot be defined as written.

    Raised at decoration for the signature's shape and on first compile for types; the message
    names the definition, the parameter and the fix.
    """


class SettingsError(MCPKitError, ValueError):
    """An App's settings are not valid: ``problems`` holds one text per problem.

    The message is a block for the person starting the server: which variable, what is wrong,
    the field's description. A secret's value is never in it.
    """

    def __init__(self, app_name: str, problems: list[str]) -> None:
        self.problems = tuple(problems)
        count = f"{len(problems)} problem{'' if len(problems) == 1 else 's'}"
        super().__init__(f"invalid settings for {app_name!r} ({count}):\n" + "\n".join(problems))


class ToolError(MCPKitError):
    """Raise inside a tool to answer ``isError: true`` with this message.

    The message is shown to the client (and so to the model) as it is: write it for them.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ClientRequestError(MCPKitError):
    """The client answered a request the server sent it with an error object."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.code = error.get("code")
        self.message = str(error.get("message", "the client refused the request"))
        self.data = error.get("data")
        super().__init__(f"{self.code} {self.message}")


class Unencodable(MCPKitError, ValueError):
    """A message JSON cannot carry: a value ``to_json`` cannot serialize, or NaN or an infinity
    (JSON has no such numbers, and strict clients drop a line that holds one).

    ``what`` says which (``"NaN"``, ``"Infinity"``, ``"-Infinity"`` or the serializer's reason);
    ``path`` says where, from the message's root (keys, and indexes of lists), when it is known.
    """

    def __init__(
        self, what: str, path: tuple[str | int, ...] = (), *, non_finite: bool = False
    ) -> None:
        self.what = what
        self.path = path
        self.non_finite = non_finite
        steps = (f"[{step}]" if isinstance(step, int) else f".{step}" for step in path)
        where = "".join(steps).lstrip(".")
        super().__init__(f"{what} at {where}" if where else what)


class ProtocolError(MCPKitError):
    """An error answered as a JSON-RPC error object: ``{code, message, data?}``.

    Raise it (from a middleware, a resource, a prompt) to answer that error:
    ``ProtocolError("Too many requests", code=-32000, data={"retryAfterS": 3})``. Without
    ``code`` it is the class's own (``-32603`` here; each subclass names its code). Pick
    application codes from ``-32000`` to ``-32019`` (the range MCP leaves to implementations).
    """

    code: int = -32603
    default_message: str = "Internal error"

    def __init__(
        self, message: str | None = None, data: Any = None, *, code: int | None = None
    ) -> None:
        self.message = message if message is not None else self.default_message
        self.data = data
        if code is not None:
            if not isinstance(code, int) or isinstance(code, bool):
                raise TypeError(f"code must be an integer, not {code!r}")
            self.code = code
        super().__init__(self.message)

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member for this exception."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class ParseError(ProtocolError):
    """The bytes received are not JSON (or not UTF-8)."""

    code = -32700
    default_message = "Parse error"


class InvalidRequest(ProtocolError):
    """The JSON is not a valid JSON-RPC request object."""

    code = -32600
    default_message = "Invalid Request"


class MethodNotFound(ProtocolError):
    """Unknown method, or one of a capability the server does not advertise."""

    code = -32601
    default_message = "Method not found"


class InvalidParams(ProtocolError):
    """The params do not fit the method (unknown tool, bad cursor, missing name, ...)."""

    code = -32602
    default_message = "Invalid params"


class InvalidArguments(InvalidParams):
    """A tool's arguments fail its input schema.

    ``detail`` has the seed's shape: ``{"field", "expected", "received"}`` plus ``errors`` when
    there are several. The server answers it as a ``-32602`` error up to 2025-06-18 and as an
    ``isError: true`` result from 2025-11-25 on.
    """

    def __init__(self, detail: dict[str, Any], *, tool: str = "") -> None:
        super().__init__("Invalid params", detail)
        self.detail = detail
        self.tool = tool


class InternalError(ProtocolError):
    """Something failed inside the server; details go to the log, never to the client."""

    code = -32603
    default_message = "Internal error"


class ResourceNotFound(ProtocolError):
    """No resource answers to the URI (``-32002`` up to 2025-11-25; ``-32602`` after)."""

    code = -32002
    default_message = "Resource not found"


class HeaderMismatch(ProtocolError):
    """An HTTP header disagrees with the body, or a required one is missing (2026-07-28)."""

    code = -32020
    default_message = "Header mismatch"


class ClientCapabilityError(ProtocolError):
    """The request needs a client capability that the client did not declare.

    ``data`` is ``{"requiredCapabilities": {...}}``, a ClientCapabilities object.
    """

    code = -32021
    default_message = "Missing required client capability"

    def __init__(self, required: dict[str, Any], message: str | None = None) -> None:
        super().__init__(message, {"requiredCapabilities": required})
        self.required = required


class UnsupportedProtocolVersion(ProtocolError):
    """The request names a protocol version this server does not speak (2026-07-28)."""

    code = -32022
    default_message = "Unsupported protocol version"

    def __init__(self, requested: Any, supported: list[str]) -> None:
        super().__init__(None, {"supported": supported, "requested": requested})


class UrlElicitationRequired(ProtocolError):
    """Raise to say the request cannot go on until the user visits ``url`` (URL-mode
    elicitation, 2025-11-25: the ``-32042`` error, its ``data.elicitations`` holding this one).

    ``message`` tells the user why; ``elicitation_id`` (a fresh random id unless given) is what
    ``App.complete_elicitation`` takes when the flow finishes. For a 2026-07-28 request the
    same raise answers an ``InputRequiredResult`` asking for the URL instead (that version has
    no ``-32042``); a client that did not declare ``elicitation.url`` gets ``-32021``.
    """

    code = -32042
    default_message = "URL elicitation required"

    def __init__(self, url: str, message: str, *, elicitation_id: str | None = None) -> None:
        if not elicitation_id:
            import secrets  # not at import: hmac and hashlib come with it (start-up)

            elicitation_id = secrets.token_urlsafe(16)
        self.elicitation_id = elicitation_id
        self.url = url
        self.prompt = message
        elicitation = {
            "mode": "url",
            "elicitationId": self.elicitation_id,
            "url": url,
            "message": message,
        }
        super().__init__(None, {"elicitations": [elicitation]})
