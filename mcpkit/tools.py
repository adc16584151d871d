"""Tools: a function recorded at decoration, compiled into schemas and a validator on first use.

Decoration checks only the signature's shape (cheap, at import); types are resolved and the
pydantic adapters built on first use (or by ``App.compile()``), so import time does not grow
with the number of tools and forward references have a chance to resolve.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from collections.abc import Callable, Collection, Coroutine, Mapping
from functools import cached_property
from types import CodeType
from typing import TYPE_CHECKING, Any, Literal, TypeGuard

from mcpkit import _typing
from mcpkit._arguments import ArgumentValidator
from mcpkit._availability import AccessOptions, check_access
from mcpkit._frozen import frozen
from mcpkit._profiles import SchemaProfile, check_profile, omitting_nulls, published
from mcpkit._signatures import NAME_PATTERN, Definition, check_name, check_options
from mcpkit._workers import Workers
from mcpkit.content import Content
from mcpkit.context import Context
from mcpkit.exceptions import DefinitionError
from mcpkit.results import ToolResult, structured_result, tool_result, unstructured_result
from mcpkit.schema import EMPTY, Param, ReturnSchema, arguments_schema, return_schema

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from mcpkit._ui import Visibility

__all__ = ["TOOL_NAME", "TaskSupport", "Tool", "ToolAnnotations", "ToolOptions", "is_seconds"]

TaskSupport = Literal["forbidden", "optional", "required"]

if TYPE_CHECKING:
    TOOL_NAME: re.Pattern[str]
    """A valid tool name as a regular expression (``mcpkit._signatures.is_name`` is the test)."""


def __getattr__(name: str) -> Any:
    """``TOOL_NAME``, compiled when first asked for: every server's start-up skips it."""
    if name == "TOOL_NAME":
        return re.compile(NAME_PATTERN)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@frozen
class ToolAnnotations:
    """Hints about a tool's behaviour for clients (all optional; clients treat them as hints)."""

    title: str | None = None
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None

    def to_wire(self) -> dict[str, Any]:
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only_hint,
            "destructiveHint": self.destructive_hint,
            "idempotentHint": self.idempotent_hint,
            "openWorldHint": self.open_world_hint,
        }
        return {k: v for k, v in pairs.items() if v is not None}


_ANNOTATION_KEYS = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}


def _annotations_wire(value: ToolAnnotations | Mapping[str, Any] | None, where: str) -> Any:
    if value is None:
        return None
    if isinstance(value, ToolAnnotations):
        return value.to_wire()
    unknown = set(value) - _ANNOTATION_KEYS
    if unknown:
        raise DefinitionError(
            f"{where}: unknown annotation(s) {sorted(unknown)}; use {sorted(_ANNOTATION_KEYS)}"
        )
    return dict(value)


def _is_unstructured(hint: Any) -> bool:
    """Return types that are content, not data: ToolResult, content helpers, lists of them."""
    # On 3.10 ``isinstance(list[X], type)`` is true: only a bare class is a class here.
    if isinstance(hint, type) and _typing.get_origin(hint) is None:
        return issubclass(hint, (ToolResult, *Content))
    return any(_is_unstructured(arg) for arg in _typing.get_args(hint))


# ----------------------------------------------------------------------------- definition


@frozen
class _Compiled:
    """A compiled tool: its published definition, its argument validator, its output check."""

    definition: dict[str, Any]
    validate: Callable[[Mapping[str, Any]], dict[str, Any]]
    output: Any  # ReturnSchema


class ToolOptions(AccessOptions, total=False):
    """The options of ``@app.tool(...)``, ``app.add_tool(fn, ...)`` and ``Tool(fn, ...)``.

    ``name`` defaults to the function's name and ``description`` to its docstring;
    ``input_schema`` / ``output_schema`` replace the derived schemas (enforced with
    ``jsonschema``); ``structured_output`` forces (or refuses) an output schema;
    ``text_mirror`` (default true) repeats structured content as a text block; ``blocking=False``
    runs a sync function on the event loop instead of a worker thread (only for code that never
    blocks). ``timeout`` (seconds) answers a call still running after it as the tool's failure
    and cancels it (a sync tool's thread cannot be stopped: it runs on, its result dropped);
    ``None`` takes ``ServerOptions.tool_timeout``, ``math.inf`` opts out of that default;
    ``scopes``, ``visible`` and ``tags`` say who sees it (:class:`AccessOptions`).
    ``task`` (2026-07-28, the ``io.modelcontextprotocol/tasks`` extension): ``"optional"``
    runs the call as a background task when the client declares the extension, ``"required"``
    refuses callers that do not (``-32021``); ``task_ttl_ms`` and ``poll_interval_ms``
    override ``ServerOptions``' defaults for its tasks.
    ``ui`` links the tool to an MCP Apps view (``@app.ui``, declared first) as
    ``_meta.ui.resourceUri``; ``ui_visibility`` (``["model", "app"]`` by default) says who may
    call it (see docs/apps.md).
    ``schema_profile`` reshapes the published ``inputSchema`` for model providers
    (``"default"``, ``"portable"``, ``"openai-strict"``; see ``docs/schemas.md``); ``None``
    takes ``ServerOptions.schema_profile``.
    """

    name: str | None
    title: str | None
    description: str | None
    annotations: ToolAnnotations | Mapping[str, Any] | None
    icons: list[dict[str, Any]] | None
    meta: dict[str, Any] | None
    input_schema: dict[str, Any] | None
    output_schema: dict[str, Any] | None
    structured_output: bool | None
    text_mirror: bool
    blocking: bool
    timeout: float | None
    task: TaskSupport
    task_ttl_ms: int | None
    poll_interval_ms: int | None
    ui: str | None
    ui_visibility: Collection[Visibility] | None
    schema_profile: SchemaProfile | None


