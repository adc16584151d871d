"""``subscriptions/listen`` (2026-07-28): one request that streams the changes a client asked
for (list changes, resource updates, the status of its tasks) until the client cancels it or
the server shuts down."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from mcpkit.exceptions import InvalidParams
from mcpkit.protocol.access import hidden_uri
from mcpkit.protocol.jsonrpc import notification
from mcpkit.protocol.methods.spec import MethodSpec, Runtime
from mcpkit.protocol.methods.tasks import require_tasks
from mcpkit.protocol.request import RequestContext, caller_key
from mcpkit.protocol.tasks.store import TaskRecord
from mcpkit.protocol.versions import META_SUBSCRIPTION

__all__ = ["METHODS"]


async def _listen(runtime: Runtime, ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Acknowledge, then stream the requested changes until the client cancels (stdio:
    ``notifications/cancelled``; HTTP: it closes the stream), or the server shuts down
    gracefully and answers the listen request itself."""
    wanted = params.get("notifications")
    if not isinstance(wanted, dict):
        raise InvalidParams("Invalid params: 'notifications' must be an object")
    honoured = _honoured(runtime.capabilities(), wanted)
    owner = caller_key(ctx.principal)
    task_ids = await _task_ids(runtime, ctx, wanted, owner)
    if task_ids is not None:
        honoured["taskIds"] = task_ids
    tag = {META_SUBSCRIPTION: ctx.request_id}
    loop = asyncio.get_running_loop()
    outbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def on_change(kind: str, uri: str | None) -> None:
        if kind == "resource" and uri is not None and hidden_uri(runtime.app, ctx, uri):
            return  # the stream must not tell this caller that a hidden resource exists
        message = _listen_message(honoured, kind, uri, tag)
        if message is not None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: so is the stream
                loop.call_soon_threadsafe(outbox.put_nowait, message)

    def on_task(record: TaskRecord) -> None:
        if task_ids and record.task_id in task_ids:
            params = {"_meta": tag, **record.detailed()}
            message = notification("notifications/tasks", params)
            with contextlib.suppress(RuntimeError):  # the loop is gone: so is the stream
                loop.call_soon_threadsafe(outbox.put_nowait, message)

    # Listen before acknowledging: a change right after the ack must not slip through.
    unsubscribe_app = runtime.app.subscribe(on_change)
    unwatch_tasks = runtime.tasks.store.watch(on_task)
    runtime.streams.add(outbox)
    try:
        await ctx.send(
            notification(
                "notifications/subscriptions/acknowledged",
                {"_meta": tag, "notifications": honoured},
            )
        )
        while (message := await outbox.get()) is not None:
            await ctx.send(message)
        return {"_meta": dict(tag)}  # the server is closing: end the stream with a result
    finally:
        runtime.streams.discard(outbox)
        unsubscribe_app()
        unwatch_tasks()


_LIST_FLAGS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}


def _honoured(offered: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    honoured: dict[str, Any] = {
        flag: True for kind, flag in _LIST_FLAGS.items() if wanted.get(flag) and kind in offered
    }
    uris = wanted.get("resourceSubscriptions")
    if isinstance(uris, list) and "resources" in offered:
        honoured["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
    return honoured


async def _task_ids(
    runtime: Runtime, ctx: RequestContext, wanted: dict[str, Any], owner: str | None
) -> list[str] | None:
    """The task ids whose ``notifications/tasks`` the stream carries: the caller's own live
    tasks among those asked (``None``: none asked); ``-32021`` when the request asks without
    declaring the tasks extension."""
    ids = wanted.get("taskIds")
    if ids is None:
        return None
    require_tasks(ctx, "notifications/tasks")
    if not isinstance(ids, list):
        raise InvalidParams("Invalid params: 'notifications.taskIds' must be an array")
    store = runtime.tasks.store
    return [i for i in ids if isinstance(i, str) and await store.get(i, owner) is not None]


def _listen_message(
    honoured: dict[str, Any], kind: str, uri: str | None, tag: dict[str, Any]
) -> dict[str, Any] | None:
    if kind in _LIST_FLAGS and honoured.get(_LIST_FLAGS[kind]):
        return notification(f"notifications/{kind}/list_changed", {"_meta": tag})
    if kind == "resource" and uri in honoured.get("resourceSubscriptions", ()):
        return notification("notifications/resources/updated", {"_meta": tag, "uri": uri})
    return None


METHODS = {"subscriptions/listen": MethodSpec(_listen, handshake=False)}
