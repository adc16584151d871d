"""Two replicas, one Redis: ``mcpkit run --transport http --store redis://...`` twice, and
what a client sees through either one."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from http_support import ACCEPT_BOTH, free_port, modern_headers, sse_events
from redis_support import RedisServer
from tasks_support import META, PLAIN_META

ROOT = Path(__file__).resolve().parent.parent
APP = "tests/fleet_app.py:app"
WAIT_S = 30.0
T = TypeVar("T")
ACK = {
    "resultType": "complete",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fleet", "version": "1"}},
}


class Replica:
    def __init__(self, store: str, marks: Path, lease_s: str = "1") -> None:
        self.port = free_port()
        command = [sys.executable, "-m", "mcpkit", "run", APP, "--transport", "http"]
        command += ["--port", str(self.port), "--store", store]
        env = {**os.environ, "MCPKIT_TASK_LEASE_S": lease_s, "FLEET_MARKS": str(marks)}
        env["MCPKIT_STATE_KEY"] = "fleet-test-key-shared-by-every-replica"
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            until(self.listens, "the replica listens")
        except BaseException:
            self.stop()
            raise

    def listens(self) -> bool:
        assert self.process.poll() is None, "the replica exited"
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
            connection.connect()
            connection.close()
            return True
        except OSError:
            return False

    def ask(
        self, request_id: int, method: str, params: dict[str, Any], name: str, meta: Any = META
    ) -> Any:
        """One request; its JSON-RPC answer."""
        return json.loads(self.raw(request_id, method, params, name, meta))

    def raw(
        self, request_id: int, method: str, params: dict[str, Any], name: str, meta: Any = META
    ) -> str:
        """One request; its JSON-RPC answer as the replica wrote it."""
        body = {"jsonrpc": "2.0", "id": request_id, "method": method}
        body["params"] = {**params, "_meta": meta}
        headers = {"content-type": "application/json", "accept": ACCEPT_BOTH}
        headers.update(modern_headers(method, name))
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT_S)
        try:
            connection.request("POST", "/mcp", json.dumps(body), headers)
            data = connection.getresponse().read()
        finally:
            connection.close()
        return data.decode() if data.startswith(b"{") else sse_events(data)[-1][1]

    def task(self, task_id: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.ask(9, "tasks/get", {"taskId": task_id}, task_id)["result"]
        return answer

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def until(check: Callable[[], T | None], what: str) -> T:
    """Poll (as a client polls a task) until ``check()`` is truthy."""
    deadline = time.monotonic() + WAIT_S
    while not (value := check()):
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)
    return value


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    server = RedisServer(redis_dir)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fleet(tmp_path: Path, redis: RedisServer) -> Iterator[tuple[Replica, Replica, Path]]:
    server = redis
    marks = tmp_path / "marks"
    marks.mkdir()
    replicas: list[Replica] = []
    try:
        replicas.append(Replica(server.url, marks))
        replicas.append(Replica(server.url, marks))
        yield replicas[0], replicas[1], marks
    finally:
        for replica in replicas:
            replica.stop()


def start(replica: Replica, tool: str, arguments: dict[str, Any]) -> str:
    answer = replica.ask(1, "tools/call", {"name": tool, "arguments": arguments}, tool)
    assert answer["result"]["resultType"] == "task"
    task_id: str = answer["result"]["taskId"]
    return task_id


def waiting(replica: Replica, marks: Path, label: str) -> str:
    """A task of ``wait`` started through ``replica``, once its work runs there."""
    task_id = start(replica, "wait", {"label": label})
    until((marks / f"{label}.started").exists, "the task runs")
    assert (marks / f"{label}.started").read_text() == str(replica.process.pid)
    return task_id


def greeting(start_on: Replica, read_on: Replica) -> dict[str, Any]:
    """A ``greet`` task started through one replica, once the other reads its question."""
    task_id = start(start_on, "greet", {})
    return until(status_is(read_on, task_id, "input_required"), "the task asks")


def answer_name(via: Replica, asking: dict[str, Any], name: str) -> Any:
    """``tasks/update`` through ``via``: ``name`` answers the task's one question."""
    [key] = asking["inputRequests"]
    answers = {key: {"action": "accept", "content": {"name": name}}}
    params = {"taskId": asking["taskId"], "inputResponses": answers}
    return via.ask(2, "tasks/update", params, asking["taskId"])


def status_is(replica: Replica, task_id: str, status: str) -> Callable[[], Any]:
    def check() -> Any:
        task = replica.task(task_id)
        return task if task["status"] == status else None

    return check


def test_a_task_started_on_a_is_answered_and_read_through_b(
    fleet: tuple[Replica, Replica, Path],
) -> None:
    a, b, _ = fleet
    asking = greeting(a, b)
    task_id = asking["taskId"]
    [question] = asking["inputRequests"].values()
    assert question["method"] == "elicitation/create"
    assert answer_name(b, asking, "Ada") == {"jsonrpc": "2.0", "id": 2, "result": ACK}
    done = until(status_is(b, task_id, "completed"), "B reads the result")
    assert done["result"]["content"] == [{"type": "text", "text": "Hello, Ada"}]
    assert a.task(task_id) == done