class Tool(Definition):
    """One tool: what ``@app.tool`` records. Compiles itself on first use."""

    listed_in = "tools"

    def __init__(self, fn: Callable[..., Any], **options: Unpack[ToolOptions]) -> None:
        name = options.get("name")
        name = name if name is not None else getattr(fn, "__name__", "")
        label = f"tool {name!r}"
        check_name(name, label, "tool")
        check_options(options, ToolOptions.__optional_keys__, label)
        input_schema = options.get("input_schema")
        access = check_access(options, label)
        super().__init__(fn, name, label, explicit=input_schema is not None, access=access)
        self.title = options.get("title")
        self.description = options.get("description")
        self.annotations = _annotations_wire(options.get("annotations"), label)
        self.icons = options.get("icons")
        self.ui = options.get("ui")
        self.meta, visibility = options.get("meta"), options.get("ui_visibility")
        if self.ui is not None or visibility is not None:  # a view's link: the views feature's
            from mcpkit._ui import tool_meta

            self.meta = tool_meta(self.meta, self.ui, visibility, label)
        self.explicit_input = _checked_explicit(input_schema, label, "input_schema")
        output_schema = options.get("output_schema")
        self.explicit_output = _checked_explicit(output_schema, label, "output_schema")
        self.structured_output = options.get("structured_output")
        self.text_mirror = options.get("text_mirror", True)
        if self.ui is not None and not self.text_mirror:
            raise DefinitionError(
                f"{label} links a view, so hosts without MCP Apps show its text: "
                "drop text_mirror=False (or return a ToolResult with text content)"
            )
        self.blocking = options.get("blocking", True)
        self.timeout = _checked_timeout(options.get("timeout"), label)
        self.task: TaskSupport = _task_support(options.get("task", "forbidden"), label)
        self.task_ttl_ms = _milliseconds(options, "task_ttl_ms", label)
        self.poll_interval_ms = _milliseconds(options, "poll_interval_ms", label)
        profile = options.get("schema_profile")
        self.schema_profile = None if profile is None else check_profile(profile, f"{label}: ")
        self.continues_as_task = _calls(fn, "continue_as_task")
        if self.continues_as_task and self.task == "forbidden":
            raise DefinitionError(
                f"{label} calls ctx.continue_as_task(), which does nothing in a tool that never "
                'runs as a task; declare @app.tool(task="optional") or task="required"'
            )

    def __repr__(self) -> str:
        return f"<Tool {self.name!r}>"

    def compile(self) -> None:
        """Build schemas and validators now (raises :class:`DefinitionError` if impossible)."""
        _ = self._compiled

    def prepare(self) -> None:
        """Compile, then build the argument validator and the output adapter a first call
        would build (explicit schemas have nothing more to build)."""
        compiled = self._compiled
        if isinstance(compiled.validate, ArgumentValidator):
            compiled.validate.prepare()
        if isinstance(compiled.output, ReturnSchema):
            _ = compiled.output.adapter

    @property
    def definition(self) -> dict[str, Any]:
        """The ``Tool`` object as ``tools/list`` publishes it."""
        return self._compiled.definition

    @property
    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = self._compiled.definition["inputSchema"]
        return schema

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return self._compiled.definition.get("outputSchema")

    @cached_property
    def _compiled(self) -> _Compiled:
        found = self._parameters
        input_schema, validate = self._input(found.params)
        output = self._output(found.returns)
        definition = self._definition(found.description, input_schema, output.schema)
        return _Compiled(definition, validate, output)

    def _input(self, params: list[Param]) -> tuple[dict[str, Any], Any]:
        """The published input schema (in the tool's profile) and the validator of the real one."""
        validate: Callable[[Mapping[str, Any]], dict[str, Any]]
        if self.explicit_input is not None:
            from mcpkit._explicit_schema import ExplicitValidator

            schema, validate = (
                self.explicit_input,
                ExplicitValidator(self.explicit_input, tool=self.name),
            )
        else:
            built = arguments_schema(params, where=self.label)
            schema, validate = built.schema, ArgumentValidator(built, tool=self.name)
        profile = self.schema_profile or "default"
        if profile == "openai-strict":
            validate = omitting_nulls(validate, schema)
        return published(schema, profile, where=self.label), validate

    def _output(self, annotation: Any) -> Any:
        if self.explicit_output is not None:
            from mcpkit._explicit_schema import ExplicitOutput

            return ExplicitOutput(self.explicit_output, where=self.label)
        if annotation is not EMPTY and _is_unstructured(annotation):
            return return_schema(EMPTY, where=self.label)
        return return_schema(annotation, where=self.label, force=self.structured_output)

    def _definition(
        self, doc: str | None, input_schema: dict[str, Any], output: dict[str, Any] | None
    ) -> dict[str, Any]:
        definition: dict[str, Any] = {"name": self.name}
        if self.title:
            definition["title"] = self.title
        description = self.description if self.description is not None else doc
        if description:
            definition["description"] = description
        definition["inputSchema"] = input_schema
        if output is not None:
            definition["outputSchema"] = output
        if self.annotations:
            definition["annotations"] = self.annotations
        if self.icons:
            definition["icons"] = self.icons
        if self.meta:
            definition["_meta"] = self.meta
        return definition

    # ------------------------------------------------------------------------- calling

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments (raises :class:`~mcpkit.InvalidArguments`)."""
        return self._compiled.validate(arguments)

    def run(
        self, arguments: Mapping[str, Any], context: Context | None, workers: Workers
    ) -> Coroutine[Any, Any, Any]:
        """Validate now (raises :class:`~mcpkit.InvalidArguments`), and return the coroutine
        that calls the function (sync ones in a worker thread) and returns its value. Not a
        coroutine itself: a call resumes through one layer less."""
        return self.invoke(self._compiled.validate(arguments), context, workers)

    def to_result(self, value: Any, *, force_mirror: bool = False) -> dict[str, Any]:
        """Wrap a returned value into a ``CallToolResult`` (checked against the output schema).

        ``force_mirror`` keeps the JSON text block for clients that predate structured output.
        """
        mirror = force_mirror or self.text_mirror
        if isinstance(value, ToolResult):
            return tool_result(value, text_mirror=mirror)
        output = self._compiled.output
        if output.schema is None:
            return unstructured_result(value)
        structured = output.dump(value)
        return structured_result(structured, text_mirror=mirror)


def is_seconds(value: object) -> TypeGuard[float]:
    """A number of seconds a timeout may be: a positive int or float (``math.inf`` too; NaN
    and ``True`` are not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _checked_timeout(seconds: Any, where: str) -> float | None:
    if seconds is None or is_seconds(seconds):
        return seconds  # (math.inf: "no limit, whatever the App's default")
    raise DefinitionError(
        f"{where}: timeout must be a positive number of seconds, math.inf for none or None for "
        f"the App's tool_timeout, not {seconds!r}"
    )


def _checked_explicit(schema: dict[str, Any] | None, where: str, what: str) -> Any:
    if schema is None:
        return None
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise DefinitionError(
            f'{where}: {what} must be a JSON Schema object with "type": "object" at its root'
        )
    if importlib.util.find_spec("jsonschema") is None:
        raise DefinitionError(
            f"{where}: an explicit {what} is enforced with the jsonschema "
            'package: pip install "mcpkit[jsonschema]"'
        )
    return schema


def _task_support(value: Any, label: str) -> TaskSupport:
    if value not in ("forbidden", "optional", "required"):
        raise DefinitionError(
            f'{label}: task must be "forbidden", "optional" or "required", not {value!r}'
        )
    support: TaskSupport = value
    return support


def _milliseconds(options: Mapping[str, Any], key: str, label: str) -> int | None:
    """A tool's ``task_ttl_ms`` / ``poll_interval_ms``: ``None`` when not given (the App's
    default applies); a positive integer otherwise."""
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise DefinitionError(f"{label}: {key} must be a positive integer, not {value!r}")
    return value


def _calls(fn: Callable[..., Any], attribute: str) -> bool:
    """Whether ``fn``'s body (or a function nested in it) names ``attribute``: how a tool that
    calls ``ctx.continue_as_task()`` is told from one that becomes a task at once."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    return isinstance(code, CodeType) and _names(code, attribute)


def _names(code: CodeType, attribute: str) -> bool:
    if attribute in code.co_names:
        return True
    for const in code.co_consts:  # noqa: SIM110 (any() over a generator: ~2x, per tool)
        if type(const) is CodeType and _names(const, attribute):
            return True
    return False
