"""Composing apps: ``App.include(other, prefix="notes")``.

An include is registry-level: the including app holds, for each definition of the included
one, a *view*: the same definition under a prefixed name (tools, prompts) or URI (resources and
templates, only with ``uri_prefix``). A view shares its origin's compiled schemas and validators
(nothing is compiled twice) and runs its origin's function with a ``Context`` whose ``state``
is the origin app's own lifespan state. The included app tells its includers of every later
change (``add_*``, ``remove_*``, ``enable``/``disable``, list and resource notifications), so
the including app's registries, and its clients, follow. A view of a view (nested includes)
points at the first origin, so a call crosses one view whatever the depth.

What a view is hidden by: the including app's own switches (its name, URI or the origin's tags)
and whatever hides its source in the included app (``disable`` there, or further down).
The lookups of the protocol core read plain dicts, as for an app without includes: composing
costs nothing per request.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from mcpkit._signatures import is_name
from mcpkit.context import Lifespans
from mcpkit.exceptions import DefinitionError

__all__ = [
    "Include",
    "admit",
    "completer_for",
    "declared_extensions",
    "enter_lifespans",
    "included_apps",
    "is_view",
    "no_lifespan",
    "prefixed_uri",
    "put",
    "refresh_includers",
    "remove",
]

SEPARATOR = "_"
# Compiled by their first use (re's cache), not at every start-up: only include() needs them.
_URI_PREFIX = r"[A-Za-z0-9._~-]+"  # RFC 3986 unreserved: no escaping, no template
_SCHEME = r"[A-Za-z][A-Za-z0-9+.-]*://"

KINDS = {"tool": "_tools", "prompt": "_prompts", "resource": "_resources"}
KINDS["resource template"] = "_templates"


# ----------------------------------------------------------------------------- include


def check_prefix(prefix: object) -> None:
    """A tool-name prefix: characters a tool name may have (MCP 2025-11-25)."""
    fits = isinstance(prefix, str) and len(prefix) <= 126 and is_name(prefix)
    if prefix is not None and not fits:  # 126: room for the separator and a name
        raise DefinitionError(
            f"include: prefix {prefix!r} must be 1-126 characters of A-Z a-z 0-9 _ - . (the "
            "characters of a tool name, MCP 2025-11-25), or None to keep the names"
        )


def check_uri_prefix(uri_prefix: object) -> None:
    if uri_prefix is not None and not (
        isinstance(uri_prefix, str) and re.fullmatch(_URI_PREFIX, uri_prefix)
    ):
        raise DefinitionError(
            f"include: uri_prefix {uri_prefix!r} must be letters, digits, '-', '.', '_' or '~' "
            "(it becomes one URI path segment)"
        )


def prefixed_uri(uri: str, uri_prefix: str, where: str) -> str:
    """``scheme://rest`` -> ``scheme://PREFIX/rest``; ``scheme:///path`` (no authority, as
    ``file:///``) -> ``scheme:///PREFIX/path``. The scheme is kept, so clients that treat a
    scheme specially still do."""
    found = re.match(_SCHEME, uri)
    if found is None:
        raise DefinitionError(
            f"{where}: uri_prefix needs URIs of the form scheme://...; {uri!r} is not (include "
            "this app without uri_prefix)"
        )
    head, rest = found.group(), uri[found.end() :]
    return f"{head}/{uri_prefix}{rest}" if rest.startswith("/") else f"{head}{uri_prefix}/{rest}"


class Include:
    """One ``parent.include(child, prefix=..., uri_prefix=...)``: how the child's keys map
    into the parent's registries, and the views it puts there."""

    def __init__(self, parent: Any, child: Any, prefix: str | None, uri_prefix: str | None):
        self.parent, self.child = parent, child
        self.prefix, self.uri_prefix = prefix, uri_prefix

    def __repr__(self) -> str:
        return f"app {self.child.name!r} (included with prefix {self.prefix!r})"

    def key(self, what: str, key: str) -> str:
        """The parent's key for a child's definition of kind ``what``."""
        if what in ("tool", "prompt"):
            return key if self.prefix is None else f"{self.prefix}{SEPARATOR}{key}"
        if self.uri_prefix is None:
            return key
        return prefixed_uri(key, self.uri_prefix, f"{what} {key!r} of app {self.child.name!r}")

    def view(self, what: str, item: Any, key: str) -> Any:
        """``item`` (a definition of the child's registry) as the parent shows it."""
        from mcpkit._included import origin_of, owned_access, view_class  # views: first include

        mapped = self.key(what, key)
        if what in ("tool", "prompt") and not is_name(mapped):
            raise DefinitionError(
                f"{what} {key!r} of app {self.child.name!r} would be named {mapped!r} "
                f"({len(mapped)} characters) in app {self.parent.name!r}; a {what} name is "
                "1-128 characters of A-Z a-z 0-9 _ - . (MCP 2025-11-25): choose a shorter prefix"
            )
        origin = origin_of(item)
        view: Any = object.__new__(view_class(type(origin)))
        view.__dict__.update(origin.__dict__)
        view.__dict__.pop("_published", None)
        view.origin, view.source, view.source_app = origin, item, self.child
        view.owner = item.owner if is_view(item) else self.child
        view.label = f"{what} {mapped!r} ({origin.label} of app {view.owner.name!r})"
        view.access = owned_access(origin.access, view.owner)
        if what == "tool" or what == "prompt":
            view.name = mapped
            if what == "tool" and item.ui is not None:  # its view's URI here
                view.ui = self.key("resource", item.ui)
        elif what == "resource":
            view.uri = mapped
        else:
            view.uri_template = mapped
            view._uri = type(origin._uri)(mapped)
        return view

    def check(self, what: str, key: str, item: Any) -> None:
        """Refuse (before anything changes) a child's new definition that would clash in the
        parent or above it."""
        admit(self.parent, what, self.key(what, key), self.view(what, item, key))

    def added(self, what: str, key: str, item: Any) -> None:
        put(self.parent, what, self.key(what, key), self.view(what, item, key))

    def removed(self, what: str, key: str) -> None:
        _pop(self.parent, what, self.key(what, key))

    def forward(self, kind: str, uri: str | None) -> None:
        """A change the child announced, announced by the parent too (a resource's URI as the
        parent serves it)."""
        if kind == "resource" and uri is not None:
            if self.uri_prefix is not None:
                if re.match(_SCHEME, uri) is None:
                    return  # no definition the parent serves has this URI
                uri = prefixed_uri(uri, self.uri_prefix, "resource update")
            self.parent.notify_resource_updated(uri)
        else:
            self.parent._changed(kind)


