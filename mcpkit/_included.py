"""Views: another app's definitions as an including app shows them (:mod:`mcpkit._compose`).

A view is its origin's definition under a new name or URI: it shares the origin's compiled
schemas and validators, runs the origin's function with a ``Context`` whose ``state`` is the
origin app's own, and is hidden when its source is switched off in the included app. A view of
a view (nested includes) points at the first origin. A subclass of a kind (an MCP Apps view is a
``Resource``) gets a view class mixing in its own behaviour.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from mcpkit._availability import Access
from mcpkit._signatures import Definition
from mcpkit.context import Context, ContextBackend, Lifespans
from mcpkit.prompts import Prompt
from mcpkit.resources import Resource, ResourceTemplate
from mcpkit.tools import Tool

__all__ = ["is_view", "origin_of", "owned_access", "view_class"]


class _OwnedContext(Context):
    """The ``Context`` of an included definition: its ``state`` and ``settings`` are its own
    app's."""

    __slots__ = ("_owner",)

    def __init__(self, scope: ContextBackend, owner: object) -> None:
        super().__init__(scope)
        self._owner = owner

    @property
    def state(self) -> Any:
        """What this definition's own app's lifespan yielded (``None`` without one, or when
        the app was included after the server started: its lifespan never ran there)."""
        states = self._scope.state
        return states.of.get(self._owner) if type(states) is Lifespans else None

    @property
    def settings(self) -> Any:
        """This definition's own app's settings (``None`` when it has none)."""
        owner: Any = self._owner  # the App that declared the definition
        return owner.settings


def _owned(context: Context | None, owner: object) -> Context | None:
    return None if context is None else _OwnedContext(context._scope, owner)


class _View(Definition):
    """What every view adds to its kind: where it comes from, its own context, its switches."""

    origin: Any  # the definition as its app declared it (never a view)
    owner: Any  # the App that declared ``origin``
    source: Any  # what the view shows: a definition of ``source_app``'s registry (maybe a view)
    source_app: Any

    def invoke(
        self, kwargs: dict[str, Any], context: Context | None, workers: Any
    ) -> Coroutine[Any, Any, Any]:
        return super().invoke(kwargs, _owned(context, self.owner), workers)

    def off_upstream(self) -> bool:
        return self.source in self.source_app.switches.off

    @property
    def _parameters(self) -> Any:  # shared with the origin
        return self.origin._parameters


class _IncludedTool(_View, Tool):
    @property
    def _compiled(self) -> Any:
        return self.origin._compiled

    @property
    def definition(self) -> dict[str, Any]:
        published = self.__dict__.get("_published")
        if published is None:
            published = _renamed(self, "name", self.name)
            if self.ui != self.origin.ui:  # its MCP Apps view has a prefixed URI here
                meta = published["_meta"]
                published["_meta"] = {**meta, "ui": {**meta["ui"], "resourceUri": self.ui}}
        return published

    @property
    def timeout(self) -> float | None:  # type: ignore[override]
        """The tool's own timeout, else its app's ``tool_timeout`` (else the server's)."""
        own: float | None = self.origin.timeout
        return own if own is not None else self.owner.options.tool_timeout


class _IncludedPrompt(_View, Prompt):
    @property
    def _schema(self) -> Any:
        return self.origin._schema

    @property
    def definition(self) -> dict[str, Any]:
        return _renamed(self, "name", self.name)


class _IncludedResource(_View, Resource):
    pass


class _IncludedTemplate(_View, ResourceTemplate):
    @property
    def _adapter(self) -> Any:
        return self.origin._adapter


_VIEWS: dict[type, type] = {  # each kind's view class; subclasses' are added when first met
    Tool: _IncludedTool,
    Prompt: _IncludedPrompt,
    Resource: _IncludedResource,
    ResourceTemplate: _IncludedTemplate,
}


def _renamed(view: Any, key: str, value: str) -> dict[str, Any]:
    """The origin's published definition under the view's name (made once)."""
    cached: dict[str, Any] | None = view.__dict__.get("_published")
    if cached is None:
        cached = {**view.origin.definition, key: value}
        view.__dict__["_published"] = cached
    return cached


def owned_access(access: Access, owner: object) -> Access:
    """``access`` with its ``visible`` predicate asked with the owner app's context."""
    visible = access.visible
    if visible is None:
        return access

    def owned_visible(ctx: Context) -> bool:
        return visible(_OwnedContext(ctx._scope, owner))

    return Access(access.scopes, owned_visible, access.tags)


def is_view(definition: object) -> bool:
    """Whether ``definition`` comes from an included app."""
    return isinstance(definition, _View)


def origin_of(definition: Any) -> Any:
    return definition.origin if isinstance(definition, _View) else definition


def view_class(kind: type) -> type:
    """The class of a view of a ``kind`` definition: its kind's view class, mixed with ``kind``
    itself when that is a subclass (so an MCP Apps view keeps its own reading)."""
    view = _VIEWS.get(kind)
    if view is None:
        base = next(_VIEWS[cls] for cls in kind.__mro__ if cls in _VIEWS)
        view = _VIEWS[kind] = type(base.__name__, (base, kind), {})
    return view
