"""What tools, resources, templates and prompts share: :class:`Definition`, their one shape
(name, label, published definition, ``compile()``, the call), and signature -> parameters.

Stage one (decoration) only checks the signature's shape; stage two (compile) resolves the
hints, separates the injected ``Context`` parameters and attaches docstring text.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from collections.abc import Callable, Coroutine, Mapping
from functools import cached_property
from typing import Any

from mcpkit import _typing
from mcpkit._availability import NO_ACCESS, Access
from mcpkit._docstrings import parse_docstring
from mcpkit._frozen import frozen
from mcpkit._workers import Workers
from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError
from mcpkit.schema import EMPTY, Param

__all__ = [
    "NAME_PATTERN",
    "Definition",
    "Parameters",
    "check_name",
    "check_options",
    "check_signature",
    "declared_context",
    "is_context",
    "is_name",
    "parameters",
    "resolve_hints",
]

NAME_PATTERN = r"[A-Za-z0-9_.\-]{1,128}"
"""The name rule as a regular expression (``mcpkit.tools.TOOL_NAME`` compiles it);
:func:`is_name` is the same rule without compiling one."""
_NAME_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def is_name(text: str) -> bool:
    """Whether ``text`` is a tool or prompt name: 1-128 of ``A-Z a-z 0-9 _ - .`` (MCP 2025-11-25
    and later). A set, not a regular expression: compiling one was ~0.1 ms of every start-up."""
    return 0 < len(text) <= 128 and _NAME_CHARACTERS.issuperset(text)


def check_name(name: str, where: str, what: str) -> None:
    if not is_name(name):
        raise DefinitionError(
            f"{where}: a {what} name is 1-128 characters of A-Z a-z 0-9 _ - . "
            "(pass name=... to choose another)"
        )


def check_options(options: Mapping[str, object], known: frozenset[str], where: str) -> None:
    """Refuse an option no definition of this kind takes (for callers without a type checker)."""
    unknown = sorted(set(options) - known)
    if unknown:
        raise DefinitionError(
            f"{where}: unknown option(s) {unknown}; the options are {sorted(known)}"
        )


Declared = tuple[tuple[str, Any], ...]
"""A checked signature's parameters, in order: each one's name and default (``EMPTY``: none)."""


def check_signature(fn: Callable[..., Any], where: str, *, explicit: bool = False) -> Declared:
    """Reject signatures no client could call, naming the parameter and the fix; return the
    parameters' names and defaults.

    With an ``explicit`` input schema the function takes what that schema allows: annotations
    are optional and ``**kwargs`` may collect the arguments. A plain function is read from its
    code object (:func:`_plain_parameters`); anything else through ``inspect.signature``.
    """
    plain = _plain_parameters(fn)
    if plain is not None:
        annotations = fn.__annotations__
        for name, _ in plain:
            annotated = annotations.get(name, EMPTY) is not EMPTY
            if annotated or not explicit:
                _check_name(name, annotated, where)
        return plain
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise DefinitionError(f"{where}: cannot read the signature of {fn!r}: {exc}") from exc
    for param in signature.parameters.values():
        if not (explicit and (param.kind is param.VAR_KEYWORD or param.annotation is EMPTY)):
            _check_parameter(param, where)
    return tuple((param.name, param.default) for param in signature.parameters.values())


_NOT_PLAIN = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _plain_parameters(fn: Callable[..., Any]) -> Declared | None:
    """What ``inspect.signature`` reads for a plain function, read straight from its code
    object, ``__defaults__`` and ``__kwdefaults__`` (~10x cheaper: registering 1,000 tools
    spent ~40% of its time building ``Signature`` objects). ``None`` -- let ``inspect`` read it
    -- for anything else: not a plain ``def`` (a method, a ``partial``, a callable object), a
    function with attributes (``__wrapped__`` and ``__signature__`` change what ``inspect``
    reads), and positional-only parameters, ``*args`` or ``**kwargs`` (refused, or accepted
    with an explicit schema, by the general path)."""
    if type(fn) is not types.FunctionType or fn.__dict__:
        return None
    code = fn.__code__
    if code.co_posonlyargcount or code.co_flags & _NOT_PLAIN:
        return None
    count = code.co_argcount
    defaults = fn.__defaults__ or ()
    if len(defaults) > count:  # (assigned by hand): inspect says what it makes of that
        return None
    # the last len(defaults) positional parameters have them, as inspect pairs them
    values = (EMPTY,) * (count - len(defaults)) + defaults
    declared = list(zip(code.co_varnames[:count], values, strict=True))
    if code.co_kwonlyargcount:
        keyword_only = code.co_varnames[count : count + code.co_kwonlyargcount]
        kwdefaults = fn.__kwdefaults__ or {}
        declared += [(name, kwdefaults.get(name, EMPTY)) for name in keyword_only]
    return tuple(declared)


def _check_parameter(param: inspect.Parameter, where: str) -> None:
    name = param.name
    if param.kind is param.VAR_POSITIONAL:
        raise DefinitionError(f"{where}: *{name} cannot be sent by a client; list each argument")
    if param.kind is param.VAR_KEYWORD:
        raise DefinitionError(
            f"{where}: **{name} cannot be described by a schema; list each "
            "argument or take one model/TypedDict parameter"
        )
    if param.kind is param.POSITIONAL_ONLY:
        raise DefinitionError(
            f"{where}: parameter {name!r} is positional-only; clients send "
            "arguments by name, so remove the '/'"
        )
    _check_name(name, param.annotation is not EMPTY, where)


def _check_name(name: str, annotated: bool, where: str) -> None:
    """What a parameter a client sends by name must be: public, and annotated."""
    if name.startswith("_"):
        raise DefinitionError(
            f"{where}: parameter {name!r} starts with '_'; rename it (a "
            "client cannot see private parameters)"
        )
    if not annotated:
        raise DefinitionError(
            f"{where}: parameter {name!r} has no type annotation; add one "
            f"(e.g. '{name}: str') so mcpkit can publish its schema"
        )


def resolve_hints(fn: Callable[..., Any], where: str) -> dict[str, Any]:
    """Evaluate the annotations (forward references, ``from __future__ import annotations``).

    A plain function whose annotations are all objects seen before to evaluate to themselves
    (``int``, an Enum, ``Optional[int]``...: see :func:`_remember_settled`) gets them as they
    are, which is what ``get_type_hints`` would return (Python 3.11+: 3.10 adds ``Optional``
    for a ``None`` default)."""
    annotations = getattr(fn, "__annotations__", None)
    if (
        _SETTLED_HINTS
        and type(fn) is types.FunctionType
        and type(annotations) is dict
        and all(_settled(value) for value in annotations.values())
    ):
        return dict(annotations)
    hints = _evaluated(fn, where)
    if _SETTLED_HINTS and type(annotations) is dict:
        _remember_settled(annotations, hints)
    return hints


_SETTLED_HINTS = sys.version_info >= (3, 11)
_SETTLED: dict[int, Any] = {}  # id -> an annotation object get_type_hints leaves as it is
_SETTLED_SIZE = 4096  # remembered (then forgotten all at once)


def _remember_settled(annotations: dict[str, Any], hints: dict[str, Any]) -> None:
    """Remember the annotations ``get_type_hints`` gave back unchanged: the same object, or an
    equal one of the same type (it rebuilds ``list[int]``). ``None`` (which becomes
    ``NoneType``) and strings (which are evaluated) never are."""
    for name, value in annotations.items():
        hint = hints.get(name, _MISSING)
        if hint is value or (type(hint) is type(value) and hint == value):
            if len(_SETTLED) >= _SETTLED_SIZE:
                _SETTLED.clear()
            _SETTLED[id(value)] = value


def _settled(value: Any) -> bool:
    """``value`` is known to come back from ``get_type_hints`` as it is, or equal: remembered,
    or ``list[T]``/``dict[K, V]``... of such arguments, which ``get_type_hints`` rebuilds the
    same (each ``def`` makes a new ``dict[str, int]``, so these are not remembered by id)."""
    if _SETTLED.get(id(value), _MISSING) is value:
        return True
    return (
        type(value) is types.GenericAlias
        and not value.__unpacked__
        and value.__origin__ in _PLAIN_ORIGINS
        and all(_settled(arg) for arg in value.__args__)
    )


_PLAIN_ORIGINS = frozenset({list, dict, set, frozenset, tuple})  # not Callable: args reshaped
_MISSING = object()


def _evaluated(fn: Callable[..., Any], where: str) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except NameError as exc:
        raise DefinitionError(
            f"{where}: {_unresolved(fn)} cannot be resolved: {exc}; define or "
            "import that name at module level"
        ) from exc
    except TypeError as exc:
        raise DefinitionError(f"{where}: an annotation is not a valid type: {exc}") from exc


def _unresolved(fn: Callable[..., Any]) -> str:
    """Which annotation fails to resolve: 'parameter 'x'', 'the return type' or 'an annotation'."""
    namespace = getattr(inspect.unwrap(fn), "__globals__", {})
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        probe = types.SimpleNamespace(__annotations__={name: annotation}, __globals__=namespace)
        try:
            typing.get_type_hints(probe, include_extras=True)
        except NameError:
            return "the return type" if name == "return" else f"parameter {name!r}"
    return "an annotation"


def is_context(hint: Any) -> bool:
    """``Context``, ``Context | None`` or ``Annotated[Context, ...]``."""
    known = _NOT_CONTEXT.get(id(hint), _MISSING)
    if known is hint:
        return False
    if _is_context(hint):
        return True
    if len(_NOT_CONTEXT) >= _SETTLED_SIZE:
        _NOT_CONTEXT.clear()
    _NOT_CONTEXT[id(hint)] = hint  # the parameter shapes of many tools repeat
    return False


_NOT_CONTEXT: dict[int, Any] = {}  # id -> a hint found not to be the Context


def _is_context(hint: Any) -> bool:
    if _typing.get_origin(hint) is _typing.Annotated:
        hint = _typing.get_args(hint)[0]
    args = _typing.get_args(hint)
    if args and type(None) in args:  # Context | None
        hint = next(a for a in args if a is not type(None))
    return isinstance(hint, type) and issubclass(hint, Context)


def declared_context(fn: Callable[..., Any], annotation: Any) -> bool:
    """Decoration time: is this parameter the ``Context``? An annotation still written as text
    is resolved alone, as compile will resolve it; text that cannot resolve yet is no Context."""
    if isinstance(annotation, str):
        namespace = getattr(inspect.unwrap(fn), "__globals__", {})
        probe = types.SimpleNamespace(__annotations__={"p": annotation}, __globals__=namespace)
        try:
            annotation = typing.get_type_hints(probe, include_extras=True)["p"]
        except Exception:  # a forward reference, or not a type: compile will say which
            return False
    return is_context(annotation)


@frozen
class Parameters:
    """A compiled signature: published parameters, injected ones, return hint, prose.

    ``injected`` lists the ``Context`` and settings parameters, in order, as ``(name, True)``
    for a settings one: what ``invoke`` fills in, in one loop.
    """

    params: list[Param]
    context_names: tuple[str, ...]
    returns: Any
    description: str | None
    injected: tuple[tuple[str, bool], ...] = ()


def parameters(
    fn: Callable[..., Any],
    declared: Declared,
    where: str,
    *,
    publish: bool = True,
    settings_type: Any = None,
) -> Parameters:
    """Resolve a checked signature (:func:`check_signature`) into published and injected
    parameters.

    ``publish=False`` (a tool with an explicit input schema) publishes none of them. A parameter
    annotated with ``settings_type`` (the App's settings class) is injected, like ``Context``.
    """
    hints = resolve_hints(fn, where)
    doc = parse_docstring(fn.__doc__)
    params: list[Param] = []
    context_names: list[str] = []
    injected: list[tuple[str, bool]] = []
    for name, default in declared:
        hint = hints.get(name)
        context = is_context(hint)
        settings = settings_type is not None and hint is settings_type
        if context:
            context_names.append(name)
        if context or settings:
            injected.append((name, settings))
        elif publish:
            params.append(Param(name, hints[name], default, doc.params.get(name)))
    returns, text = hints.get("return", EMPTY), doc.description
    return Parameters(params, tuple(context_names), returns, text, tuple(injected))


class Definition:
    """The shape every tool, resource, template and prompt has (``App.definitions()``).

    ``name``; ``label`` names it in messages (``"tool 'add'"``); ``access`` says who may see
    it (its ``scopes``, ``visible`` and ``tags``); ``definition`` is the dict its ``*/list``
    method publishes; ``compile()`` builds schemas and validators now (raising
    :class:`DefinitionError`); ``invoke()`` runs the function, the one way for all of them.
    """

    blocking = True  # a sync function may block: it runs in a worker thread, off the loop
    listed_in = ""  # the list it is in: "tools", "resources" or "prompts"
    settings_type: Any = None  # the App's settings class (set by App): such parameters are injected

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        label: str,
        *,
        explicit: bool = False,
        access: Access = NO_ACCESS,
    ) -> None:
        self.fn = fn
        self.name = name
        self.label = label
        self.access = access  # scopes, visible, tags (mcpkit._availability)
        self.declared = check_signature(fn, label, explicit=explicit)
        self.is_async = inspect.iscoroutinefunction(fn)
        self._publish = not explicit

    @property
    def definition(self) -> dict[str, Any]:
        raise NotImplementedError

    def compile(self) -> None:
        raise NotImplementedError

    def prepare(self) -> None:
        """Compile, and build what a first call would otherwise build (validators): the
        transports do it while the server waits for its first call."""
        self.compile()

    def off_upstream(self) -> bool:
        """Whether it is disabled before it reaches this app (a definition of an included app
        disabled there)."""
        return False

    @cached_property
    def signature(self) -> inspect.Signature:
        """The function's ``inspect.Signature``, built on first read: registration reads the
        parameters it checks from the code object (``declared``: names and defaults)."""
        return inspect.signature(self.fn)

    @cached_property
    def _parameters(self) -> Parameters:
        return parameters(
            self.fn,
            self.declared,
            self.label,
            publish=self._publish,
            settings_type=self.settings_type,
        )

    def invoke(
        self, kwargs: dict[str, Any], context: Context | None, workers: Workers
    ) -> Coroutine[Any, Any, Any]:
        """The coroutine that calls the function with validated ``kwargs``, ``context`` in its
        ``Context`` parameters and ``context.settings`` in its settings ones: a coroutine
        function on the loop, a sync one in a worker (on the loop when it was declared
        ``blocking=False``). Not a coroutine function itself: a call resumes through one layer
        less."""
        for name, settings in self._parameters.injected:
            kwargs[name] = context if not settings or context is None else context.settings
        if self.is_async:
            return self.fn(**kwargs)  # type: ignore[no-any-return]
        if not self.blocking:
            return _on_the_loop(self.fn, kwargs)
        return workers.run(self.fn, **kwargs)


async def _on_the_loop(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """A ``blocking=False`` sync function, called on the loop when awaited."""
    return fn(**kwargs)
