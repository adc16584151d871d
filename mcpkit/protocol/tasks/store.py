"""The task record, its wire shapes, and where records are kept (:class:`TaskStore`).

:class:`MemoryTaskStore` keeps them in this process; a store shared by several server
processes implements the same methods (``create`` must make the record readable by every
process before it returns: the ``CreateTaskResult`` is sent right after). Every change goes
through :meth:`TaskStore.change`, a compare-and-set on the record's ``version``: two writers
(the process running a task, a replica answering ``tasks/update`` or ``tasks/cancel``) never
overwrite each other's change.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

__all__ = [
    "STOPPED",
    "TERMINAL",
    "MemoryTaskStore",
    "Status",
    "TaskRecord",
    "TaskStore",
    "new_task_id",
]

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL = frozenset({"completed", "failed", "cancelled"})
Listener = Callable[["TaskRecord"], None]
# A change to a record: applies itself, ``False`` when there is nothing to change (e.g. the task
# settled meanwhile). It may run more than once, each time on the newest stored record.
Edit = Callable[["TaskRecord"], bool]
# The error of a task whose lease lapsed: the process running it is gone (shared stores).
STOPPED: dict[str, Any] = {"code": -32603, "message": "the server running this task stopped"}


def new_task_id() -> str:
    """An unguessable task id (192 random bits)."""
    import secrets  # not at import: hmac and hashlib come with it (start-up)

    return secrets.token_urlsafe(24)


def _iso(moment: float) -> str:
    stamp = datetime.fromtimestamp(moment, timezone.utc)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


class TaskRecord:
    """One task's state. Terminal states are final: :meth:`settle` ignores later changes."""

    __slots__ = (
        "asked",
        "created_at",
        "error",
        "input_requests",
        "input_responses",
        "keys",
        "owner",
        "poll_interval_ms",
        "result",
        "status",
        "status_message",
        "task_id",
        "ttl_ms",
        "updated_at",
        "version",
    )

    def __init__(self, owner: str | None, ttl_ms: int | None, poll_interval_ms: int) -> None:
        self.task_id = new_task_id()
        self.owner = owner
        self.status: Status = "working"
        self.created_at = self.updated_at = time.time()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.status_message: str | None = None
        self.result: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.input_requests: dict[str, dict[str, Any]] = {}
        self.input_responses: dict[str, dict[str, Any]] = {}
        self.asked = 0
        self.keys: set[str] = set()  # every input request key used (never reused, SEP-2663)
        self.version = 0  # how many changes the store kept (its compare-and-set compares it)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now >= self.created_at + self.ttl_ms / 1000

    def settle(
        self,
        status: Status,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> bool:
        """Move to a terminal status (once; ``False`` when the task had already settled)."""
        if self.terminal:
            return False
        self.status, self.result, self.error = status, result, error
        self.input_requests = {}
        self.touch()
        return True

    def ask(self, key: str | None, method: str, params: dict[str, Any]) -> str:
        """Record an outstanding input request (the task waits for the client); returns its
        key: ``key`` unless this task used it before, else a fresh one."""
        self.asked += 1
        if key is None or key in self.keys:
            key = f"{key or method.split('/')[0]}-{self.asked}"
        self.keys.add(key)
        self.input_requests[key] = {"method": method, "params": params}
        self.status = "input_required"
        self.touch()
        return key

    def answer(self, responses: dict[str, Any]) -> bool:
        """Take the answers to outstanding requests (others are ignored); back to ``working``
        when none is left. ``True`` when something was taken."""
        taken = {
            key: value
            for key, value in responses.items()
            if key in self.input_requests and isinstance(value, dict)
        }
        if not taken or self.terminal:
            return False
        for key in taken:
            del self.input_requests[key]
        self.input_responses.update(taken)
        if not self.input_requests:
            self.status = "working"
        self.touch()
        return True

    def touch(self) -> None:
        self.updated_at = time.time()

    def dump(self) -> dict[str, Any]:
        """Every field, as JSON (a shared store keeps this); ``terminal`` and ``version`` lead,
        for scripts."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields["keys"] = sorted(self.keys)
        return {"terminal": self.terminal, "version": self.version, **fields}

    @classmethod
    def load(cls, fields: dict[str, Any]) -> TaskRecord:
        """The record :meth:`dump` gave."""
        record = cls.__new__(cls)
        record.adopt(fields)
        return record

    def adopt(self, fields: dict[str, Any]) -> None:
        """Take every field of a dumped record (a copy saved by another process)."""
        for name in self.__slots__:
            setattr(self, name, fields[name])
        self.keys = set(fields["keys"])

    def task(self) -> dict[str, Any]:
        """The ``Task`` fields (what ``CreateTaskResult`` carries)."""
        wire: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.updated_at),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if self.status_message is not None:
            wire["statusMessage"] = self.status_message
        return wire

    def detailed(self) -> dict[str, Any]:
        """The ``DetailedTask`` (``tasks/get``, ``notifications/tasks``)."""
        wire = self.task()
        if self.status == "completed":
            wire["result"] = self.result
        elif self.status == "failed":
            wire["error"] = self.error
        elif self.status == "input_required":
            wire["inputRequests"] = dict(self.input_requests)
        return wire


class TaskStore(Protocol):
    """Where task records live (in memory here; Redis-backed stores implement the same)."""

    @property
    def missing(self) -> str:
        """Why a task id may be unknown, as ``-32602`` says it (after "unknown task 'id'")."""

    async def create(self, record: TaskRecord) -> None:
        """Keep a new record; readable by :meth:`get` when this returns."""

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        """The record, or ``None`` when unknown, expired, or another owner's."""

    async def change(self, record: TaskRecord, edit: Edit) -> bool:
        """Apply ``edit`` to ``record`` and keep it, unless the stored record changed since
        ``record`` was read: then ``record`` takes the stored fields and ``edit`` runs again
        (a compare-and-set on :attr:`TaskRecord.version`). Tells the watchers; ``False`` when
        ``edit`` had nothing to change or the record is gone (expired, or the store lost it)."""

    def watch(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every saved (or expired) record; returns the undo."""

    @property
    def lease_s(self) -> float | None:
        """Seconds a task's lease lasts (``None``: no lease; the store lives and dies with the
        only process that runs tasks). A task whose lease lapses reads ``failed``
        (:data:`STOPPED`): the process running it stopped renewing it."""

    async def renew(self, task_ids: list[str]) -> list[str]:
        """Extend the lease of tasks this process runs (called every ``lease_s / 3``); returns
        those whose record is gone (expired, or the store lost it): their work must stop."""


class MemoryTaskStore:
    """Task records in a dict of this process; expired ones are dropped when met and on
    every :meth:`create`."""

    def __init__(self) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._listeners: list[Listener] = []

    async def create(self, record: TaskRecord) -> None:
        self._sweep()
        self._records[record.task_id] = record
        self._tell(record)

    async def get(self, task_id: str, owner: str | None) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is None or record.owner != owner:
            return None
        if record.expired(time.time()):
            self._drop(record)
            return None
        return record

    async def change(self, record: TaskRecord, edit: Edit) -> bool:
        stored = self._records.get(record.task_id)
        if stored is None:
            return False
        if stored is not record and stored.version != record.version:
            record.adopt(stored.dump())  # a copy read before the last change: take it
        if not edit(record):
            return False
        record.version += 1
        self._records[record.task_id] = record
        self._tell(record)
        return True

    def watch(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unwatch() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unwatch

    lease_s = None  # one process: it cannot outlive the tasks it runs
    missing = "not found or expired"

    async def renew(self, task_ids: list[str]) -> list[str]:
        """Nothing to renew (see :attr:`TaskStore.lease_s`); nothing is lost but by expiry,
        which tells the watchers (the runner stops the work)."""
        return []

    def __len__(self) -> int:
        return len(self._records)

    def _sweep(self) -> None:
        now = time.time()
        for record in [r for r in self._records.values() if r.expired(now)]:
            self._drop(record)

    def _drop(self, record: TaskRecord) -> None:
        del self._records[record.task_id]
        if record.settle("failed", error={"code": -32602, "message": "Task has expired"}):
            record.version += 1
        self._tell(record)

    def _tell(self, record: TaskRecord) -> None:
        for listener in list(self._listeners):
            listener(record)
