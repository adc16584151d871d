"""Loading a TARGET again after its files change: what ``mcpkit run --reload`` and ``mcpkit dev``
share.

:func:`load_fresh` forgets the modules imported from the TARGET's folder and loads the TARGET
again; whatever goes wrong (a syntax error, a definition mcpkit refuses, any exception while the
user's modules import) is one :class:`LoadFailure` naming the user's file and line, so the caller
keeps serving the last good App and shows the failure. :func:`changes` says when to call it:
sets of ``.py`` files changed under the folder, from ``watchfiles`` when the ``reload`` extra is
installed, else from a stdlib poll of modification times.

"The folder" is the TARGET file's folder, or for a module TARGET the folder of its top-level
package (the folder of the module itself when it is not in a package). Modules installed in the
interpreter (site-packages, the standard library) and mcpkit itself are never forgotten, even
when a virtual environment or a checkout of mcpkit lies under the folder: importing them twice
would make two copies of their classes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import sysconfig
import traceback
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import TracebackType
from typing import Literal, get_args

from mcpkit.app import App
from mcpkit.cli.loader import (
    TargetError,
    definition_site,
    is_path_target,
    load_app,
    shown_path,
    split_target,
)
from mcpkit.exceptions import DefinitionError

__all__ = [
    "POLL_SECONDS",
    "ListKind",
    "LoadFailure",
    "changed_lists",
    "changes",
    "failure_note",
    "files_note",
    "load_fresh",
    "say",
    "watched_folder",
    "watching_note",
]

ListKind = Literal["tools", "prompts", "resources"]
"""A list a client is told has changed (``notifications/<kind>/list_changed``)."""

POLL_SECONDS = 0.25
"""How often the stdlib poll (no ``watchfiles``) looks at modification times."""

SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
"""Folders never watched (besides hidden ones such as ``.git`` and ``.venv``)."""


class LoadFailure(Exception):
    """The TARGET could not be loaded; ``str()`` is ``file:line: message`` for the author.

    ``file`` (shown relative to the current directory when it lies inside it) and ``line`` are
    where the user's code went wrong, ``None`` when no file or line of theirs is to blame.
    """

    def __init__(self, file: str | None, line: int | None, message: str) -> None:
        super().__init__(file, line, message)
        self.file = file
        self.line = line
        self.message = message

    def __str__(self) -> str:
        site = ":".join(str(part) for part in (self.file, self.line) if part is not None)
        return f"{site}: {self.message}" if site else self.message


def load_fresh(target: str) -> App:
    """Forget the modules imported from the TARGET's folder, then load the TARGET again.

    Every definition is compiled too, so a type mcpkit cannot express fails here rather than on
    the first call. Raises :class:`LoadFailure` for anything that goes wrong.
    """
    folder = watched_folder(target)
    _forget_modules_under(folder)
    try:
        app = load_app(target)
    except Exception as exc:  # anything the user's code raises while it imports
        raise _failure(exc, folder) from exc
    _compile(app)
    return app


async def changes(target: str) -> AsyncIterator[set[str]]:
    """Each time ``.py`` files under the TARGET's folder change: the set of their paths.

    Runs until cancelled (or closed). Uses ``watchfiles`` when installed (``mcpkit[reload]``),
    else polls modification times every :data:`POLL_SECONDS`.
    """
    folder = watched_folder(target)
    try:
        import watchfiles
    except ImportError:
        async for changed in _poll(folder):
            yield changed
        return

    def watched(_change: object, path: str) -> bool:
        return _is_watched(folder, path)

    async for found in watchfiles.awatch(folder, watch_filter=watched):
        yield {path for _, path in found}


def watched_folder(target: str) -> Path:
    """The folder whose modules :func:`load_fresh` forgets and :func:`changes` watches."""
    module_part, _ = split_target(target)
    if is_path_target(module_part):
        return Path(module_part).resolve().parent
    top = module_part.partition(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return Path.cwd().resolve()  # loading fails and says why; watch where the user works
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return Path(spec.origin).resolve().parent


def changed_lists(old: App, new: App) -> list[ListKind]:
    """The lists (``"tools"``, ``"prompts"``, ``"resources"``: its templates too) whose
    published definitions differ between two versions of an App, in that order."""
    before, after = _published(old), _published(new)
    return [kind for kind in get_args(ListKind) if before[kind] != after[kind]]


def _published(app: App) -> dict[str, list[dict[str, object]]]:
    lists: dict[str, list[dict[str, object]]] = {"tools": [], "prompts": [], "resources": []}
    for definition in app.definitions():
        lists[definition.listed_in].append(definition.definition)
    return lists


def say(line: str) -> None:
    """One line for the author on stderr (never stdout: over stdio it carries the protocol)."""
    print(line, file=sys.stderr, flush=True)


def watching_note(target: str) -> str:
    """The line that says what ``--reload`` watches."""
    return (
        f"mcpkit: reloading when a .py file under {shown_path(str(watched_folder(target)))} changes"
    )


def failure_note(failure: LoadFailure) -> str:
    """The line that says an edit did not load (``file:line: message``)."""
    return f"mcpkit run: reload failed, still serving the previous version: {failure}"


def files_note(changed: set[str]) -> str:
    """The changed files, for the line that says what was reloaded."""
    return ", ".join(sorted(shown_path(path) for path in changed))


# ----------------------------------------------------------------------- forgetting

_INSTALLED = tuple(
    str(Path(path).resolve()) + os.sep
    for path in {*sysconfig.get_paths().values(), str(Path(__file__).resolve().parents[1])}
)


def _forget_modules_under(folder: Path) -> None:
    prefix = str(folder) + os.sep
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        path = str(Path(file).resolve())
        if path.startswith(prefix) and not path.startswith(_INSTALLED):
            del sys.modules[name]
    importlib.invalidate_caches()  # a file created since the last import must be found


# ------------------------------------------------------------------------- failures


def _failure(exc: BaseException, folder: Path) -> LoadFailure:
    if isinstance(exc, SyntaxError):  # the file and line of the code that does not parse
        file = shown_path(exc.filename) if exc.filename else None
        return LoadFailure(file, exc.lineno, f"{type(exc).__name__}: {exc.msg}")
    if isinstance(exc, TargetError):
        return _target_failure(exc, folder)
    file, line = _innermost_under(exc.__traceback__, folder)
    return LoadFailure(file, line, f"{type(exc).__name__}: {exc}")


def _target_failure(exc: TargetError, folder: Path) -> LoadFailure:
    cause = exc.__cause__
    if isinstance(cause, DefinitionError):
        site = definition_site(cause.__traceback__)
        if site is not None:
            return LoadFailure(site[0], site[1], str(cause))
        return LoadFailure(*_innermost_under(cause.__traceback__, folder), str(cause))
    return LoadFailure(None, None, str(exc))  # the TARGET names no App: no line to blame


def _innermost_under(tb: TracebackType | None, folder: Path) -> tuple[str | None, int | None]:
    prefix = str(folder) + os.sep
    site: tuple[str | None, int | None] = (None, None)
    for frame, line in traceback.walk_tb(tb):
        filename = frame.f_code.co_filename
        if filename.startswith(prefix) or str(Path(filename).resolve()).startswith(prefix):
            site = (shown_path(filename), line)
    return site


def _compile(app: App) -> None:
    for definition in app.definitions():
        try:
            definition.compile()
        except DefinitionError as exc:
            code = getattr(_unwrapped(definition.fn), "__code__", None)
            if code is None:
                raise LoadFailure(None, None, str(exc)) from exc
            raise LoadFailure(shown_path(code.co_filename), code.co_firstlineno, str(exc)) from exc


def _unwrapped(fn: object) -> object:
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    return fn


# ------------------------------------------------------------------------- watching


def _is_watched(folder: Path, path: str) -> bool:
    """The one rule of what is watched, for ``watchfiles`` and the poll alike."""
    if not path.endswith(".py"):
        return False
    try:
        dirs = Path(path).relative_to(folder).parts[:-1]
    except ValueError:
        return False
    return not any(part in SKIPPED_DIRS or part.startswith(".") for part in dirs)


async def _poll(folder: Path) -> AsyncIterator[set[str]]:
    seen = _stamps(folder)
    while True:
        await asyncio.sleep(POLL_SECONDS)
        now = await asyncio.to_thread(_stamps, folder)
        changed = {path for path in seen.keys() | now.keys() if seen.get(path) != now.get(path)}
        seen = now
        if changed:
            yield changed


def _stamps(folder: Path) -> dict[str, tuple[int, int]]:
    """Every watched file under ``folder``: its modification time (ns) and size."""
    stamps: dict[str, tuple[int, int]] = {}
    for path in _walk(folder):
        try:
            stat = os.stat(path)
        except OSError:  # removed while we looked
            continue
        stamps[path] = (stat.st_mtime_ns, stat.st_size)
    return stamps


def _walk(folder: Path) -> Iterator[str]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        yield from (os.path.join(root, name) for name in files if name.endswith(".py"))
