"""What an :class:`~mcpkit.App` announces: list and resource changes, completed URL
elicitations; to this process's listeners (the servers serving it, the apps including it) and,
with a shared store, through a bus to every replica's."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from mcpkit import _compose

__all__ = ["Announcer", "Listener"]

Listener = Callable[[str, "str | None"], None]
"""Called with ``(kind, uri)``: ``("tools" | "prompts" | "resources", None)`` when a list
changes, ``("resource", uri)`` when a resource's contents change, ``("capabilities", None)``
when only what the server advertises may change, ``("elicitation", id)`` when a URL
elicitation completes."""


class Announcer:
    """The announcing half of :class:`~mcpkit.App` (a base class: one concern per module)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._broadcasts: list[Listener] = []  # the fleet's buses (shared store servers)
        self._includers: list[_compose.Include] = []  # the apps that include this one

    def notify_resource_updated(self, uri: str) -> None:
        """Tell subscribed clients that ``uri``'s contents changed (safe from any thread); with
        a shared store, the clients of every replica."""
        self._global("resource", uri)

    def notify_list_changed(
        self, kind: Literal["tools", "prompts", "resources"], *, everywhere: bool = False
    ) -> None:
        """Tell listening clients that a list changed; ``everywhere=True``: the clients of every
        replica too (a shared store's bus). Registry changes themselves stay per process."""
        if everywhere:
            self._global(kind, None)
        else:
            self._changed(kind)

    def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client that was sent URL elicitation ``elicitation_id`` (2025-11-25) that
        the flow finished: ``notifications/elicitation/complete``, to that session only. Safe
        from any thread (an OAuth callback route) and, with a shared store, any replica; an id
        no session awaits (unknown, completed, or from 2026-07-28) is ignored."""
        self._global("elicitation", elicitation_id)

    def relay(self, kind: str, uri: str | None) -> None:
        """A change a bus delivers (published by any replica): tell this process's listeners."""
        self._changed(kind, uri)

    def broadcast_to(self, publish: Listener) -> Callable[[], None]:
        """Hand global changes to ``publish`` (a bus, which delivers them to every replica,
        this one included, through :meth:`relay`) instead of this process's listeners."""
        self._broadcasts.append(publish)
        return lambda: self._broadcasts.remove(publish)

    def _global(self, kind: str, uri: str | None) -> None:
        if not self._broadcasts:
            self._changed(kind, uri)
        for publish in list(self._broadcasts):
            publish(kind, uri)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(kind, uri)`` on changes (see :data:`Listener`); returns an
        unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def hand_over(self, successor: Announcer) -> None:
        """Let ``successor`` take this app's place (a reload): whoever listens to this app's
        changes (servers, sessions, a shared store's bus) hears ``successor``'s from now on,
        starting with ``("capabilities", None)`` (what the server advertises may differ)."""
        self._listeners.extend(successor._listeners)
        self._broadcasts.extend(successor._broadcasts)
        successor._listeners, successor._broadcasts = self._listeners, self._broadcasts
        successor._changed("capabilities")

    def _changed(self, kind: str, uri: str | None = None) -> None:
        for listener in list(self._listeners):
            listener(kind, uri)
        for link in self._includers:
            link.forward(kind, uri)
