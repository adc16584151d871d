"""The MCP methods mcpkit serves: one module per feature, registered in one table.

- ``lifecycle``: ``ping``, ``logging/setLevel``, ``server/discover``; ``capabilities()``
- ``tools``: ``tools/list``, ``tools/call``
- ``resources``: ``resources/list``, ``resources/templates/list``, ``resources/read``,
  ``resources/subscribe``, ``resources/unsubscribe``
- ``prompts``: ``prompts/list``, ``prompts/get``
- ``completion``: ``completion/complete``
- ``subscriptions``: ``subscriptions/listen``
- ``tasks``: ``tasks/get``, ``tasks/update``, ``tasks/cancel`` (the tasks extension) and how
  ``tools/call`` becomes a task

Shared by them: ``spec`` (the handler contract: :class:`Runtime`, :class:`MethodSpec`),
``params`` (parameter checks), ``pagination``, ``input_required`` (``InputRequiredResult``)
and ``failures`` (what a handler's exception means). ``initialize`` is the session's own
business (``protocol.server``). A new method is a ``MethodSpec`` in its feature's ``METHODS``
and its name in :data:`FEATURES`.

A feature's module is imported the first time one of its methods is looked up
(:class:`MethodTable`), not at start-up: a server whose clients never ask for resources,
prompts, completions, subscriptions or tasks never loads those handlers.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mcpkit.protocol.methods.failures import cancelled_for_real, protocol_error_in
from mcpkit.protocol.methods.lifecycle import capabilities
from mcpkit.protocol.methods.spec import Handler, MethodSpec, Runtime

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

    from mcpkit.protocol.request import RequestContext

__all__ = [
    "FEATURES",
    "HANDLERS",
    "Handler",
    "MethodSpec",
    "MethodTable",
    "Runtime",
    "cancelled_for_real",
    "capabilities",
    "protocol_error_in",
    "read_uri",
]

FEATURES: dict[str, str] = {
    "ping": "lifecycle",
    "logging/setLevel": "lifecycle",
    "server/discover": "lifecycle",
    "tools/list": "tools",
    "tools/call": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resources",
    "resources/read": "resources",
    "resources/subscribe": "resources",
    "resources/unsubscribe": "resources",
    "prompts/list": "prompts",
    "prompts/get": "prompts",
    "completion/complete": "completion",
    "subscriptions/listen": "subscriptions",
    "tasks/get": "tasks",
    "tasks/update": "tasks",
    "tasks/cancel": "tasks",
}
"""Every MCP method mcpkit serves (``initialize`` is the session's own business), and the
feature module (in this package) whose ``METHODS`` hold its :class:`MethodSpec`."""


class MethodTable(dict[str, MethodSpec]):
    """``HANDLERS``: a method's :class:`MethodSpec` by name, its feature's module imported on
    the first lookup (``table[name]``; ``KeyError`` for a method mcpkit does not serve). Once
    loaded, a lookup is a plain ``dict`` one. Iterating, ``len``, ``keys``/``values``/``items``
    load every feature first, so the table reads as the whole of it."""

    def __missing__(self, name: str) -> MethodSpec:
        feature = FEATURES.get(name)
        if feature is None:
            raise KeyError(name)
        self.load(feature)
        return dict.__getitem__(self, name)

    def load(self, feature: str) -> None:
        """Import ``feature``'s module and enter its methods (those not set already)."""
        module = importlib.import_module(f"{__name__}.{feature}")
        for name, spec in module.METHODS.items():
            self.setdefault(name, spec)

    def everything(self) -> MethodTable:
        for feature in dict.fromkeys(FEATURES.values()):
            self.load(feature)
        return self

    def __contains__(self, name: object) -> bool:
        return name in FEATURES or dict.__contains__(self, name)

    def __iter__(self) -> Iterator[str]:
        return dict.__iter__(self.everything())

    def __len__(self) -> int:
        return dict.__len__(self.everything())

    def keys(self) -> dict_keys[str, MethodSpec]:
        return dict.keys(self.everything())

    def values(self) -> dict_values[str, MethodSpec]:
        return dict.values(self.everything())

    def items(self) -> dict_items[str, MethodSpec]:
        return dict.items(self.everything())

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


HANDLERS = MethodTable()
"""Every MCP method mcpkit serves, by name (see :class:`MethodTable`)."""


async def read_uri(runtime: Runtime, ctx: RequestContext, uri: str) -> list[dict[str, Any]]:
    """The contents of one of the app's resources (:func:`.resources.read_uri`, whose module
    is loaded by the first read)."""
    from mcpkit.protocol.methods.resources import read_uri as read

    return await read(runtime, ctx, uri)