def test_a_cancel_through_b_stops_the_work_running_on_a(
    fleet: tuple[Replica, Replica, Path],
) -> None:
    a, b, marks = fleet
    task_id = waiting(a, marks, "c")
    acked = b.ask(3, "tasks/cancel", {"taskId": task_id}, task_id)
    assert acked == {"jsonrpc": "2.0", "id": 3, "result": ACK}
    until((marks / "c.cancelled").exists, "A cancels the work")
    assert (marks / "c.cancelled").read_text() == str(a.process.pid)
    assert a.task(task_id)["status"] == "cancelled"


def test_a_task_whose_replica_dies_reads_failed_once_its_lease_lapses(
    fleet: tuple[Replica, Replica, Path],
) -> None:
    a, b, marks = fleet
    task_id = waiting(a, marks, "k")
    assert b.task(task_id)["status"] == "working"
    with listening(b, {"taskIds": [task_id]}) as stream:
        a.process.send_signal(signal.SIGKILL)
        a.process.wait()
        heard = next_message(stream)  # B's sweeper finalises it: nobody polls meanwhile
    failed = b.task(task_id)
    assert failed["error"] == {"code": -32603, "message": "the server running this task stopped"}
    assert failed["status"] == "failed"
    wire = {k: v for k, v in failed.items() if k not in ("resultType", "_meta")}
    assert heard == {
        "jsonrpc": "2.0",
        "method": "notifications/tasks",
        "params": {"_meta": LISTEN_META, **wire},
    }


@contextlib.contextmanager
def listening(replica: Replica, wanted: dict[str, Any]) -> Iterator[http.client.HTTPResponse]:
    """An open ``subscriptions/listen`` stream on ``replica``, past its acknowledgement."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen"}
    body["params"] = {"_meta": META, "notifications": wanted}
    headers = {"content-type": "application/json", "accept": ACCEPT_BOTH}
    headers.update(modern_headers("subscriptions/listen"))
    connection = http.client.HTTPConnection("127.0.0.1", replica.port, timeout=WAIT_S)
    try:
        connection.request("POST", "/mcp", json.dumps(body), headers)
        stream = connection.getresponse()
        acknowledged = next_message(stream)
        assert acknowledged["method"] == "notifications/subscriptions/acknowledged"
        assert acknowledged["params"]["notifications"] == wanted
        yield stream
    finally:
        connection.close()


LISTEN_META = {"io.modelcontextprotocol/subscriptionId": "listen-1"}


def test_a_resource_update_published_on_a_reaches_a_listen_stream_on_b(
    fleet: tuple[Replica, Replica, Path],
) -> None:
    a, b, _ = fleet
    with listening(b, {"resourceSubscriptions": ["file:///shared.txt"]}) as stream:
        call = {"name": "touch", "arguments": {"uri": "file:///shared.txt"}}
        touched = a.ask(4, "tools/call", call, "touch")
        assert touched["result"]["content"] == [{"type": "text", "text": "touched"}]
        assert next_message(stream) == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"_meta": LISTEN_META, "uri": "file:///shared.txt"},
        }


def test_the_status_of_a_task_running_on_a_reaches_a_listen_stream_on_b(
    fleet: tuple[Replica, Replica, Path],
) -> None:
    a, b, _ = fleet
    asking = greeting(a, a)
    with listening(b, {"taskIds": [asking["taskId"]]}) as stream:
        answer_name(a, asking, "Cy")
        statuses = [next_message(stream)["params"] for _ in range(2)]
    assert [each["status"] for each in statuses] == ["working", "completed"]
    read = {k: v for k, v in b.task(asking["taskId"]).items() if k not in ("resultType", "_meta")}
    assert statuses[1] == {"_meta": LISTEN_META, **read}
    assert statuses[1]["result"]["content"] == [{"type": "text", "text": "Hello, Cy"}]


def next_message(stream: http.client.HTTPResponse) -> Any:
    """The next SSE event's JSON message."""
    while True:
        line = stream.readline()
        assert line, "the stream ended"
        if line.startswith(b"data:"):
            return json.loads(line[5:])


