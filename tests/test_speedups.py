"""``mcpkit._speedups``: every use of an interpreter internal, feature-detected, and optional.

Its users' tests (test_eager_tasks, test_workers, test_stdio_flow) run with and without it through
the ``speedups`` fixture; here: that each speed-up applies where it should and steps aside
where what it needs is missing, and that mcpkit serves as before when the module is gone.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from typing import Any

import pytest

from mcpkit import _speedups

BARE_SERVER = """
import sys
sys.modules["mcpkit._speedups"] = None  # as if the file were deleted: importing it fails
from mcpkit import App, _eager_tasks, _workers
from mcpkit.transports import stdio
app = App("bare", "1")

@app.tool
def add(a: int, b: int) -> int:
    '''Adds, in a worker thread.'''
    return a + b

@app.tool
async def public_path_only() -> bool:
    '''Whether mcpkit runs without its speed-ups.'''
    return _eager_tasks._speedups is None and _workers._speedups is None

app.run()
"""


class _OwnWayLoop(asyncio.SelectorEventLoop):
    """Schedules ``call_soon`` callbacks its own way: its ready queue says nothing."""

    def call_soon(  # type: ignore[override]
        self, callback: Any, *args: Any, context: Any = None
    ) -> Any:
        return self.call_later(0, callback, *args, context=context)


def test_each_speed_up_applies_where_python_has_what_it_needs() -> None:
    asyncio_loop, own_way = asyncio.new_event_loop(), _OwnWayLoop()
    try:
        spare = _speedups.spare_starter(asyncio_loop)
        assert (spare is not None) == (sys.version_info >= (3, 11))  # needs a task's context
        if spare is not None:
            spare.close()
        assert _speedups.plain_loop(asyncio_loop) is True
        assert _speedups.idle(asyncio_loop) is True
        asyncio_loop.call_soon(lambda: None)
        assert (_speedups.idle(asyncio_loop), _speedups.has_ready(asyncio_loop)) == (False, True)
        assert _speedups.plain_loop(own_way) is False
    finally:
        asyncio_loop.close()
        own_way.close()


def test_a_speed_up_steps_aside_when_the_internals_it_reads_are_not_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.new_event_loop()
    try:
        monkeypatch.setattr(_speedups, "_CAN_SPARE", False)  # no asyncio.tasks._enter_task
        assert _speedups.spare_starter(loop) is None
        monkeypatch.setattr(loop, "_ready", list(loop._ready))  # type: ignore[attr-defined]
        assert (_speedups.plain_loop(loop), _speedups.idle(loop)) == (False, False)
    finally:
        loop.close()


def test_reads_from_asyncio_s_own_read_pipe_stay_under_the_mmap_threshold() -> None:
    async def read_pipe_size() -> tuple[bool, int, bytes]:
        received = bytearray()

        class Sink(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                received.extend(data)

        reading, writing = os.pipe()
        with open(reading, "rb", buffering=0) as stream:
            transport, _ = await asyncio.get_running_loop().connect_read_pipe(Sink, stream)
            try:
                applied = _speedups.small_reads(transport)
                os.write(writing, b"line\n")
                os.close(writing)
                while len(received) < 5:
                    await asyncio.sleep(0)
                return applied, transport.max_size, bytes(received)  # type: ignore[attr-defined]
            finally:
                transport.close()

    assert asyncio.run(read_pipe_size()) == (True, 64 * 1024, b"line\n")
    assert _speedups.small_reads(asyncio.Transport()) is False  # not asyncio's read pipe


def _exchange(process: subprocess.Popen[bytes], message: dict[str, Any]) -> Any:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()
    if "id" not in message:
        return None
    return json.loads(process.stdout.readline())


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _answer(request_id: int, text: str, value: Any) -> dict[str, Any]:
    result = {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"result": value},
        "isError": False,
    }
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def test_without_the_module_mcpkit_serves_the_same_answers() -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    process = subprocess.Popen(
        [sys.executable, "-c", BARE_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    watchdog = threading.Timer(60, process.kill)  # a hung server fails the test, not CI
    watchdog.start()
    try:
        assert _exchange(process, initialize)["result"]["serverInfo"] == {
            "name": "bare",
            "version": "1",
        }
        _exchange(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert _exchange(process, _call(2, "add", {"a": 2, "b": 3})) == _answer(
            2, '{"result":5}', 5
        )
        assert _exchange(process, _call(3, "public_path_only", {})) == _answer(
            3, '{"result":true}', True
        )
    finally:
        watchdog.cancel()
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(30) == 0
        assert process.stdout is not None
        process.stdout.close()


CODEC_PROBE = """
import sys
import mcpkit, mcpkit._codec
loaded = "to_json" in vars(mcpkit._codec)
print(sorted(m for m in sys.modules if m.startswith("pydantic_core")), loaded)
mcpkit._codec.to_json
print(hasattr(mcpkit._codec, "__getattr__"))  # gone once loaded: reads of its names specialise
before = sorted(m for m in sys.modules if m.startswith("pydantic_core"))
import pydantic_core
from pydantic import TypeAdapter
try:
    TypeAdapter(int).validate_python("x", strict=True)
