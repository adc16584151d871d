"""Who may use a definition, as declared (``scopes``, ``visible``, ``tags``) and as switched at
run time (``App.enable`` / ``App.disable``).

The decision for one request (does this caller see it?) is the protocol core's
(``mcpkit.protocol.access``); this module holds what it decides from: each definition's
checked access options, and the App's switches.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypedDict

from mcpkit._frozen import frozen
from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError

__all__ = [
    "CACHEABLE",
    "NO_ACCESS",
    "Access",
    "AccessOptions",
    "CacheScope",
    "Switches",
    "check_access",
    "check_hint",
    "check_server_access",
    "scopes_of",
]

Visible = Callable[[Context], bool]
CacheScope = Literal["public", "private"]


class AccessOptions(TypedDict, total=False):
    """The access options every decorator takes (tools, resources, templates, prompts).

    ``scopes``: the caller's principal must hold every one (else the definition is hidden from
    it); ``visible(ctx) -> bool``: a sync predicate asked for every list and call (an exception
    hides the definition, and is logged); ``tags``: names for ``App.enable`` / ``App.disable``.
    """

    scopes: Iterable[str] | None
    visible: Visible | None
    tags: Iterable[str] | None


CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
    }
)
"""The methods whose 2026-07-28 results carry ``ttlMs`` and ``cacheScope`` (those the protocol
core marks ``cacheable``; a test holds the two to each other)."""


@frozen
class Access:
    """A definition's declared access: every scope in ``scopes`` is required; ``visible(ctx)``
    must say yes; ``tags`` name it for :meth:`App.enable` / :meth:`App.disable`."""

    scopes: tuple[str, ...] = ()
    visible: Visible | None = None
    tags: frozenset[str] = frozenset()

    @property
    def guarded(self) -> bool:
        """Whether what a caller sees of it can depend on who the caller is."""
        return bool(self.scopes) or self.visible is not None


NO_ACCESS = Access()


_SCOPE_CLAIMS = ("scopes", "scope", "scp")


def scopes_of(principal: Any) -> frozenset[str]:
    """The scopes a principal holds: its first ``scopes``, ``scope`` or ``scp`` claim (a key of
    a mapping, else an attribute), a space-separated string or a list of strings."""
    if principal is None:
        return frozenset()
    for claim in _SCOPE_CLAIMS:
        if isinstance(principal, Mapping):
            value = principal.get(claim)
        else:
            value = getattr(principal, claim, None)
        if value is not None:
            return _scope_set(value)
    return frozenset()


def _scope_set(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, (Mapping, bytes)) or not isinstance(value, Iterable):
        return frozenset()
    return frozenset(item for item in value if isinstance(item, str))


def check_access(options: Mapping[str, Any], where: str) -> Access:
    """The ``scopes``, ``visible`` and ``tags`` options, checked at definition time."""
    scopes, visible, tags = options.get("scopes"), options.get("visible"), options.get("tags")
    if scopes is None and visible is None and tags is None:
        return NO_ACCESS
    if visible is not None and not callable(visible):
        raise DefinitionError(f"{where}: visible must be a function (ctx) -> bool")
    if visible is not None and _is_async(visible):
        raise DefinitionError(
            f"{where}: visible must be a plain (sync) function (ctx) -> bool; it runs for every "
            "list and call, so decide from ctx.principal and the app's state without awaiting"
        )
    found = _strings(scopes, where, "scopes")
    return Access(tuple(dict.fromkeys(found)), visible, frozenset(_strings(tags, where, "tags")))


def _is_async(fn: Callable[..., Any]) -> bool:
    call = getattr(fn, "__call__", None)  # noqa: B004 (a callable object's __call__)
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _strings(value: Any, where: str, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise DefinitionError(f"{where}: {what} must be a list or set of strings, not {value!r}")
    found = list(value)
    if not all(isinstance(item, str) and item and not item.isspace() for item in found):
        raise DefinitionError(f"{where}: every one of {what} must be a non-empty string")
    if what == "scopes" and any(" " in item for item in found):
        raise DefinitionError(f"{where}: a scope cannot contain a space (list each scope)")
    return found


def check_server_access(on_missing_scope: Any, cache: Any) -> None:
    """``ServerOptions``' ``on_missing_scope`` and ``cache`` (cacheable method ->
    ``(ttl_ms, "public" | "private")``); raises ``ValueError``."""
    if on_missing_scope not in ("hide", "challenge"):
        raise ValueError(
            f'on_missing_scope must be "hide" or "challenge", not {on_missing_scope!r}'
        )
    if cache is None:
        return
    if not isinstance(cache, Mapping):
        raise ValueError(f"cache must map method names to (ttl_ms, cache_scope), not {cache!r}")
    for method, hint in cache.items():
        if method not in CACHEABLE:
            raise ValueError(f"cache: {method!r} has no cache hints; use {sorted(CACHEABLE)}")
        if not (isinstance(hint, tuple) and len(hint) == 2):
            raise ValueError(f"cache[{method!r}] must be a tuple (ttl_ms, cache_scope)")
        check_hint(hint[0], hint[1], f"cache[{method!r}]", ValueError)


def check_hint(
    ttl_ms: Any, scope: Any, where: str, error: Callable[[str], Exception] = DefinitionError
) -> None:
    """One cache hint: ``ttl_ms`` an integer >= 0, ``scope`` ``"public"`` or ``"private"``
    (either may be ``None``: not given)."""
    bad_ttl = ttl_ms is not None and (
        not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms < 0
    )
    if bad_ttl:
        raise error(f"{where}: ttl_ms must be an integer of at least 0, not {ttl_ms!r}")
    if scope not in (None, "public", "private"):
        raise error(f'{where}: cache_scope must be "public" or "private", not {scope!r}')


class Switches:
    """The App's ``enable`` / ``disable`` rules and what they switch off.

    A rule names a definition (``("name", x)``) or a tag (``("tag", t)``); the latest rule that
    matches a definition decides whether it is enabled (none: enabled). Rules outlive the
    definitions they match, so one added later obeys them too. ``off`` is the set of disabled
    definitions, kept current, so a request only asks ``definition in off``.
    """

    __slots__ = ("guarded", "off", "restricted", "rules")

    def __init__(self) -> None:
        self.rules: dict[tuple[str, str], bool] = {}
        self.off: set[Any] = set()
        self.guarded = 0  # definitions with scopes or a visible predicate
        # Whether any definition may be hidden from some request (the fast path is no): kept
        # current by each change here (read on every call, so an attribute, not a property).
        self.restricted = False

    def _changed(self) -> None:
        self.restricted = self.guarded > 0 or bool(self.off)

    def added(self, definition: Any) -> None:
        try:
            if definition.access.guarded:
                self.guarded += 1
            if not self._enabled(definition):
                self.off.add(definition)
        finally:  # (even when a rule cannot be read: what was counted is restricted)
            self._changed()

    def removed(self, definition: Any) -> None:
        if definition.access.guarded:
            self.guarded -= 1
        self.off.discard(definition)
        self._changed()

    def switch(
        self, enabled: bool, name: str | None, tags: Iterable[str] | None, every: Iterable[Any]
    ) -> set[Any]:
        """Record the rules of one ``enable``/``disable`` call; return the definitions (of
        ``every``) whose state it changed."""
        targets = [("name", name)] if name is not None else []
        targets += [("tag", tag) for tag in _strings(tags, "enable/disable", "tags")]
        if not targets:
            raise TypeError("enable() and disable() take name=... and/or tags=...")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string, not {name!r}")
        for target in targets:
            self.rules.pop(target, None)  # the latest rule for a target goes last
            self.rules[target] = enabled
        return self.refresh(every)

    def refresh(self, every: Iterable[Any]) -> set[Any]:
        """Decide again which of ``every`` are off; return those whose state changed."""
        before = set(self.off)
        self.off = {definition for definition in every if not self._enabled(definition)}
        self._changed()
        return before ^ self.off

    def _enabled(self, definition: Any) -> bool:
        if definition.off_upstream():  # disabled in the app it is included from
            return False
        names = {definition.name, getattr(definition, "uri", None)}
        names.add(getattr(definition, "uri_template", None))
        tags = definition.access.tags
        for (kind, value), enabled in reversed(self.rules.items()):
            if (value in names) if kind == "name" else (value in tags):
                return enabled
        return True
