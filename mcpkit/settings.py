"""Typed settings: an App's configuration, read from its sources and validated once.

``App(name, version, settings=WeatherSettings)``, where ``WeatherSettings`` is a pydantic model,
a dataclass or a TypedDict whose fields are the server's configuration. Each field is read from,
in increasing priority: its default, an env file (``mcpkit run --env-file``), the environment
variable ``PREFIX_FIELD`` (the prefix is ``App(settings_prefix=...)``, by default the app's name
in UPPER_SNAKE plus ``_``) and explicit values (``mcpkit run --set field=value``,
``Client(app, settings={...})``). Text from the environment is read as pydantic reads it
(``"3"`` is an int, ``"true"`` a bool); a list or object field takes JSON text. An empty
variable counts as not set: MCP hosts write ``""`` for an option the user left blank.

Every problem is reported at once by one :class:`~mcpkit.exceptions.SettingsError`, a line per
variable (what is wrong, then the field's description). The value of a secret field (pydantic's
``SecretStr``: ``writeOnly`` in its schema) is never shown. The field schemas come from the one
schema pipeline (:mod:`mcpkit.schema`), so the distribution files describe what is validated.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

import typing_extensions
from typing_extensions import TypedDict

from mcpkit import _codec
from mcpkit._envfile import EnvFileError, read_env_file
from mcpkit._frozen import frozen
from mcpkit._pydantic_loaded import is_model_class
from mcpkit.exceptions import DefinitionError, SettingsError
from mcpkit.schema import clean_schema

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["Setting", "SettingsSources", "SettingsSpec", "default_prefix", "override_settings"]

_UNSET: Any = object()
_JSON_TYPES = frozenset({"array", "object"})


def default_prefix(app_name: str) -> str:
    """``"weather-server"`` -> ``"WEATHER_SERVER_"``: the app's name in UPPER_SNAKE, then ``_``."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", app_name)
    snake = re.sub(r"[^A-Za-z0-9]+", "_", snake).strip("_").upper()
    return f"{snake}_" if snake else ""


class SettingsSources(TypedDict, total=False):
    """Where :meth:`SettingsSpec.load` reads besides explicit values."""

    environ: Mapping[str, str] | None
    """The environment (default ``os.environ``)."""
    env_file: str | None
    """A ``KEY=VALUE`` file, below the environment."""
    source: str
    """How messages name the explicit values (default ``--set``)."""


@frozen
class Setting:
    """One field of the settings: its name, variable, JSON Schema and whether it is required."""

    name: str
    env: str
    schema: dict[str, Any]
    required: bool

    @property
    def secret(self) -> bool:
        """A ``SecretStr`` (or ``SecretBytes``) field: its value is never shown."""
        return self.schema.get("writeOnly") is True

    @property
    def description(self) -> str:
        """The field's description, else its name (generated files always need text)."""
        text = self.schema.get("description")
        return text if isinstance(text, str) and text else self.name

    @property
    def json_text(self) -> bool:
        """Whether a text value is JSON (list and object fields)."""
        types = self.schema.get("type")
        branches = [types] if isinstance(types, str) else list(types or [])
        branches += [b.get("type") for b in self.schema.get("anyOf", []) if isinstance(b, dict)]
        return any(t in _JSON_TYPES for t in branches)


