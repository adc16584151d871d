"""Find the ``App`` a TARGET names: ``pkg.module:attr``, ``path/to/file.py:attr``, or either
without ``:attr`` when the module holds exactly one ``App``.

Problems with the TARGET itself raise :class:`TargetError` (one line for the user); errors
raised by the user's own module while it imports propagate with their traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from mcpkit.app import App

__all__ = ["TargetError", "load_app"]


class TargetError(Exception):
    """The TARGET does not name an ``App`` (message written for the command line)."""


def load_app(target: str) -> App:
    """Import the module a TARGET names and return its ``App``."""
    module_part, attr = _split(target)
    module = _import_file(module_part) if _is_path(module_part) else _import_module(module_part)
    return _find_app(module, attr, target)


def _split(target: str) -> tuple[str, str | None]:
    head, sep, tail = target.rpartition(":")
    if sep and tail and all(part.isidentifier() for part in tail.split(".")):
        return head, tail
    return target, None


def _is_path(module_part: str) -> bool:
    return module_part.endswith(".py") or os.sep in module_part or "/" in module_part


def _import_file(path_text: str) -> ModuleType:
    path = Path(path_text).resolve()
    if not path.is_file():
        raise TargetError(f"no such file: {path_text}")
    name = path.stem if path.stem.isidentifier() else "mcpkit_target"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path_text} as a Python module")
    sys.path.insert(0, str(path.parent))  # so the file's sibling modules import
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _import_module(name: str) -> ModuleType:
    if not all(part.isidentifier() for part in name.split(".")):
        raise TargetError(f"not a module name or .py path: {name!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise TargetError(
                f"no module named {name!r} (looked in the current directory and on sys.path)"
            ) from None
        raise


def _find_app(module: ModuleType, attr: str | None, target: str) -> App:
    if attr is None:
        apps = {n: v for n, v in vars(module).items() if isinstance(v, App)}
        if len(apps) != 1:
            found = ", ".join(sorted(apps)) or "none"
            raise TargetError(f"{target}: name the App as MODULE:ATTR (Apps found: {found})")
        return next(iter(apps.values()))
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetError(f"{target}: {module.__name__} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not isinstance(obj, App):
        raise TargetError(
            f"{target}: {attr!r} is not an mcpkit App (it is of type {type(obj).__name__})"
        )
    return obj
