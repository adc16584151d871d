"""``mcpkit run TARGET``: serve an App over stdio or Streamable HTTP (uvicorn)."""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import secrets
import sys
from typing import Any, NoReturn

import click

from mcpkit._envfile import EnvFileError, pair
from mcpkit.cli.loader import load_app
from mcpkit.cli.serve import LOG_FORMAT, configure, export_settings, load_or_report, run_target
from mcpkit.protocol.fleet import STORE_ENV
from mcpkit.protocol.request_state import STATE_KEY_ENV

__all__ = ["http_app_from_env", "run", "uvicorn_settings"]

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
@click.option(
    "--store",
    metavar="URL",
    help="Where tasks live and how replicas share changes: redis://host:port/db "
    '(pip install "mcpkit[redis]"); sets MCPKIT_STORE. Default: this process\'s memory.',
)
@click.option(
    "--env-file",
    type=click.Path(dir_okay=False),
    help="Settings: KEY=VALUE lines (PREFIX_FIELD names), below the environment.",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="FIELD=VALUE",
    help="Settings: one field's value, over every other source. Repeatable.",
)
@click.option(
    "--reload",
    is_flag=True,
    help="Serve the new code when a .py file under TARGET's folder changes "
    '(pip install "mcpkit[reload]"): stdio keeps the session, HTTP restarts the server process.',
)
def run(
    target: str,
    transport: str,
    log_level: str,
    store: str | None,
    env_file: str | None,
    sets: tuple[str, ...],
    reload: bool,
    **http: Any,
) -> None:
    """Serve the App that TARGET names (pkg.module:app or path/to/file.py:app).

    Over stdio the server reads JSON-RPC messages on stdin and writes only protocol messages on
    stdout; everything else, including a tool's print(), goes to stderr. With --transport http
    it serves Streamable HTTP with uvicorn (pip install "mcpkit[http]"). An App with settings
    validates them first (every problem on stderr, exit code 2).
    """
    for item in sets:  # FIELD=VALUE; the names are checked with the settings
        try:
            pair(item, "--set")
        except EnvFileError as exc:  # a usage error, as _io.fail words it (not imported here)
            click.echo(f"mcpkit run: error: {exc}", err=True)
            raise click.exceptions.Exit(2) from None
    if store is not None:
        os.environ[STORE_ENV] = store  # read by every server this process (or its workers) runs
    if reload:
        _check_reload(transport, http["workers"])
    if transport == "http":
        logging.basicConfig(level=log_level.upper(), format=LOG_FORMAT)
        _serve_http(target, log_level, env_file, sets, reload=reload, **http)
        return
    code = _run_stdio(target, log_level, reload, env_file, sets)
    if code:
        raise click.exceptions.Exit(code)


def _check_reload(transport: str, workers: int) -> None:
    if importlib.util.find_spec("watchfiles") is None:
        _usage_error('--reload needs watchfiles: pip install "mcpkit[reload]"')
    if transport == "http" and workers > 1:
        _usage_error("--reload serves one worker process; drop --workers")
    if transport == "http" and sys.platform == "win32":  # the child inherits the socket's fd
        _usage_error("--reload over HTTP needs a POSIX system (Linux, macOS)")


def _usage_error(message: str) -> NoReturn:
    click.echo(f"mcpkit run: error: {message}", err=True)
    raise click.exceptions.Exit(2)


def _run_stdio(
    target: str, log_level: str, reload: bool, env_file: str | None, sets: tuple[str, ...]
) -> int:
    if not reload:
        return run_target(target, log_level, env_file, sets)
    from mcpkit.cli.reload_stdio import run_reloading

    return run_reloading(target, log_level, env_file, sets)


# ----------------------------------------------------------------------------- HTTP

TARGET_ENV = "MCPKIT_TARGET"
OPTIONS_ENV = "MCPKIT_HTTP_OPTIONS"


def _serve_http(
    target: str,
    log_level: str,
    env_file: str | None,
    sets: tuple[str, ...],
    *,
    host: str,
    port: int,
    path: str,
    stateless: bool,
    json_response: bool,
    max_sessions: int,
    read_timeout: int,
    workers: int,
    reload: bool,
) -> None:
    try:
        import uvicorn
    except ImportError:
        click.echo('mcpkit run: error: HTTP needs uvicorn: pip install "mcpkit[http]"', err=True)
        raise click.exceptions.Exit(2) from None
    app = _load_or_exit(target)  # in this process too, so a bad TARGET fails before any worker
    if not configure(app, env_file, sets):
        raise click.exceptions.Exit(2)
    if workers > 1 or reload:  # every worker (or restarted child) reads the same values
        export_settings(app, env_file, sets)  # validated above
    options: dict[str, Any] = {
        "path": path,
        "stateless": stateless,
        "json_response": json_response,
        "max_sessions": max_sessions,
    }
    os.environ[TARGET_ENV] = target
    os.environ[OPTIONS_ENV] = json.dumps(options)
    if (workers > 1 or reload) and app.options.state_key is None:
        # Every worker (or restarted child) must verify the requestState another one signed.
        os.environ.setdefault(STATE_KEY_ENV, secrets.token_hex(32))
    shown = f"[{host}]" if ":" in host else host
    click.echo(
        f"mcpkit: serving {app.summary} over Streamable "
        f"HTTP at http://{shown}:{port}{path} ({workers} worker{'s' if workers > 1 else ''})",
        err=True,
    )
    settings = uvicorn_settings(log_level, read_timeout)
    if reload:
        from mcpkit.cli.reload_http import supervise

        supervise(target, host, port, settings)
        return
    served: Any = "mcpkit.cli.run:http_app_from_env"  # (each worker makes its own)
    if workers == 1:
        served = app.asgi(**options, owns_process=True)
    uvicorn.run(served, factory=workers > 1, host=host, port=port, workers=workers, **settings)


def uvicorn_settings(log_level: str, read_timeout: int) -> dict[str, Any]:
    """What uvicorn is told however it serves (one process, workers, a reloaded child)."""
    return {
        "log_level": log_level,
        "access_log": False,
        "timeout_graceful_shutdown": 3,
        # A name, so every worker process can import it.
        "http": "mcpkit.transports.http._h1:http_protocol",
        "ws": "none",
        "timeout_keep_alive": read_timeout,
    }


def _load_or_exit(target: str) -> Any:
    app = load_or_report(target)
    if app is None:
        raise click.exceptions.Exit(2)
    return app


def http_app_from_env() -> Any:
    """The uvicorn app factory for ``--workers``: each worker loads the TARGET itself (and, like
    the single process, does nothing else: ``owns_process``)."""
    options = json.loads(os.environ.get(OPTIONS_ENV, "{}"))
    return load_app(os.environ[TARGET_ENV]).asgi(**options, owns_process=True)
