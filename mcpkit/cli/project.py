"""What the distribution files read from a project: ``pyproject.toml`` and the TARGET's place.

``mcpkit bundle`` and ``mcpkit registry`` take the server's identity from the ``App`` and the
package's from ``pyproject.toml`` (the nearest one from the current directory upwards, or
``--pyproject FILE``): name, version, description, authors, license, keywords, console scripts,
the README, and ``[tool.mcpkit] registry-name``. A problem is a :class:`ProjectError` whose
message says what to add or change.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from mcpkit.app import App
from mcpkit.cli._io import fail, read_text

__all__ = ["Project", "ProjectError", "find_pyproject", "pyproject_option", "read_project"]

pyproject_option = click.option(
    "--pyproject",
    metavar="FILE",
    help="The project's pyproject.toml (default: the nearest one from here upwards).",
)


class ProjectError(Exception):
    """The project lacks something a distribution file needs (message for the user)."""


class Project:
    """A ``pyproject.toml``: its directory and the tables mcpkit reads."""

    def __init__(self, path: Path, document: Mapping[str, Any]) -> None:
        self.path = path
        self.root = path.parent
        project = document.get("project")
        self.table: Mapping[str, Any] = project if isinstance(project, Mapping) else {}
        tool = document.get("tool", {}).get("mcpkit", {})
        self.mcpkit: Mapping[str, Any] = tool if isinstance(tool, Mapping) else {}

    @property
    def name(self) -> str:
        """``[project] name``, which is the PyPI package's name."""
        name = self.table.get("name")
        if not isinstance(name, str) or not name:
            raise ProjectError(f"{self.path} has no [project] name")
        return name

    def version(self, app: App) -> str:
        """The release version: ``[project] version``, which must be the App's; a dynamic one is
        taken to be the App's (``App(version=...)``)."""
        version = self.table.get("version")
        if version is None:
            return app.version
        if version != app.version:
            raise ProjectError(
                f"the App's version {app.version!r} is not the package's {version!r} "
                f"([project] version in {self.path}); make them one (e.g. "
                "App(version=importlib.metadata.version(...)))"
            )
        return str(version)

    def description(self, app: App) -> str:
        """The App's description, else ``[project] description``."""
        text = app.description or self.table.get("description")
        if not isinstance(text, str) or not text.strip():
            raise ProjectError(
                f"no description: pass App(description=...) or set [project] description "
                f"in {self.path}"
            )
        return text.strip()

    def author(self) -> dict[str, str]:
        """The first of ``[project] authors``: ``{"name", "email"?}``."""
        for author in self.table.get("authors") or []:
            if isinstance(author, Mapping) and isinstance(author.get("name"), str):
                found = {"name": author["name"]}
                if isinstance(author.get("email"), str):
                    found["email"] = author["email"]
                return found
        raise ProjectError(f"no author: add [project] authors = [{{ name = ... }}] to {self.path}")

    def string(self, key: str) -> str | None:
        """A ``[project]`` string (``license``, ``requires-python``), else ``None``."""
        value = self.table.get(key)
        return value if isinstance(value, str) and value else None

    def keywords(self) -> list[str]:
        return [k for k in self.table.get("keywords") or [] if isinstance(k, str)]

    def scripts(self) -> dict[str, str]:
        """``[project.scripts]``: console script name -> ``module:function``."""
        scripts = self.table.get("scripts")
        return dict(scripts) if isinstance(scripts, Mapping) else {}

    def readme(self) -> Path | None:
        """The README file ``[project] readme`` names, else ``README.md`` when it exists."""
        readme = self.table.get("readme")
        if isinstance(readme, Mapping):
            readme = readme.get("file")
        if isinstance(readme, str):
            return self.root / readme
        default = self.root / "README.md"
        return default if default.exists() else None


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` in ``start`` or a directory above it."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def read_project(command: str, explicit: str | None) -> Project:
    """The project of ``--pyproject FILE``, else the nearest one; a usage error when none."""
    path = Path(explicit) if explicit is not None else find_pyproject(Path.cwd())
    if path is None:
        fail(command, "no pyproject.toml here or above; run in the project or pass --pyproject")
    text = read_text(command, str(path))
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        fail(command, "reading pyproject.toml needs Python 3.11 or later (its tomllib)")
    try:
        return Project(path, tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        fail(command, f"{path} is not valid TOML: {exc}")