# -------------------------------------------------------------------------- registries


def is_view(definition: object) -> bool:
    """Whether ``definition`` comes from an included app. Views are made by
    :meth:`Include.view`, which imports :mod:`mcpkit._included`: an app that includes none never
    loads it, and until then nothing is a view (nor while another thread runs its import)."""
    check = getattr(sys.modules.get("mcpkit._included"), "is_view", None)
    return check is not None and bool(check(definition))


def admit(app: Any, what: str, key: str, item: Any, hint: str = "") -> None:
    """Refuse a definition whose key is taken in ``app`` or, through the apps that include
    ``app``, above it (checked before anything changes anywhere)."""
    taken = getattr(app, KINDS[what]).get(key)
    if taken is not None:
        if not (is_view(taken) or is_view(item)):
            raise DefinitionError(f"{what} {key!r} is defined twice{hint}")
        raise DefinitionError(
            f"{what} {key!r} is defined twice in app {app.name!r}: {_source(app, taken)} and "
            f"{_source(app, item)}; choose another name or prefix"
        )
    for link in app._includers:
        link.check(what, key, item)


def _source(app: Any, item: Any) -> str:
    return str(item.label) if is_view(item) else f"{item.label} of app {app.name!r}"


def put(app: Any, what: str, key: str, item: Any) -> None:
    """Add an admitted definition to ``app``, and its views to the apps including it."""
    getattr(app, KINDS[what])[key] = item
    app.switches.added(item)
    for link in app._includers:
        link.added(what, key, item)


def remove(app: Any, what: str, key: str) -> None:
    """Remove one of ``app``'s own definitions (``KeyError`` for a view: it comes from an
    included app, which owns it)."""
    item = getattr(app, KINDS[what])[key]
    if is_view(item):
        raise KeyError(
            f"{item.label} comes from an included app: remove it there (or disable it here)"
        )
    _pop(app, what, key)


def _pop(app: Any, what: str, key: str) -> None:
    removed = getattr(app, KINDS[what]).pop(key)
    app.switches.removed(removed)
    for link in app._includers:
        link.removed(what, key)


def refresh_includers(app: Any) -> None:
    """After ``app``'s switches changed: the apps including it decide again which of their
    views are off (they announce it when ``app``'s own announcement reaches them)."""
    for link in app._includers:
        link.parent.switches.refresh(link.parent.definitions())
        refresh_includers(link.parent)


