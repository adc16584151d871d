"""The task store and notification bus contracts, one body each, run against this process's
memory and against a real Redis (two members of one fleet: what one writes, the other reads)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from features_support import settle
from redis_support import RedisServer
from test_listen import make_app

from mcpkit import ServerOptions
from mcpkit.exceptions import ProtocolError
from mcpkit.protocol.fleet import Bus, MemoryBus, fleet_for
from mcpkit.protocol.tasks.store import MemoryTaskStore, TaskRecord, TaskStore
from mcpkit.testing import Client

WAIT_S = 10.0


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Member:
    def __init__(self, store: TaskStore, bus: Bus) -> None:
        self.store = store
        self.bus = bus


@contextlib.asynccontextmanager
async def members(kind: str, url: str) -> AsyncIterator[tuple[Member, Member]]:
    """Two members of one fleet (in memory: the same store and bus twice)."""
    if kind == "memory":
        alone = Member(MemoryTaskStore(), MemoryBus())
        yield alone, alone
        return
    first, second = fleet_for(url), fleet_for(url)
    assert first is not None
    assert second is not None
    await first.start()
    await second.start()
    try:
        yield Member(first.store, first.bus), Member(second.store, second.bus)
    finally:
        await first.close()
        await second.close()


@pytest.fixture(params=["memory", "redis"])
def fleet_kind(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    if request.param == "memory":
        yield "memory", ""
        return
    server: RedisServer = request.getfixturevalue("redis_server")
    yield "redis", server.url


def run(kind: tuple[str, str], scenario: Any) -> None:
    async def main() -> None:
        async with members(*kind) as (a, b):
            await scenario(a, b)

    asyncio.run(main())


def test_a_created_task_reads_the_same_through_every_member(fleet_kind: tuple[str, str]) -> None:
    async def scenario(a: Member, b: Member) -> None:
        record = TaskRecord("alice", 60_000, 500)
        await a.store.create(record)
        read = await b.store.get(record.task_id, "alice")
        assert read is not None
        assert read.detailed() == record.detailed()
        assert read.detailed()["status"] == "working"
        assert await b.store.get(record.task_id, "mallory") is None
        assert await b.store.get("no-such-task", "alice") is None

    run(fleet_kind, scenario)


def test_a_save_reaches_every_members_watchers(fleet_kind: tuple[str, str]) -> None:
    async def scenario(a: Member, b: Member) -> None:
        seen: list[dict[str, Any]] = []
        arrived = asyncio.Event()

        def watcher(record: TaskRecord) -> None:
            seen.append(record.detailed())
            if record.terminal:
                arrived.set()

        unwatch = b.store.watch(watcher)
        record = TaskRecord(None, None, 1_000)
        await a.store.create(record)
        result = {"content": [], "structuredContent": {"n": 1}}
        assert await a.store.change(record, lambda r: r.settle("completed", result=result))
        await asyncio.wait_for(arrived.wait(), WAIT_S)
        unwatch()
        assert seen[-1] == record.detailed()
        assert seen[-1]["result"] == {"content": [], "structuredContent": {"n": 1}}
        read = await b.store.get(record.task_id, None)
        assert read is not None
        assert read.detailed() == record.detailed()

    run(fleet_kind, scenario)


def test_the_first_terminal_state_wins_on_every_member(fleet_kind: tuple[str, str]) -> None:
    async def scenario(a: Member, b: Member) -> None:
        record = TaskRecord(None, 60_000, 1_000)
        await a.store.create(record)
        through_b = await b.store.get(record.task_id, None)
        assert through_b is not None
        assert await b.store.change(through_b, lambda r: r.settle("cancelled"))
        # a's copy, read before the cancel, tries to complete: it reads the cancel instead
        assert not await a.store.change(record, lambda r: r.settle("completed", result={}))
        assert record.status == "cancelled"
        for member in (a, b):
            read = await member.store.get(record.task_id, None)
            assert read is not None
            assert read.status == "cancelled"

    run(fleet_kind, scenario)


def test_a_published_change_reaches_every_member_once(fleet_kind: tuple[str, str]) -> None:
    async def scenario(a: Member, b: Member) -> None:
        heard: dict[str, list[tuple[str, str | None]]] = {"a": [], "b": []}
        arrived = asyncio.Event()

        def listener(name: str) -> Any:
            def heard_it(kind: str, uri: str | None) -> None:
                heard[name].append((kind, uri))
                if kind == "tools" and (name == "b" or b.bus is a.bus):
                    arrived.set()

            return heard_it

        a.bus.subscribe(listener("a"))
        if b.bus is not a.bus:
            b.bus.subscribe(listener("b"))
        a.bus.publish("resource", "file:///a.txt")
        a.bus.publish("tools", None)
        await asyncio.wait_for(arrived.wait(), WAIT_S)
        expected = [("resource", "file:///a.txt"), ("tools", None)]
        assert heard["a"] == expected
        assert heard["b"] == ([] if b.bus is a.bus else expected)

    run(fleet_kind, scenario)


def test_a_redis_task_whose_lease_lapses_reads_failed(redis_server: RedisServer) -> None:
    async def scenario(a: Member, b: Member) -> None:
        record = TaskRecord(None, 60_000, 1_000)
        await a.store.create(record)
        await a.store.renew([record.task_id])
        alive = await b.store.get(record.task_id, None)
        assert alive is not None
        assert alive.status == "working"
        await lapse(redis_server, record.task_id)
        read = await b.store.get(record.task_id, None)
        assert read is not None
        assert read.detailed()["error"] == {
            "code": -32603,
            "message": "the server running this task stopped",
        }
        assert read.status == "failed"
        again = await a.store.get(record.task_id, None)
        assert again is not None
        assert again.status == "failed"

    run(("redis", redis_server.url), scenario)


async def lapse(server: RedisServer, task_id: str) -> None:
    """The lease's time passes: its key goes (as Redis expiring it would)."""
    import redis.asyncio as aioredis

    client = aioredis.from_url(server.url)
    await client.delete(f"mcpkit:lease:{task_id}")
    await client.aclose()


