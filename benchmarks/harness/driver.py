"""``Server``: one spawned server, spoken to in newline-delimited JSON-RPC over real pipes."""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from harness.process import READ_TIMEOUT, ROOT, BenchError
from harness.specs import ServerSpec, child_env

PROTOCOL_VERSION = "2025-11-25"


class Server:
    """A spawned server: newline-delimited JSON-RPC over its stdin/stdout, every read bounded."""

    def __init__(self, spec: ServerSpec, tools: int) -> None:
        self.spec = spec
        self.tools = tools
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 (closed in cleanup)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            spec.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=ROOT,
            env=child_env(spec, tools),
            bufsize=0,
        )
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.stdin_fd = self.proc.stdin.fileno()
        self.stdout_fd = self.proc.stdout.fileno()
        self.buffer = bytearray()
        self.next_id = 0

    def fail(self, what: str) -> BenchError:
        """Kill the server and describe what went wrong, with the end of its stderr."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].decode(errors="replace")
        self.cleanup()
        return BenchError(f"{self.spec.name} ({self.tools} tools): {what}\n--- its stderr:\n{tail}")

    def write(self, data: bytes) -> None:
        error = self.write_all(data)
        if error is not None:
            raise self.fail(f"cannot write to its stdin: {error}")

    def write_all(self, data: bytes) -> OSError | None:
        """Write everything (blocking); safe from another thread: an error is returned."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.stdin_fd, view) :]
        except OSError as exc:
            return exc
        return None

    def readline(self, timeout: float = READ_TIMEOUT) -> bytes:
        deadline = 0.0
        while (end := self.buffer.find(b"\n")) < 0:
            if not deadline:
                deadline = time.monotonic() + timeout
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.stdout_fd], [], [], remaining)[0]:
                raise self.fail(f"no complete response within {timeout:.0f} s")
            chunk = os.read(self.stdout_fd, 1 << 16)
            if not chunk:
                raise self.fail(f"closed its stdout (exit code {self.proc.poll()})")
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return line

    def response(self, request_id: int) -> dict[str, Any]:
        """The next response (notifications and server requests are skipped); checks the id."""
        while True:
            message = self.decode(self.readline())
            if "result" in message or "error" in message:
                break
        if message.get("id") != request_id:
            raise self.fail(f"answered id {message.get('id')!r}, expected {request_id}")
        if "error" in message:
            raise self.fail(f"error response to id {request_id}: {message['error']}")
        return message

    def decode(self, line: bytes) -> dict[str, Any]:
        try:
            message = json.loads(line)
        except ValueError:
            raise self.fail(f"wrote a line that is not JSON: {line[:200]!r}") from None
        if not isinstance(message, dict):
            raise self.fail(f"wrote a non-object message: {line[:200]!r}")
        return message

    def request_line(self, method: str, params: dict[str, Any]) -> tuple[int, bytes]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return self.next_id, json.dumps(message, separators=(",", ":")).encode() + b"\n"

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id, line = self.request_line(method, params)
        self.write(line)
        result: dict[str, Any] = self.response(request_id)["result"]
        return result

    def initialize(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "mcpkit-bench", "version": "1"},
            },
        )
        self.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def list_tools(self) -> int:
        """Every page of ``tools/list``; checks the count and returns it."""
        count = 0
        params: dict[str, Any] = {}
        while True:
            result = self.request("tools/list", params)
            count += len(result["tools"])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
            params = {"cursor": cursor}
        if count != self.tools:
            raise self.fail(f"tools/list gave {count} tools, expected {self.tools}")
        return count

    def pin(self, cpus: set[int]) -> None:
        """Every thread of the server onto ``cpus`` (Linux); threads it starts later inherit
        the mask of the thread that starts them."""
        for task in os.listdir(f"/proc/{self.proc.pid}/task"):
            with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
                os.sched_setaffinity(int(task), cpus)

    def peak_rss(self) -> float | None:
        """VmHWM in MiB (Linux); None where /proc is absent."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return None

    def close(self) -> None:
        """Close stdin and wait: a server must exit cleanly when its client goes away."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=READ_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise self.fail("did not exit within 60 s of stdin closing") from None
        if code != 0:
            raise self.fail(f"exited with code {code}")
        self.cleanup()

    def cleanup(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout, self.stderr):
            if stream is not None and not stream.closed:
                stream.close()


def call_line(request_id: int, tool: str) -> bytes:
    """``tool(a=id, b=2*id+1)``: the expected sum, 3*id+1, is known from the id alone."""
    arguments = {"a": request_id, "b": 2 * request_id + 1}
    params = {"name": tool, "arguments": arguments}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"
