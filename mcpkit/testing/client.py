"""An in-memory MCP client that speaks the real wire format (encode -> server -> decode)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import threading
from collections.abc import Callable, Coroutine, Mapping
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from mcpkit._extensions import TASKS
from mcpkit._version import __version__
from mcpkit.app import App
from mcpkit.protocol import jsonrpc
from mcpkit.protocol.request import ActingFor
from mcpkit.protocol.server import Server, Session
from mcpkit.protocol.versions import (
    LATEST_HANDSHAKE,
    META_CAPABILITIES,
    META_CLIENT_INFO,
    META_VERSION,
    STATELESS_VERSIONS,
)
from mcpkit.settings import override_settings
from mcpkit.testing.result import CallToolResult, is_wrapper_schema

__all__ = ["Client", "RPCError", "SyncClient"]

T = TypeVar("T")
P = ParamSpec("P")


class RPCError(Exception):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error
        self.code: int = error.get("code", 0)
        self.message: str = error.get("message", "")
        self.data: Any = error.get("data")
        super().__init__(f"{self.code} {self.message}")


class Client:
    """Talk to an App as a client would, in memory; ``async with`` it (or ``with``, for sync).

    ``protocol_version`` picks the era: a handshake version (default ``2025-11-25``) sends
    ``initialize`` on entry; ``2026-07-28`` sends ``_meta`` on every request instead.
    ``principal`` and ``headers`` are what every request's handlers (and middleware) read as
    ``ctx.principal`` and ``ctx.headers``, as if an HTTP transport had authenticated the
    caller and read its headers; ``ctx.transport`` is ``"memory"``. ``settings`` (field ->
    value) are the App's settings while the client is open, validated with the class's defaults
    alone (never the environment: a test sees the same settings everywhere); without it they
    are read from the environment on first use, as a server reads them.
    """

    def __init__(
        self,
        app: App,
        *,
        protocol_version: str = LATEST_HANDSHAKE,
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        initialize: bool = True,
        elicitation: Callable[[Any], Any] | None = None,
        sampling: Callable[[Any], Any] | None = None,
        roots: Callable[[Any], Any] | None = None,
        principal: Any = None,
        headers: Mapping[str, str] | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> None:
        self.app = app
        self.settings = settings
        self.principal = principal
        self.headers = headers
        self._caller = _caller(principal, headers)  # None: requests see the sender's caller
        self.protocol_version = protocol_version
        self.client_info = client_info or {"name": "mcpkit-testing", "version": __version__}
        self.stateless = protocol_version in STATELESS_VERSIONS
        self.notifications: list[dict[str, Any]] = []
        self.initialize_result: dict[str, Any] | None = None
        self._initialize = initialize
        self._ids = itertools.count(1)
        self.handlers: dict[str, Callable[[Any], Any]] = {
            method: handler
            for method, handler in (
                ("elicitation/create", elicitation),
                ("sampling/createMessage", sampling),
                ("roots/list", roots),
            )
            if handler is not None
        }
        # By default the client declares the capability of each request it can answer.
        default: dict[str, Any] = {method.split("/")[0]: {} for method in self.handlers}
        self.capabilities = capabilities if capabilities is not None else default
        self.server_requests: list[dict[str, Any]] = []
        self.max_input_rounds = 10
        self._task_tools: dict[str, str] = {}  # task id -> the tool it runs (for .data)
        self._server: Server | None = None
        self._session: Session | None = None
        self._sync: SyncClient | None = None
        self._answering: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ async use

    async def __aenter__(self) -> Client:
        self._restore_settings = override_settings(self.app, self.settings)
        self._server = Server(self.app)
        await self._server.start()
        self._session = self._server.session(self._receive_notification, transport="memory")
        if self._initialize and not self.stateless:
            self.initialize_result = await self.request(
                "initialize",
                {
                    "protocolVersion": self.protocol_version,
                    "capabilities": self.capabilities,
                    "clientInfo": self.client_info,
                },
            )
            await self.notify("notifications/initialized")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.cancel_all()
        for task in list(self._answering):
            task.cancel()
        if self._server is not None:
            await self._server.stop()
        self._restore_settings()  # after the lifespan, which may read them

    async def _receive_notification(self, message: dict[str, Any]) -> None:
        message = jsonrpc.decode(jsonrpc.encode(message))
        if "id" in message and "method" in message:  # a request from the server
            task = asyncio.ensure_future(self._answer_server_request(message))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
            return
        self.notifications.append(message)

    async def _answer_server_request(self, message: dict[str, Any]) -> None:
        self.server_requests.append(message)
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            response["result"] = await self._input_response(message["method"], message["params"])
        except LookupError as exc:
            response["error"] = {"code": -32601, "message": str(exc)}
        await self.send(response)

    async def _input_response(self, method: str, params: Any) -> Any:
        """Answer a server's question with the handler given for its kind."""
        handler = self.handlers.get(method)
        if handler is None:
            raise LookupError(f"this test client has no handler for {method}")
        result = handler(params)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def send_raw(self, data: bytes | str) -> Any:
        """Send raw bytes as one message; return the decoded response (``None``: no answer)."""
        if self._session is None:
            raise RuntimeError("use the client inside 'async with' (or 'with')")
        if self._caller is None:
            response = await self._session.receive(data)
        else:
            with ActingFor(*self._caller):
                response = await self._session.receive(data)
        return None if response is None else jsonrpc.decode(jsonrpc.encode(response))

    async def send(self, message: Any) -> Any:
        """Send one JSON value as it is; return the decoded response or ``None``."""
        return await self.send_raw(jsonrpc.encode(message))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and return its ``result``; raise :class:`RPCError` on an error."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        params = self._with_meta(method, params)
        if params is not None:
            message["params"] = params
        response = await self.send(message)
        if "error" in response:
            raise RPCError(response["error"])
        return response["result"]

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    def _with_meta(self, method: str, params: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.stateless:
            return params
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta.setdefault(META_VERSION, self.protocol_version)
        meta.setdefault(META_CAPABILITIES, self.capabilities)
        meta.setdefault(META_CLIENT_INFO, self.client_info)
        params["_meta"] = meta
        return params

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, following ``nextCursor`` through all pages."""
        return await self._list_all("tools/list", "tools")

    async def list_resources(self) -> list[dict[str, Any]]:
        """Every static resource, through all pages."""
        return await self._list_all("resources/list", "resources")

    async def list_resource_templates(self) -> list[dict[str, Any]]:
        """Every resource template, through all pages."""
        return await self._list_all("resources/templates/list", "resourceTemplates")

    async def list_prompts(self) -> list[dict[str, Any]]:
        """Every prompt, through all pages."""
        return await self._list_all("prompts/list", "prompts")

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        params: dict[str, Any] = {}
        while True:
            result = await self.request(method, params or None)
            items.extend(result[key])
            if "nextCursor" not in result:
                return items
            params = {"cursor": result["nextCursor"]}

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """The ``contents`` of a resource (input requests answered as in :meth:`call_tool`)."""
        result = await self.with_input("resources/read", {"uri": uri})
        contents: list[dict[str, Any]] = result["contents"]
        return contents

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """The ``GetPromptResult`` (input requests answered as in :meth:`call_tool`)."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.with_input("prompts/get", params)

    async def complete(
        self,
        ref: dict[str, Any],
        argument: str,
        value: str = "",
        context: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """``completion/complete``: the ``completion`` object (``values``, ``total``, ...)."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        result = await self.request("completion/complete", params)
        completion: dict[str, Any] = result["completion"]
        return completion

    async def call_tool(
        self,
        /,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        task: bool = False,
        **params: Any,
    ) -> CallToolResult:
        """Call a tool and return its :class:`CallToolResult` (``isError`` results are returned).

        ``result.data`` is the returned value without the ``{"result": ...}`` wrapper, read
        from the tool's published output schema; ``result["structuredContent"]`` still works.
        In the 2026-07-28 era an ``InputRequiredResult`` is answered with the client's
        handlers and the call retried, as a real client does (up to ``max_input_rounds``).
        ``task=True`` declares the tasks extension on this request: a tool that supports tasks
        answers a ``CreateTaskResult`` (read ``result["taskId"]``; see :meth:`wait_task`).
        """
        if task:
            params["_meta"] = {**params.get("_meta", {}), **self._declaring_tasks()}
        result = await self.with_input(
            "tools/call", {"name": name, "arguments": arguments or {}, **params}
        )
        if result.get("resultType") == "task":
            self._task_tools[result["taskId"]] = name
        return CallToolResult(result, wrapped="structuredContent" in result and self._wraps(name))

    def _declaring_tasks(self) -> dict[str, Any]:
        extensions = {**self.capabilities.get("extensions", {}), TASKS: {}}
        return {META_CAPABILITIES: {**self.capabilities, "extensions": extensions}}

    async def _task_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.request(
            method, {**params, "_meta": self._declaring_tasks()}
        )
        return result

    async def get_task(self, task_id: str) -> dict[str, Any]:
        """``tasks/get``: the task's state (``status``, and ``result`` / ``error`` /
        ``inputRequests`` when it has them)."""
        return await self._task_request("tasks/get", {"taskId": task_id})

    async def update_task(self, task_id: str, responses: dict[str, Any]) -> dict[str, Any]:
        """``tasks/update``: answer the task's ``inputRequests`` (by key)."""
        return await self._task_request(
            "tasks/update", {"taskId": task_id, "inputResponses": responses}
        )

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        """``tasks/cancel`` (an empty acknowledgement)."""
        return await self._task_request("tasks/cancel", {"taskId": task_id})

    async def wait_task(self, task_id: str, *, timeout: float = 10.0) -> CallToolResult:
        """Poll a task until it ends and return its result; its input requests are answered
        with this client's handlers on the way. A failed task raises :class:`RPCError` with
        its error; a cancelled one raises ``RuntimeError``; ``TimeoutError`` after ``timeout``
        seconds."""
        return await asyncio.wait_for(self._settled(task_id), timeout)

    async def _settled(self, task_id: str) -> CallToolResult:
        while True:
            task = await self.get_task(task_id)
            status = task["status"]
            if status == "completed":
                result = task["result"]
                wraps = self._wraps(self._task_tools.get(task_id, ""))
                return CallToolResult(result, wrapped="structuredContent" in result and wraps)
            if status == "failed":
                raise RPCError(task["error"])
            if status == "cancelled":
                raise RuntimeError(f"task {task_id} was cancelled")
            if status == "input_required":
                responses = {
                    key: await self._input_response(asked["method"], asked.get("params"))
                    for key, asked in task["inputRequests"].items()
                }
                await self.update_task(task_id, responses)
                continue
            await asyncio.sleep(min(task.get("pollIntervalMs", 10), 10) / 1000)

    def _wraps(self, name: str) -> bool:
        """Whether the tool publishes the ``{"result": ...}`` wrapper as its output schema."""
        tool = self.app.tools.get(name)
        return tool is not None and is_wrapper_schema(tool.output_schema)

    async def with_input(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request, answering input requests and retrying until it completes."""
        for _ in range(self.max_input_rounds):
            result: dict[str, Any] = await self.request(method, params)
            if result.get("resultType") != "input_required":
                return result
            responses = {
                key: await self._input_response(asked["method"], asked.get("params"))
                for key, asked in (result.get("inputRequests") or {}).items()
            }
            params = {**params, "inputResponses": responses}
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise RuntimeError(f"{method} still wanted input after {self.max_input_rounds} rounds")

    # ------------------------------------------------------------------- sync use

    def __enter__(self) -> SyncClient:
        self._sync = SyncClient(self)
        return self._sync

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._sync is not None:
            self._sync.close()


def _blocking(
    method: Callable[Concatenate[Client, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[SyncClient, P], T]:
    """``method`` of :class:`Client` as a :class:`SyncClient` method that waits for its result."""

    @functools.wraps(method)
    def call(self: SyncClient, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._call(method(self.client, *args, **kwargs))

    return call


def _caller(principal: Any, headers: Mapping[str, str] | None) -> tuple[Any, Any] | None:
    """The caller each request is sent as, when the client plays an authenticated caller."""
    if principal is None and headers is None:
        return None
    raw = None if headers is None else {name.lower(): [value] for name, value in headers.items()}
    return principal, raw


class SyncClient:
    """The blocking face of :class:`Client` (``with Client(app) as client``).

    The server runs on an event loop in a background thread; every method waits for it.
    """

    def __init__(self, client: Client) -> None:
        self.client = client
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._call(client.__aenter__())

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        self._call(self.client.__aexit__(None, None, None))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return self.client.notifications

    @property
    def initialize_result(self) -> dict[str, Any] | None:
        return self.client.initialize_result

    @property
    def server_requests(self) -> list[dict[str, Any]]:
        """Requests the server sent this client (handshake era), answered by its handlers."""
        return self.client.server_requests

    send_raw = _blocking(Client.send_raw)
    send = _blocking(Client.send)
    request = _blocking(Client.request)
    notify = _blocking(Client.notify)
    list_tools = _blocking(Client.list_tools)
    call_tool = _blocking(Client.call_tool)
    with_input = _blocking(Client.with_input)
    list_resources = _blocking(Client.list_resources)
    list_resource_templates = _blocking(Client.list_resource_templates)
    list_prompts = _blocking(Client.list_prompts)
    read_resource = _blocking(Client.read_resource)
    get_prompt = _blocking(Client.get_prompt)
    complete = _blocking(Client.complete)
    get_task = _blocking(Client.get_task)
    update_task = _blocking(Client.update_task)
    cancel_task = _blocking(Client.cancel_task)
    wait_task = _blocking(Client.wait_task)