def _entries(app: Any) -> Iterable[tuple[str, str, Any]]:
    """``(kind, key, definition)`` for every definition of ``app``'s registries."""
    for what, attribute in KINDS.items():
        for key, item in getattr(app, attribute).items():
            yield what, key, item


def refuse_include(parent: Any, child: Any) -> None:
    """The includes that cannot work: itself, a cycle, twice, or an app with middleware."""
    if child is parent or parent in included_apps(child):
        raise DefinitionError(
            f"app {parent.name!r} cannot include app {child.name!r}: it would include itself"
        )
    if any(each.child is child for each in parent._includes):
        raise DefinitionError(f"app {child.name!r} is already included in app {parent.name!r}")
    if child.middleware_chain:
        raise DefinitionError(
            f"app {child.name!r} has middleware; an included app's middleware would not run "
            f"(middleware runs around whole requests): register it on app {parent.name!r}"
        )


def include(parent: Any, child: Any, prefix: str | None, uri_prefix: str | None) -> None:
    """Check everything first, then link ``child`` into ``parent`` and add its views."""
    check_prefix(prefix)
    check_uri_prefix(uri_prefix)
    refuse_include(parent, child)
    link = Include(parent, child, prefix, uri_prefix)
    for above in _including(parent):  # every server that will serve it declares them all
        _merged_extensions([*declared_extensions(above).items()], declared_extensions(child))
    entries = list(_entries(child))
    for what, key, item in entries:
        link.check(what, key, item)
    parent._includes.append(link)
    child._includers.append(link)
    for what, key, item in entries:
        link.added(what, key, item)
    for kind in ("tools", "resources", "prompts", "capabilities"):
        parent._changed(kind)


def _including(app: Any) -> list[Any]:
    """``app`` and every app that includes it, directly or not."""
    found = [app]
    for link in app._includers:
        found += [each for each in _including(link.parent) if each not in found]
    return found


# -------------------------------------------------------------------- serving, reading


def included_apps(app: Any) -> list[Any]:
    """Every app ``app`` includes, directly or not, each once, those it includes first (the
    order their lifespans are entered in)."""
    found: dict[int, Any] = {}

    def visit(each: Any) -> None:
        for link in each._includes:
            visit(link.child)
            found.setdefault(id(link.child), link.child)

    visit(app)
    return list(found.values())


@contextlib.asynccontextmanager
async def no_lifespan(app: Any) -> AsyncIterator[None]:
    """The lifespan of an app given none: nothing to start, ``None`` as its state."""
    yield None


async def enter_lifespans(app: Any, stack: contextlib.AsyncExitStack) -> Any:
    """Enter ``app``'s lifespan, after those of the apps it includes (each once, the innermost
    first); they are left in the reverse order. If one fails to start, those already started
    are left at once and the failure propagates (the server does not start)."""
    if not app._includes:
        return await stack.enter_async_context(app.lifespan(app))
    states: dict[Any, Any] = {}
    async with contextlib.AsyncExitStack() as entered:
        for each in [*included_apps(app), app]:
            states[each] = await entered.enter_async_context(each.lifespan(each))
        stack.push_async_callback(entered.pop_all().aclose)
    return Lifespans(states[app], states)


def declared_extensions(app: Any) -> dict[str, dict[str, Any]]:
    """The extensions ``app`` declares: its own and those of the apps it includes."""
    merged = [*(app.options.extensions or {}).items()]
    for each in included_apps(app):
        merged = _merged_extensions(merged, each.options.extensions or {})
    return dict(merged)


def _merged_extensions(
    merged: list[tuple[str, dict[str, Any]]], more: Mapping[str, dict[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    known = dict(merged)
    for key, settings in more.items():
        if key in known and known[key] != settings:
            raise DefinitionError(
                f"extension {key!r} is declared with settings {known[key]!r} and, by an "
                f"included app, {settings!r}; a server declares each extension once"
            )
        if key not in known:
            merged.append((key, settings))
            known[key] = settings
    return merged


def completer_for(app: Any, definition: Any, ref: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The app-level completer that answers for ``definition`` and the ``ref`` it is given:
    an included definition's own app's, with the reference as that app knows it; else
    ``app``'s."""
    if is_view(definition) and definition.owner.completer is not None:
        from mcpkit.prompts import Prompt  # a feature module: loaded on use (app.py)

        origin = definition.origin
        if isinstance(origin, Prompt):
            return definition.owner.completer, {**ref, "name": origin.name}
        return definition.owner.completer, {**ref, "uri": origin.uri_template}
    return app.completer, ref
