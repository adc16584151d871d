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
business (``protocol.server``). A new method is a ``MethodSpec`` in its feature's ``METHODS``.
"""

from __future__ import annotations

from mcpkit.protocol.methods import (
    completion,
    lifecycle,
    prompts,
    resources,
    subscriptions,
    tasks,
    tools,
)
from mcpkit.protocol.methods.failures import cancelled_for_real, protocol_error_in
from mcpkit.protocol.methods.lifecycle import capabilities
from mcpkit.protocol.methods.resources import read_uri
from mcpkit.protocol.methods.spec import Handler, MethodSpec, Runtime

__all__ = [
    "HANDLERS",
    "Handler",
    "MethodSpec",
    "Runtime",
    "cancelled_for_real",
    "capabilities",
    "protocol_error_in",
    "read_uri",
]


HANDLERS: dict[str, MethodSpec] = {
    **lifecycle.METHODS,
    **tools.METHODS,
    **resources.METHODS,
    **prompts.METHODS,
    **completion.METHODS,
    **subscriptions.METHODS,
    **tasks.METHODS,
}
"""Every MCP method mcpkit serves (``initialize`` is the session's own business)."""
