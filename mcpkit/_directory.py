"""Serving the files under a directory without ever leaving it (``App.add_directory``).

A path is first refused as written if it holds ``..``, is absolute or holds a backslash. It is
then opened one name at a time, each relative to the directory opened before it, never following
a symlink (``O_NOFOLLOW``): a symlink is read instead and its target walked the same way, so it is
followed only while it stays inside the root (a relative target, or an absolute one under the
root), and ``..`` goes back to a directory already open, refused at the root. What is opened is
what is read and no name is looked up twice, so swapping a directory for a symlink while a read
runs cannot serve a file from outside, and nothing outside the root is ever opened. What is not a
regular file (a directory, a FIFO, a device) is not found; neither is a name no file can have (a
NUL byte, a name too long).

Where ``os.open`` cannot open relative to a directory or refuse a symlink (Windows), the path is
resolved and checked, the resolved path opened, then resolved again: it must still be the same,
inside the root, and name the file opened (same device and inode). That narrows the race to a
swap and a swap back between those steps; it does not close it.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import stat
from collections import deque
from collections.abc import Callable
from pathlib import Path

from mcpkit.exceptions import InvalidParams, ResourceNotFound
from mcpkit.resources import Contents

__all__ = ["directory_reader"]

_WALKS = {os.open, os.readlink} <= os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
"""Whether this OS opens names relative to a directory and refuses symlinks (POSIX)."""

_READ = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_ROOT = _READ | getattr(os, "O_DIRECTORY", 0)
_DIRECTORY = _ROOT | getattr(os, "O_NOFOLLOW", 0)
_FILE = _READ | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # a FIFO never blocks

_NO_SUCH_NAME = frozenset(
    {errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP, errno.EISDIR, errno.EINVAL}
)
"""Failures that mean "no such file"; others (``EACCES``, ``EMFILE``) are the server's faults."""

_MAX_LINKS = 40  # as Linux's MAXSYMLINKS: a loop of symlinks ends as "not found"


def directory_reader(root: str | Path) -> Callable[[str], Contents]:
    """A reader for files under ``root`` that refuses to leave it.

    ``..`` parts, absolute paths and symlinks that resolve outside ``root`` are refused with
    ``-32602``; a missing file is a resource that does not exist.
    """
    served = _Root(root)

    def read(path: str) -> Contents:
        name, data = served.read(path)
        mime, _ = mimetypes.guess_type(name)
        if mime is None or mime.startswith("text/") or mime == "application/json":
            try:
                return Contents(text=data.decode("utf-8"), mime_type=mime or "text/plain")
            except UnicodeDecodeError:
                pass
        return Contents(blob=data, mime_type=mime or "application/octet-stream")

    return read


class _Root:
    """The served directory: its resolved path, and the prefixes absolute symlinks may use."""

    def __init__(self, root: str | Path) -> None:
        self.path = str(Path(root).resolve(strict=True))
        self._prefixes = tuple({self.path, os.path.abspath(root)})

    def read(self, path: str) -> tuple[str, bytes]:
        """The name of the file ``path`` leads to, and its bytes."""
        _check_written(path)
        name, fd = _Walk(self, path).open() if _WALKS else _open_resolved(self, path)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _not_found(path)
            with open(fd, "rb", closefd=False) as file:
                return name, file.read()
        finally:
            os.close(fd)

    def under(self, target: str) -> str | None:
        """An absolute path as a path under the root, or ``None`` if it is not under it."""
        for prefix in self._prefixes:
            if target == prefix or target.startswith(prefix.rstrip(os.sep) + os.sep):
                return target[len(prefix) :]
        return None


class _Walk:
    """One path, opened name by name from the root; ``dirs`` are the directories open on it."""

    def __init__(self, root: _Root, path: str) -> None:
        self.root, self.path = root, path
        self.names = deque(path.split("/"))
        self.links = 0
        try:
            self.dirs = [os.open(root.path, _ROOT)]
        except OSError as exc:
            raise _failed(exc, path) from None

    def open(self) -> tuple[str, int]:
        try:
            while self.names:
                name = self.names.popleft()
                if name == "..":
                    self._up()
                elif name not in ("", "."):
                    fd = self._step(name)
                    if fd is not None:
                        return name, fd
        finally:
            for fd in self.dirs:
                os.close(fd)
        raise _not_found(self.path)  # it ends on a directory

    def _step(self, name: str) -> int | None:
        """The file's descriptor if ``name`` is the last; otherwise go into it or follow it."""
        last = not self.names
        try:
            fd = os.open(name, _FILE if last else _DIRECTORY, dir_fd=self.dirs[-1])
        except OSError as exc:
            self._follow(name, exc)
            return None
        if last:
            return fd
        self.dirs.append(fd)
        return None

    def _follow(self, name: str, failure: OSError) -> None:
        """Walk a symlink's target instead of its name (``failure`` stands if it is none)."""
        try:
            target = os.readlink(name, dir_fd=self.dirs[-1])
        except OSError:
            raise _failed(failure, self.path) from None
        self.links += 1
        if self.links > _MAX_LINKS:
            raise _not_found(self.path)
        if os.path.isabs(target):
            inside = self.root.under(target)
            if inside is None:
                raise _leaves(self.path)
            while len(self.dirs) > 1:
                os.close(self.dirs.pop())
            target = inside
        self.names.extendleft(reversed(target.split("/")))

    def _up(self) -> None:
        if len(self.dirs) == 1:
            raise _leaves(self.path)
        os.close(self.dirs.pop())


def _open_resolved(root: _Root, path: str) -> tuple[str, int]:
    """Without ``dir_fd`` and ``O_NOFOLLOW``: resolve, check, open, and check again."""
    real = _resolved(root, path)
    if not os.path.isfile(real):  # Windows cannot open a directory
        raise _not_found(path)
    try:
        fd = os.open(real, _FILE)
    except OSError as exc:
        raise _failed(exc, path) from None
    try:
        same = _resolved(root, path) == real and _same_file(fd, real)
    except Exception:
        os.close(fd)
        raise
    if not same:
        os.close(fd)
        raise _not_found(path)
    return os.path.basename(real), fd


def _same_file(fd: int, path: str) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def _resolved(root: _Root, path: str) -> str:
    try:
        real = os.path.realpath(os.path.join(root.path, path))
    except OSError as exc:
        raise _failed(exc, path) from None
    if root.under(real) is None:
        raise _leaves(path)
    return real


def _check_written(path: str) -> None:
    if Path(path).is_absolute() or ".." in Path(path).parts or "\\" in path:
        raise _leaves(path)
    if "\x00" in path:
        raise _not_found(path)


def _failed(exc: OSError, path: str) -> Exception:
    return _not_found(path) if exc.errno in _NO_SUCH_NAME else exc


def _not_found(path: str) -> ResourceNotFound:
    return ResourceNotFound(data={"uri": path})


def _leaves(path: str) -> InvalidParams:
    return InvalidParams(f"Invalid params: path {path!r} leaves the served directory")