def test_redis_away_fails_only_what_needs_it_and_the_replicas_reconnect(
    fleet: tuple[Replica, Replica, Path], redis: RedisServer
) -> None:
    a, b, _ = fleet
    task_id = start(a, "wait", {"label": "r"})
    redis.stop()
    store = f"the task store (redis at 127.0.0.1:{redis.port})"
    unavailable = {"code": -32603, "message": f"Internal error: {store} is unavailable"}
    got = b.ask(5, "tasks/get", {"taskId": task_id}, task_id)
    assert got["error"] == unavailable
    call = {"name": "wait", "arguments": {"label": "r2"}}
    assert a.ask(6, "tools/call", call, "wait")["error"] == unavailable
    touched = a.ask(7, "tools/call", {"name": "touch", "arguments": {"uri": "file:///x"}}, "touch")
    assert touched["result"]["content"] == [{"type": "text", "text": "touched"}]
    redis.start()  # the same port, no persistence: the tasks it held are gone
    lost = until(
        lambda: _error_of(b.ask(8, "tasks/get", {"taskId": task_id}, task_id)), "B reconnects"
    )
    assert lost == {
        "code": -32602,
        "message": f"Invalid params: unknown task {task_id!r} "
        "(not found or expired; the store restarted?)",
    }
    again = start(a, "greet", {})
    assert (
        until(status_is(b, again, "input_required"), "B reads the new task")["status"]
        == "input_required"
    )


def _error_of(answer: dict[str, Any]) -> dict[str, Any] | None:
    error = answer.get("error")
    return error if error is not None and error["code"] != -32603 else None


def test_with_aof_a_redis_restart_keeps_the_tasks_and_the_replicas_recover(tmp_path: Path) -> None:
    redis_dir = tmp_path / "redis"
    redis_dir.mkdir()
    server = RedisServer(redis_dir, aof=True)
    server.start()
    replicas: list[Replica] = []
    try:
        # A lease longer than the outage: the replica running the task keeps it.
        replicas += [Replica(server.url, tmp_path, "30"), Replica(server.url, tmp_path, "30")]
        a, b = replicas
        task_id = start(a, "greet", {})
        asking = until(status_is(b, task_id, "input_required"), "B sees the question")
        server.stop()
        server.start()  # same port, same directory: the AOF brings the task back
        again = until(
            lambda: _result_of(b.ask(2, "tasks/get", {"taskId": task_id}, task_id)), "B reconnects"
        )
        assert again == asking
        answer_name(b, asking, "Bo")
        done = until(status_is(b, task_id, "completed"), "A resumes the task")
        assert done["result"]["content"] == [{"type": "text", "text": "Hello, Bo"}]
    finally:
        for replica in replicas:
            replica.stop()
        server.stop()


def _result_of(answer: dict[str, Any]) -> dict[str, Any] | None:
    result: dict[str, Any] | None = answer.get("result")
    return result


def test_500_tasks_over_two_replicas_each_read_through_the_other(
    fleet: tuple[Replica, Replica, Path],
) -> None:
    a, b, _ = fleet
    with ThreadPoolExecutor(8) as pool:
        pairs = list(pool.map(lambda n: _square_both_ways((a, b), n), range(500)))
    for task, direct in pairs:
        assert task == direct
    assert pairs[7][0] == [
        (
            "content",
            '[{"type":"text","text":'
            '"{\\"n\\":7,\\"square\\":49,\\"half\\":3.5,\\"said\\":\\"7² = 49\\"}"}]',
        ),
        ("structuredContent", '{"n":7,"square":49,"half":3.5,"said":"7² = 49"}'),
        ("isError", "false"),
    ]


def _square_both_ways(
    replicas: tuple[Replica, Replica], n: int
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``square(n)`` as a task started through one replica and read through the other, and as
    a direct call: the members of both results, each as the replica wrote it."""
    here, there = replicas if n % 2 else replicas[::-1]
    task_id = start(here, "square", {"n": n})
    done = until(status_is(there, task_id, "completed"), f"task {n} completes")
    assert here.task(task_id) == done  # one terminal state, the same through both
    read = there.raw(9, "tasks/get", {"taskId": task_id}, task_id)
    params = {"name": "square", "arguments": {"n": n}}
    direct = there.raw(n, "tools/call", params, "square", meta=PLAIN_META)
    direct_members = [m for m in members(direct, "result") if m[0] not in ("resultType", "_meta")]
    return members(read, "result", "result"), direct_members


def members(text: str, *path: str) -> list[tuple[str, str]]:
    """The members of the JSON object at ``path`` in ``text``: (name, its exact text)."""
    decoder = json.JSONDecoder()
    start = 0
    for name in path:
        start = dict(_spans(text, start, decoder))[name][0]
    return [(name, text[begin:end]) for name, (begin, end) in _spans(text, start, decoder)]


def _spans(text: str, at: int, decoder: json.JSONDecoder) -> Iterator[tuple[str, tuple[int, int]]]:
    """Each member of the object at ``at``: its name, where its value begins and ends."""
    at = _skip(text, at)
    assert text[at] == "{", text[at:]
    at = _skip(text, at + 1)
    while text[at] != "}":
        name, at = decoder.raw_decode(text, at)
        at = _skip(text, at)
        assert text[at] == ":"
        begin = _skip(text, at + 1)
        _, end = decoder.raw_decode(text, begin)
        yield name, (begin, end)
        at = _skip(text, end)
        if text[at] == ",":
            at = _skip(text, at + 1)


def _skip(text: str, at: int) -> int:
    """Past the JSON whitespace at ``at``."""
    while text[at] in " \t\n\r":
        at += 1
    return at
