"""Writers that race on one task record, and records whose process or whose key goes away:
the compare-and-set every store change is, the runner stopping work whose record is gone, and
the sweepers finalising tasks whose process died (one of them, once)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from redis_support import RedisServer
from test_fleet_contract import (  # noqa: F401 - the fixtures
    WAIT_S,
    Member,
    fleet_kind,
    lapse,
    members,
    redis_server,
    run,
)

from mcpkit.protocol.fleet.redis_store import RedisTaskStore
from mcpkit.protocol.tasks.runner import Tasks
from mcpkit.protocol.tasks.store import TaskRecord

QUESTION = {"message": "Your name?", "requestedSchema": {"type": "object"}}
ANSWER = {"action": "accept", "content": {"name": "Ada"}}
STOPPED = {"code": -32603, "message": "the server running this task stopped"}


def asking(record: TaskRecord) -> bool:
    record.ask("name", "elicitation/create", QUESTION)
    return True


def answering(record: TaskRecord) -> bool:
    return record.answer({"name": ANSWER})


def progress(record: TaskRecord) -> bool:
    record.status_message = "halfway"
    record.touch()
    return True


def endless(stopped: asyncio.Event) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A task's work that runs until cancelled, then sets ``stopped``."""

    async def work() -> dict[str, Any]:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()
        return {}

    return work


def test_the_runners_change_and_an_answer_read_before_it_both_land(
    fleet_kind: tuple[str, str],  # noqa: F811
) -> None:
    """Regression: ``tasks/update`` through b, on a record read before the runner's progress,
    used to overwrite that progress (the runner's next save, the answer)."""

    async def scenario(a: Member, b: Member) -> None:
        for answer_first in (False, True):
            runner = TaskRecord(None, 60_000, 1_000)
            await a.store.create(runner)
            assert await a.store.change(runner, asking)
            via_b = await b.store.get(runner.task_id, None)
            assert via_b is not None
            writes = [(a, runner, progress), (b, via_b, answering)]
            for member, record, edit in writes[::-1] if answer_first else writes:
                assert await member.store.change(record, edit)
            for member in (a, b):
                read = await member.store.get(runner.task_id, None)
                assert read is not None
                assert read.detailed() | {"createdAt": "", "lastUpdatedAt": ""} == {
                    "taskId": runner.task_id,
                    "status": "working",
                    "statusMessage": "halfway",
                    "createdAt": "",
                    "lastUpdatedAt": "",
                    "ttlMs": 60_000,
                    "pollIntervalMs": 1_000,
                }
                assert (read.input_responses, read.version) == ({"name": ANSWER}, 3)

    run(fleet_kind, scenario)


def test_a_change_with_nothing_to_change_keeps_nothing(fleet_kind: tuple[str, str]) -> None:  # noqa: F811
    async def scenario(a: Member, b: Member) -> None:
        record = TaskRecord(None, 60_000, 1_000)
        await a.store.create(record)
        assert not await b.store.change(record, answering)  # nothing asked: nothing taken
        read = await b.store.get(record.task_id, None)
        assert read is not None
        assert (read.status, read.version) == ("working", 0)

    run(fleet_kind, scenario)


def test_the_work_of_a_task_whose_redis_record_expires_is_cancelled(
    redis_server: RedisServer,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPKIT_TASK_LEASE_S", "0.3")  # renewed (and checked) every 0.1 s

    async def scenario(a: Member, b: Member) -> None:
        tasks = Tasks(a.store)
        stopped = asyncio.Event()
        work = endless(stopped)
        handle = await tasks.create(None, 500, 100)  # its record lives 0.5 s
        tasks.launch(handle, work)
        await asyncio.wait_for(stopped.wait(), WAIT_S)
        assert await b.store.get(handle.record.task_id, None) is None
        await tasks.close()

    run(("redis", redis_server.url), scenario)


def test_a_replica_that_resubscribes_stops_the_work_of_its_tasks_settled_meanwhile(
    redis_server: RedisServer,  # noqa: F811
) -> None:
    """A replica cut off from Redis misses what was published meanwhile; when it resubscribes
    it re-reads the tasks it runs, and stops the work of those another replica settled."""

    async def scenario(a: Member, b: Member) -> None:
        assert isinstance(a.store, RedisTaskStore)
        tasks = Tasks(a.store)
        stopped = asyncio.Event()
        work = endless(stopped)
        handle = await tasks.create(None, 60_000, 100)
        tasks.launch(handle, work)
        await settled_unheard(redis_server, handle.record)  # b's sweep, while a was away
        assert not stopped.is_set()
        await a.store.resync()  # what a's subscriber does when it is back
        await asyncio.wait_for(stopped.wait(), WAIT_S)
        read = await b.store.get(handle.record.task_id, None)
        assert read is not None
        assert (read.status, read.error) == ("failed", STOPPED)
        await tasks.close()

    run(("redis", redis_server.url), scenario)


async def settled_unheard(server: RedisServer, record: TaskRecord) -> None:
    """Write ``record`` settled ``failed`` (:data:`STOPPED`) into Redis, published to nobody."""
    import redis.asyncio as aioredis

    copy = TaskRecord.load(record.dump())
    copy.settle("failed", error=dict(STOPPED))
    copy.version += 1
    client = aioredis.from_url(server.url)
    await client.set(f"mcpkit:task:{record.task_id}", json.dumps(copy.dump()), keepttl=True)
    await client.aclose()


def test_one_sweeper_finalises_a_lapsed_task_and_every_member_hears_it_once(
    redis_server: RedisServer,  # noqa: F811
) -> None:
    async def scenario(a: Member, b: Member) -> None:
        heard: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}
        sentinel = TaskRecord(None, 60_000, 1_000)
        done = {"a": asyncio.Event(), "b": asyncio.Event()}

        def watcher(name: str) -> Any:
            def watch(record: TaskRecord) -> None:
                if record.task_id == sentinel.task_id and record.terminal:
                    done[name].set()
                elif record.terminal:
                    heard[name].append(record.detailed())

            return watch

        a.store.watch(watcher("a"))
        b.store.watch(watcher("b"))
        record = TaskRecord(None, 60_000, 1_000)
        await a.store.create(record)
        await lapse(redis_server, record.task_id)
        await make_lapsed_now(redis_server, record.task_id)
        sweepers = [m.store for m in (a, b) if isinstance(m.store, RedisTaskStore)]
        await asyncio.gather(*(s.sweep() for s in sweepers))  # both at once
        await a.store.create(sentinel)  # published after any second finalisation would be
        assert await a.store.change(sentinel, lambda r: r.settle("cancelled"))
        await asyncio.wait_for(asyncio.gather(done["a"].wait(), done["b"].wait()), WAIT_S)
        assert [len(heard["a"]), len(heard["b"])] == [1, 1]
        assert heard["a"] == heard["b"]
        assert heard["a"][0]["status"] == "failed"
        assert heard["a"][0]["error"] == STOPPED
        assert [await s.sweep() for s in sweepers] == [0, 0]  # finalised: out of the index

    run(("redis", redis_server.url), scenario)


async def make_lapsed_now(server: RedisServer, task_id: str) -> None:
    """The sweepers' index says the lease ended (as the clock passing its end would)."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(server.url)
    await client.zadd("mcpkit:leases", {task_id: 0})
    await client.aclose()