def test_redis_away_is_minus_32603_naming_the_store(redis_server: RedisServer) -> None:
    async def scenario(a: Member, b: Member) -> None:
        record = TaskRecord(None, 60_000, 1_000)
        await a.store.create(record)
        redis_server.stop()
        with pytest.raises(ProtocolError) as caught:
            await b.store.get(record.task_id, None)
        assert caught.value.to_error() == {
            "code": -32603,
            "message": f"Internal error: the task store (redis at 127.0.0.1:{redis_server.port}) "
            "is unavailable",
        }

    run(("redis", redis_server.url), scenario)


def test_handshake_sessions_of_every_replica_hear_the_global_changes(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCPKIT_STORE", redis_server.url)
    app_a, app_b = make_app(), make_app()

    async def scenario() -> None:
        async with Client(app_a) as a, Client(app_b) as b:
            assert await b.request("resources/subscribe", {"uri": "memo://a"}) == {}
            app_a.notify_resource_updated("memo://a")
            app_a.notify_list_changed("prompts")  # this replica only
            app_a.notify_list_changed("tools", everywhere=True)
            deadline = asyncio.get_running_loop().time() + WAIT_S
            while len(b.notifications) < 2:
                assert asyncio.get_running_loop().time() < deadline, b.notifications
                await asyncio.sleep(0.01)
            assert b.notifications == [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": "memo://a"},
                },
                {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
            ]
            assert [n["method"] for n in a.notifications] == [
                "notifications/prompts/list_changed",
                "notifications/tools/list_changed",
            ]

    asyncio.run(scenario())


def test_alone_a_broadcast_list_change_is_heard_as_a_local_one() -> None:
    app = make_app()

    async def scenario() -> None:
        async with Client(app) as client:
            app.notify_list_changed("tools", everywhere=True)
            app.notify_list_changed("resources")
            await settle()
            assert client.notifications == [
                {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
                {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"},
            ]

    asyncio.run(scenario())


def test_the_store_option_and_the_lease_variable_are_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ValueError, match='store must be "memory" or a redis:// \\(rediss://'):
        ServerOptions(store="postgres://db")
    assert ServerOptions(store="memory").store == "memory"
    monkeypatch.setenv("MCPKIT_STORE", "memcached://x")
    with pytest.raises(ValueError, match="MCPKIT_STORE: not a redis:// URL nor 'memory'"):
        fleet_for(None)
    assert fleet_for("memory") is None
    monkeypatch.setenv("MCPKIT_TASK_LEASE_S", "0")
    with pytest.raises(ValueError, match="MCPKIT_TASK_LEASE_S must be a positive number"):
        fleet_for("redis://127.0.0.1:1/0")
    monkeypatch.setenv("MCPKIT_TASK_LEASE_S", "2.5")
    fleet = fleet_for("redis://127.0.0.1:1/0")
    assert fleet is not None
    assert fleet.store.lease_s == 2.5
