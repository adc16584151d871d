"""Find the ``App`` a TARGET names: ``pkg.module:attr``, ``path/to/file.py:attr``, or either
without ``:attr`` when the module holds exactly one ``App``.

Problems with the TARGET itself raise :class:`TargetError` (one line for the user), and so does
a :class:`~mcpkit.exceptions.DefinitionError` raised while the user's module imports (a tool,
resource or prompt defined wrongly): its line starts ``file:line:``, where that definition
starts. Any other error raised by the user's module propagates with its traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import itertools
import os
import sys
import traceback
from types import FrameType, FunctionType, ModuleType, TracebackType

from mcpkit.app import App
from mcpkit.exceptions import DefinitionError

__all__ = [
    "TargetError",
    "absolute_target",
    "definition_site",
    "is_path_target",
    "load_app",
    "shown_path",
    "split_target",
]


class TargetError(Exception):
    """The TARGET names no usable ``App`` (message written for the command line)."""


def load_app(target: str) -> App:
    """Import the module a TARGET names and return its ``App``."""
    module_part, attr = split_target(target)
    try:
        if is_path_target(module_part):
            module = _import_file(module_part)
        else:
            module = _import_module(module_part)
    except DefinitionError as exc:
        site = definition_site(exc.__traceback__)
        prefix = f"{site[0]}:{site[1]}: " if site else ""
        raise TargetError(f"{prefix}{exc}") from exc
    return _find_app(module, attr, target)


def absolute_target(target: str) -> str:
    """TARGET as it loads from any directory: a file path made absolute (``:attr`` kept).

    A module name stays as it is: it must be importable where the TARGET will be loaded.
    """
    module_part, attr = split_target(target)
    if not is_path_target(module_part):
        return target
    return os.path.abspath(module_part) + (f":{attr}" if attr else "")


def split_target(target: str) -> tuple[str, str | None]:
    """``(module or path, attr or None)`` of a TARGET."""
    head, sep, tail = target.rpartition(":")
    if sep and tail and all(part.isidentifier() for part in tail.split(".")):
        return head, tail
    return target, None


def is_path_target(module_part: str) -> bool:
    """Whether a TARGET's module part is a file path (else a module name)."""
    return module_part.endswith(".py") or os.sep in module_part or "/" in module_part


def _import_file(path_text: str) -> ModuleType:
    path = os.path.realpath(path_text)  # Path.resolve(); pathlib costs ~5 ms of a start-up
    if not os.path.isfile(path):
        raise TargetError(f"no such file: {path_text}")
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() else "mcpkit_target"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise TargetError(f"cannot import {path_text} as a Python module")
    if os.path.dirname(path) not in sys.path:  # so the file's sibling modules import
        sys.path.insert(0, os.path.dirname(path))
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


# ----------------------------------------------------------- where a definition went wrong

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


def definition_site(tb: TracebackType | None) -> tuple[str, int] | None:
    """``(file, line)`` of the definition the user's code handed to mcpkit (``None`` if unknown).

    That is the innermost call from outside mcpkit into it (``@app.tool``, ``app.add_tool``):
    the line where the function it was given starts (its first decorator), or, when it was
    given no plain function, the line of the call.
    """
    frames = list(traceback.walk_tb(tb))
    for (caller, line), (callee, _) in reversed(list(itertools.pairwise(frames))):
        if _in_mcpkit(callee) and not _in_mcpkit(caller):
            function = _function_argument(callee)
            if function is not None:
                code = function.__code__
                return shown_path(code.co_filename), code.co_firstlineno
            return shown_path(caller.f_code.co_filename), line
    return None


def _in_mcpkit(frame: FrameType) -> bool:
    return frame.f_code.co_filename.startswith(_PACKAGE)


def _function_argument(frame: FrameType) -> FunctionType | None:
    """The first plain function among a call's positional parameters (decorators unwrapped)."""
    code = frame.f_code
    for name in code.co_varnames[: code.co_argcount]:
        value = frame.f_locals.get(name)
        if not callable(value):
            continue
        try:
            value = inspect.unwrap(value)
        except ValueError:  # a __wrapped__ loop: not a function worth naming
            continue
        if isinstance(value, FunctionType):
            return value
    return None


def shown_path(filename: str) -> str:
    """A path relative to the current directory when it lies inside it, else as it is."""
    from pathlib import Path  # an error is being shown: no start-up to save

    try:
        return str(Path(filename).relative_to(Path.cwd()))
    except ValueError:
        return filename