class SettingsSpec:
    """An App's settings class, its variables' prefix and the instance validated from them."""

    def __init__(self, cls: Any, prefix: str | None, app_name: str) -> None:
        if not _is_settings_class(cls):
            raise DefinitionError(
                f"settings={cls!r}: the settings are a pydantic model, a dataclass or a "
                "TypedDict (one field per setting)"
            )
        self.cls = cls
        self.prefix = default_prefix(app_name) if prefix is None else prefix
        self.app_name = app_name
        self.value: Any = _UNSET

    @cached_property
    def _adapter(self) -> TypeAdapter[Any]:
        from mcpkit._pydantic import adapter  # settings are validated by pydantic

        return adapter(self.cls, where=f"settings {self.cls.__name__}", what="its fields")

    @cached_property
    def fields(self) -> tuple[Setting, ...]:
        """Every setting, in the class's field order."""
        from mcpkit._pydantic import raw_schema

        where = f"settings {self.cls.__name__}"
        schema = clean_schema(raw_schema(self._adapter, "validation", where=where))
        required = set(schema.get("required", ()))
        return tuple(
            Setting(name, self.prefix + name.upper(), field, name in required)
            for name, field in schema.get("properties", {}).items()
        )

    def current(self) -> Any:
        """The validated instance; read from the environment on first use when none was loaded."""
        if self.value is _UNSET:
            self.load()
        return self.value

    def current_or_exit(self) -> Any:
        """:meth:`current`, or (for a server about to start) the problems on stderr and exit 2."""
        try:
            return self.current()
        except SettingsError as exc:
            sys.stderr.write(f"{exc}\n")
            raise SystemExit(2) from None

    def load(
        self,
        values: Mapping[str, Any] | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        env_file: str | None = None,
        source: str = "--set",
    ) -> Any:
        """Validate the settings from their sources, keep the instance and return it.

        ``environ`` defaults to ``os.environ``; ``values`` (field name -> value, labelled
        ``source`` in messages) win over everything. Raises :class:`SettingsError` listing
        every problem.
        """
        if environ is None:
            environ = os.environ
        problems: list[str] = []
        found = self._gather(values or {}, environ, env_file, source, problems)
        data = {name: self._parsed(name, raw, problems) for name, raw in found.items()}
        unread = {name for name, value in data.items() if value is _UNSET}  # said already
        try:
            instance = self._adapter.validate_python(data)
        except _codec.ValidationError as exc:
            errors = [e for e in exc.errors() if not (e["loc"] and e["loc"][0] in unread)]
            problems += [self._problem(error, found) for error in errors]
        if problems:
            raise SettingsError(self.app_name, problems)
        self.value = instance
        return instance

    # ------------------------------------------------------------------ gathering

    def _gather(
        self,
        values: Mapping[str, Any],
        environ: Mapping[str, str],
        env_file: str | None,
        source: str,
        problems: list[str],
    ) -> dict[str, tuple[Any, str]]:
        """Field name -> (raw value, where it came from), the highest-priority source winning."""
        found: dict[str, tuple[Any, str]] = {}
        if env_file is not None:
            found |= self._from_file(env_file, problems)
        found |= {
            s.name: (environ[s.env], "the environment") for s in self.fields if environ.get(s.env)
        }
        known = {s.name for s in self.fields}
        for name, value in values.items():
            if name in known:
                found[name] = (value, source)
            else:
                problems.append(f"  {source} {name}: no setting named {name!r} ({self._names()})")
        return found

    def _from_file(self, path: str, problems: list[str]) -> dict[str, tuple[Any, str]]:
        try:
            variables = read_env_file(path)
        except EnvFileError as exc:
            problems.append(f"  {exc}")
            return {}
        by_env = {s.env: s.name for s in self.fields}
        found: dict[str, tuple[Any, str]] = {}
        for key, (value, line) in variables.items():
            where = f"{path}, line {line}"
            if key in by_env:
                if value:  # empty: not set (what a host writes for an option left blank)
                    found[by_env[key]] = (value, where)
            elif self.prefix and key.startswith(self.prefix):
                names = ", ".join(s.env for s in self.fields)
                problems.append(f"  {key} (from {where}): no such setting (the settings: {names})")
        return found

    def _names(self) -> str:
        return "the settings: " + ", ".join(s.name for s in self.fields)

    def _parsed(self, name: str, raw: tuple[Any, str], problems: list[str]) -> Any:
        value, source = raw
        setting = self._field(name)
        if not (isinstance(value, str) and setting.json_text):
            return value
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            problems.append(
                _line(setting, value, source, 'not JSON text (a list or an object, e.g. ["a"])')
            )
            return _UNSET

    def _field(self, name: str) -> Setting:
        return next(s for s in self.fields if s.name == name)

    # ------------------------------------------------------------------- problems

    def _problem(self, error: Any, found: Mapping[str, tuple[Any, str]]) -> str:
        loc = error.get("loc") or ()
        names = {s.name for s in self.fields}
        if not loc or loc[0] not in names:
            return f"  {self.cls.__name__}: {error.get('msg')}"
        setting = self._field(str(loc[0]))
        if error.get("type") == "missing":
            return f"  {setting.env}: required, not set\n      {_about(setting)}"
        message = str(error.get("msg"))
        if len(loc) > 1:
            message += f" (at {'.'.join(str(part) for part in loc[1:])})"
        value, source = found.get(setting.name, (_UNSET, "the default"))
        return _line(setting, value, source, message)


def override_settings(app: Any, values: Mapping[str, Any] | None) -> Callable[[], None]:
    """Make ``values`` (with the defaults alone, not the environment) ``app``'s settings until
    the function returned is called (the test client's ``settings=``); ``None``: no change."""
    spec: SettingsSpec | None = app.settings_spec
    if values is None:
        return _nothing
    if spec is None:
        raise ValueError(f"Client(settings=...): App {app.name!r} has no settings")
    previous = spec.value
    spec.load(values, environ={}, source="Client(settings=...)")

    def restore() -> None:
        spec.value = previous

    return restore


def _nothing() -> None:
    pass


def _line(setting: Setting, value: Any, source: str, message: str) -> str:
    """``VAR = 'value' (from SOURCE): what is wrong``, then the field's description."""
    if setting.secret:
        shown = f" (from {source}; a secret, its value not shown)"
    elif value is _UNSET:
        shown = f" (from {source})"
    else:
        shown = f" = {value!r} (from {source})"
    return f"  {setting.env}{shown}: {message}\n      {_about(setting)}"


def _about(setting: Setting) -> str:
    text = setting.schema.get("description")
    return f"{setting.name}: {text}" if text else f"{setting.name} (no description)"


def _is_settings_class(cls: Any) -> bool:
    if not isinstance(cls, type):
        return False
    is_model = is_model_class(cls)
    return is_model or dataclasses.is_dataclass(cls) or typing_extensions.is_typeddict(cls)
