"""Smoke-test an installed ``mcpkit`` command over a real pipe (used by .ci/run).

Usage: python scripts/smoke_stdio.py PATH/TO/mcpkit

Starts ``mcpkit run examples/build_app.py:app``, performs the handshake, lists and calls the
seed's tool, checks the answers, closes stdin and expects a prompt exit 0.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 20


def exchange(process: subprocess.Popen[bytes], message: dict[str, Any]) -> dict[str, Any]:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"no answer to {message['method']}")
    answer: dict[str, Any] = json.loads(line)
    return answer


def main(command: str) -> None:
    process = subprocess.Popen(
        [command, "run", "examples/build_app.py:app"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    init = exchange(
        process,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "smoke", "version": "1"},
            },
        },
    )
    assert init["result"]["serverInfo"] == {"name": "builder", "version": "1.0.0"}, init
    listed = exchange(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert [t["name"] for t in listed["result"]["tools"]] == ["build-app", "lint-check"], listed
    called = exchange(
        process,
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "build-app",
                "arguments": {"project_dir": "./app", "configuration": "Release", "arch": "arm64"},
            },
        },
    )
    expected = {"exit_code": 0, "output": "app-release-arm64.pkg"}
    assert called["result"]["structuredContent"] == expected, called
    assert process.stdin is not None
    process.stdin.close()
    code = process.wait(TIMEOUT)
    assert process.stderr is not None
    stderr = process.stderr.read().decode()
    assert code == 0, (code, stderr)
    assert "waiting for a client on stdin" in stderr, stderr
    print("stdio smoke test: handshake, tools/list, tools/call and clean exit all fine")


if __name__ == "__main__":
    main(sys.argv[1])