except mcpkit._codec.ValidationError as exc:
    caught = type(exc).__name__
print(before)
print(pydantic_core._pydantic_core is sys.modules["pydantic_core._pydantic_core"])
print(pydantic_core.to_json is mcpkit._codec.to_json, caught)
loader = pydantic_core.__loader__
print(type(loader).__name__, pydantic_core.__spec__.loader is loader)
print([type(finder).__name__ for finder in sys.meta_path if type(finder).__name__ == "_Attach"])
"""


def test_the_codec_loads_on_first_use_without_pydantic_cores_package_init() -> None:
    """Nothing at ``import mcpkit``; the compiled module alone at the first read of a name; the
    package imported later is whole and shares it."""
    out = subprocess.run(
        [sys.executable, "-c", CODEC_PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == [
        "[] False",
        "False",
        "['pydantic_core._pydantic_core']",
        "True",
        "True ValidationError",
        "SourceFileLoader True",
        "[]",
    ]


def test_the_codec_comes_from_the_package_once_it_is_imported() -> None:
    """pydantic_core already imported (as in this process): nothing is loaded again."""
    import pydantic_core

    assert _speedups.pydantic_core_extension() is None
    from mcpkit import _codec

    assert _codec.ValidationError is pydantic_core.ValidationError
    assert _codec.from_json is pydantic_core.from_json


RACE_PROBE = """
import importlib.machinery, threading, time
from mcpkit import _codec
loading = threading.Event()
create_module = importlib.machinery.ExtensionFileLoader.create_module
def slow_create_module(loader, spec):
    if spec.name == "pydantic_core._pydantic_core" and not loading.is_set():
        loading.set()  # the other thread imports pydantic now,
        time.sleep(0.3)  # while this one is loading the compiled module
    return create_module(loader, spec)
importlib.machinery.ExtensionFileLoader.create_module = slow_create_module
def package_import():
    loading.wait(30)
    import pydantic
threads = [threading.Thread(target=lambda: _codec.to_json), threading.Thread(target=package_import)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
import pydantic, pydantic_core
try:
    pydantic.TypeAdapter(int).validate_python("x", strict=True)
except _codec.ValidationError:
    print(_codec.ValidationError is pydantic_core.ValidationError,
          _codec.to_json is pydantic_core.to_json)
"""


def test_pydantic_imported_while_the_codec_loads_shares_its_compiled_module() -> None:
    """The codec loads on first use, which may be while another thread imports pydantic (the
    warm-up's compile thread, a tool): that thread waits, the compiled module is loaded once,
    and pydantic's validation errors are the codec's ``ValidationError``."""
    out = subprocess.run(
        [sys.executable, "-c", RACE_PROBE], capture_output=True, text=True, timeout=60
    )
    assert (out.returncode, out.stdout) == (0, "True True\n"), out.stderr
