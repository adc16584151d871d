"""stdio servers to talk to: ``serve_stdio`` on pipes in process, or ``mcpkit run`` as an
asyncio subprocess with :class:`Talk` for a client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from strict_json import parse_strict

from mcpkit import App
from mcpkit.protocol.server import Server
from mcpkit.transports.stdio import serve_stdio

ROOT = Path(__file__).resolve().parent.parent
LINE_LIMIT = 64 * 1024 * 1024
TIMEOUT = 10.0


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def unmeasured_env() -> dict[str, str]:
    """:func:`server_env` without coverage's start-up in the child (the suite under coverage
    measures subprocesses): coverage imports ``pathlib``, ``decimal``, ``urllib.parse`` and more
    before any mcpkit code runs, so a test of what mcpkit itself loads could not see them."""
    env = server_env()
    env.pop("COVERAGE_PROCESS_CONFIG", None)
    env.pop("COVERAGE_PROCESS_START", None)
    return env


@contextlib.asynccontextmanager
async def serve_on_pipes(
    app: App | Server, *, reader_limit: int = LINE_LIMIT, **options: Any
) -> AsyncIterator[tuple[asyncio.Future[None], int, asyncio.StreamReader]]:
    """``serve_stdio(app, **options)`` in this loop, on pipes: the server's task, the file
    descriptor that writes its stdin, and a reader of its stdout."""
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    stdin, stdout = os.fdopen(in_read, "rb", 0), os.fdopen(out_write, "wb", 0)
    server = asyncio.ensure_future(serve_stdio(app, stdin, stdout, **options))
    reader = asyncio.StreamReader(limit=reader_limit)
    reading, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(out_read, "rb", 0)
    )
    try:
        yield server, in_write, reader
    finally:
        reading.close()


@contextlib.asynccontextmanager
async def mcpkit_run(
    target: str, *args: str, limit: int = LINE_LIMIT
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``python -m mcpkit run TARGET ARGS`` on pipes; killed on the way out if still running.

    asyncio reads the server's stdout into memory until ``2 * limit`` bytes wait there: a
    client that must not read at all passes a small ``limit``.
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mcpkit",
        "run",
        target,
        *args,
        cwd=ROOT,
        env=server_env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=limit,
    )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        assert process.stdin is not None
        process.stdin.close()


class Talk:
    """One client of an ``mcpkit run`` process: strict-JSON lines in, answers sorted by id."""

    def __init__(self, process: asyncio.subprocess.Process, timeout: float = TIMEOUT) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.timeout = timeout
        self.answers: dict[Any, Any] = {}
        self.notes: list[Any] = []
        self.lines: list[bytes] = []
        self.stderr = asyncio.ensure_future(process.stderr.read())

    async def send(self, message: Any) -> None:
        await self.write(json.dumps(message).encode() + b"\n")

    async def write(self, data: bytes) -> None:
        self.stdin.write(data)
        await self.stdin.drain()

    async def request(self, message: dict[str, Any]) -> Any:
        await self.send(message)
        return await self.answer(message["id"])

    async def initialize(self, version: str = "2025-11-25") -> None:
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t"}}
        await self.request(
            {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}
        )
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def answer(self, request_id: Any) -> Any:
        """The answer to ``request_id`` (reading on until it comes)."""
        while request_id not in self.answers:
            if not await self.read():
                log = (await self.stderr).decode(errors="replace")
                raise AssertionError(
                    f"the server ended (exit code {await self.process.wait()}) "
                    f"without answering {request_id!r}:\n{log[-3000:]}"
                )
        return self.answers[request_id]

    async def read(self) -> bool:
        """Read one line (``False`` at the end of stdout)."""
        try:
            line = await asyncio.wait_for(self.stdout.readline(), self.timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"no line from the server within {self.timeout} s") from None
        if not line:
            return False
        self.lines.append(line)
        assert line.endswith(b"\n"), f"not one whole line: {line[:200]!r}"
        message = parse_strict(line)
        for item in message if isinstance(message, list) else [message]:  # a batch's answer
            if "method" in item:
                self.notes.append(item)
            else:
                assert item["id"] not in self.answers, f"answered twice: {line[:200]!r}"
                self.answers[item["id"]] = item
        return True

    async def end(self, *, close: bool = True) -> tuple[int, str]:
        """Close stdin (or not: after a signal), read what is left; the exit code and
        everything on stderr."""
        if close:
            self.stdin.close()
        while await self.read():
            pass
        code = await asyncio.wait_for(self.process.wait(), self.timeout)
        return code, (await self.stderr).decode(errors="replace")
