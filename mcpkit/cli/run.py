"""``mcpkit run TARGET``: serve an App over stdio or Streamable HTTP (uvicorn)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
from typing import Any

import click

from mcpkit.cli.loader import load_app
from mcpkit.cli.serve import LOG_FORMAT, load_or_report, serve_stdio
from mcpkit.protocol.mrtr import STATE_KEY_ENV

__all__ = ["ReadDeadline", "http_app_from_env", "http_protocol", "run"]

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


@click.command()
@click.argument("target")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="How clients connect.",
)
@click.option(
    "--log-level",
    type=click.Choice(LOG_LEVELS),
    default="warning",
    show_default=True,
    help="Server log level (logs go to stderr).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP: the address to bind.")
@click.option("--port", default=8000, show_default=True, help="HTTP: the port to bind.")
@click.option("--path", default="/mcp", show_default=True, help="HTTP: the MCP endpoint's path.")
@click.option(
    "--stateless", is_flag=True, help="HTTP: no sessions; any worker answers any request."
)
@click.option("--json-response", is_flag=True, help="HTTP: answer with JSON, never SSE.")
@click.option(
    "--max-sessions",
    default=10_000,
    show_default=True,
    type=click.IntRange(min=1),
    help="HTTP: handshake-era sessions at once; the least recently used idle one makes room.",
)
@click.option(
    "--read-timeout",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="HTTP: seconds a client has to send a request's headers, and may pause in its body; "
    "an idle connection closes after as long.",
)
@click.option("--workers", default=1, show_default=True, help="HTTP: worker processes.")
def run(target: str, transport: str, log_level: str, **http: Any) -> None:
    """Serve the App that TARGET names (pkg.module:app or path/to/file.py:app).

    Over stdio the server reads JSON-RPC messages on stdin and writes only protocol messages on
    stdout; everything else, including a tool's print(), goes to stderr. With --transport http
    it serves Streamable HTTP with uvicorn (pip install "mcpkit[http]").
    """
    if transport == "http":
        logging.basicConfig(level=log_level.upper(), format=LOG_FORMAT)
        _serve_http(target, log_level, **http)
        return
    code = serve_stdio(target, log_level)
    if code:
        raise click.exceptions.Exit(code)


# ----------------------------------------------------------------------------- HTTP

TARGET_ENV = "MCPKIT_TARGET"
OPTIONS_ENV = "MCPKIT_HTTP_OPTIONS"


def _serve_http(
    target: str,
    log_level: str,
    *,
    host: str,
    port: int,
    path: str,
    stateless: bool,
    json_response: bool,
    max_sessions: int,
    read_timeout: int,
    workers: int,
) -> None:
    try:
        import uvicorn
    except ImportError:
        click.echo('mcpkit run: error: HTTP needs uvicorn: pip install "mcpkit[http]"', err=True)
        raise click.exceptions.Exit(2) from None
    app = _load_or_exit(target)  # in this process too, so a bad TARGET fails before any worker
    options = {
        "path": path,
        "stateless": stateless,
        "json_response": json_response,
        "max_sessions": max_sessions,
    }
    os.environ[TARGET_ENV] = target
    os.environ[OPTIONS_ENV] = json.dumps(options)
    if workers > 1 and app.options.state_key is None:
        # Every worker must verify the requestState another worker signed: one shared key.
        os.environ.setdefault(STATE_KEY_ENV, secrets.token_hex(32))
    shown = f"[{host}]" if ":" in host else host
    click.echo(
        f"mcpkit: serving {app.summary} over Streamable "
        f"HTTP at http://{shown}:{port}{path} ({workers} worker{'s' if workers > 1 else ''})",
        err=True,
    )
    served: Any = app.asgi(**options) if workers == 1 else "mcpkit.cli.run:http_app_from_env"
    uvicorn.run(
        served,
        factory=workers > 1,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=3,
        http="mcpkit.cli.run:http_protocol",  # a name, so every worker process can import it
        ws="none",
        timeout_keep_alive=read_timeout,
    )


def _load_or_exit(target: str) -> Any:
    app = load_or_report(target)
    if app is None:
        raise click.exceptions.Exit(2)
    return app


def http_app_from_env() -> Any:
    """The uvicorn app factory for ``--workers``: each worker loads the TARGET itself."""
    options = json.loads(os.environ.get(OPTIONS_ENV, "{}"))
    return load_app(os.environ[TARGET_ENV]).asgi(**options)


# ------------------------------------------------------------------------ slow clients


def http_protocol(
    config: Any, server_state: Any, app_state: Any, _loop: Any = None
) -> asyncio.Protocol:
    """uvicorn's HTTP protocol under a :class:`ReadDeadline` of ``timeout_keep_alive`` seconds
    (uvicorn calls this for each connection, as it would the protocol class)."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    inner = AutoHTTPProtocol(  # type: ignore[call-arg]
        config=config, server_state=server_state, app_state=app_state, _loop=_loop
    )
    return ReadDeadline(inner, config.timeout_keep_alive)


class ReadDeadline(asyncio.Protocol):
    """An HTTP connection (uvicorn's protocol) with a deadline on reading each request.

    uvicorn closes a connection left idle after a response (``timeout_keep_alive``), but not
    one that never completes a request: no timer runs before the first request, and any byte
    stops the keep-alive one, so a client that sends half a request holds its connection for
    ever (slowloris). Here the connection closes when a request's headers are not all in
    ``timeout`` seconds after the connection opened (or after the request's first byte), or
    when its body pauses longer than that. Once a request is in, its answer may take as long
    as it needs: a long call or a GET stream is not cut.
    """

    def __init__(self, inner: asyncio.Protocol, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.transport: asyncio.BaseTransport | None = None
        self.timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        self.inner.connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)
        waiting = self._waiting_for()
        if waiting == "body" or (waiting == "headers" and self.timer is None):
            self._arm()  # a body's every piece restarts the clock; headers' first byte starts it
        elif waiting is None:
            self._disarm()

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def _waiting_for(self) -> str | None:
        """``"headers"`` (of a new request), ``"body"``, or ``None`` once a request is in."""
        cycle = getattr(self.inner, "cycle", None)  # the request uvicorn is serving, if any
        if cycle is None or cycle.response_complete:
            return "headers"
        return "body" if cycle.more_body else None

    def _arm(self) -> None:
        self._disarm()
        self.timer = asyncio.get_running_loop().call_later(self.timeout, self._expired)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expired(self) -> None:
        self.timer = None
        if self.transport is not None and self._waiting_for() is not None:
            self.transport.close()
