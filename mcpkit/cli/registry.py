"""``mcpkit registry TARGET``: the MCP Registry ``server.json`` of a server published on PyPI.

The file (schema 2025-12-11) names the server (``[tool.mcpkit] registry-name`` in
``pyproject.toml``, or ``--name``: a reverse-DNS ``namespace/name``), describes it in at most
100 characters, and lists one ``pypi`` package: the project, at its exact version, launched with
``uvx`` over stdio, with one environment variable per setting of the App. The registry checks
that the package's README (its PyPI description) carries ``mcp-name: <name>``; ``--check``
checks that line too.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click

from mcpkit.app import App
from mcpkit.cli._io import emit, fail, load_compiled, one_output, output_option
from mcpkit.cli.project import Project, ProjectError, pyproject_option, read_project
from mcpkit.cli.snapshot import dumps
from mcpkit.settings import Setting

__all__ = ["SCHEMA", "environment_variable", "registry", "server_json"]

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
NAME = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
"""A registry name, as the schema's pattern says (3 to 200 characters)."""
MAX_DESCRIPTION = 100
_FORMATS = {"integer": "number", "number": "number", "boolean": "boolean"}


@click.command()
@click.argument("target")
@output_option
@click.option(
    "--check",
    metavar="FILE",
    help="Compare with FILE (exit 1 with a diff when they differ) and check the README's "
    "mcp-name line.",
)
@click.option("--name", help="The registry name (default: [tool.mcpkit] registry-name).")
@pyproject_option
def registry(
    target: str, output: str | None, check: str | None, name: str | None, pyproject: str | None
) -> None:
    """Write the MCP Registry server.json of the App that TARGET names."""
    one_output("registry", output, check)
    app = load_compiled("registry", target)
    project = read_project("registry", pyproject)
    try:
        name = _name(project, name)
        text = dumps(server_json(app, project, name))
    except ProjectError as exc:
        fail("registry", str(exc), code=1)
    proven = _readme_names(project, name)
    if not proven:  # an error for --check, a warning when writing
        level = "warning" if check is None else "error"
        click.echo(f"mcpkit registry: {level}: {_unproven(project, name)}", err=True)
    emit("registry", text, output, check)
    if not proven and check is not None:
        raise click.exceptions.Exit(1)


def server_json(app: App, project: Project, name: str) -> dict[str, Any]:
    """The ``server.json`` of ``app``, published as ``project``'s PyPI package."""
    description = project.description(app)
    if len(description) > MAX_DESCRIPTION:
        raise ProjectError(
            f"the description is {len(description)} characters; the MCP Registry takes at most "
            f"{MAX_DESCRIPTION}: shorten App(description=...) (or [project] description)"
        )
    version = project.version(app)
    package: dict[str, Any] = {
        "registryType": "pypi",
        "registryBaseUrl": "https://pypi.org",
        "identifier": _launched(project),
        "version": version,
        "runtimeHint": "uvx",
        "transport": {"type": "stdio"},
    }
    settings = () if app.settings_spec is None else app.settings_spec.fields
    if settings:
        package["environmentVariables"] = [environment_variable(s) for s in settings]
    found: dict[str, Any] = {"$schema": SCHEMA, "name": name}
    if app.title:
        found["title"] = app.title
    found |= {"description": description, "version": version}
    if app.website_url:
        found["websiteUrl"] = app.website_url
    found["packages"] = [package]
    return found


def environment_variable(setting: Setting) -> dict[str, Any]:
    """One setting as a package's environment variable."""
    schema = setting.schema
    found: dict[str, Any] = {
        "name": setting.env,
        "description": setting.description,
        "isRequired": setting.required,
        "isSecret": setting.secret,
        "format": _FORMATS.get(str(schema.get("type")), "string"),
    }
    choices = schema.get("enum")
    if isinstance(choices, list) and all(isinstance(c, str) for c in choices):
        found["choices"] = choices
    if "default" in schema and not setting.secret and schema["default"] is not None:
        default = schema["default"]
        found["default"] = default if isinstance(default, str) else json.dumps(default)
    return found


def _name(project: Project, name: str | None) -> str:
    name = name if name is not None else project.mcpkit.get("registry-name")
    if name is None:
        raise ProjectError(
            'no registry name: set [tool.mcpkit] registry-name = "io.github.you/server" in '
            f"{project.path}, or pass --name"
        )
    if not (isinstance(name, str) and NAME.fullmatch(name) and 3 <= len(name) <= 200):
        raise ProjectError(
            f"registry name {name!r} is not a reverse-DNS namespace/name, like "
            "io.github.you/server (letters, digits, '.' and '-', then '/', then letters, "
            "digits, '.', '_' and '-')"
        )
    return name


def _launched(project: Project) -> str:
    """The package, which must have a console script of its own name (what ``uvx`` runs)."""
    package = project.name
    scripts = project.scripts()
    if not scripts:
        raise ProjectError(
            f"{project.path} has no console script to launch: add [project.scripts] "
            f'{package} = "your_module:main" (a function that calls app.run())'
        )
    if _normal(package) not in {_normal(script) for script in scripts}:
        raise ProjectError(
            f"uvx launches the console script named like the package ({package!r}), and "
            f"[project.scripts] has only {', '.join(map(repr, scripts))}; add {package} = ..."
        )
    return package


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _readme_names(project: Project, name: str) -> bool:
    readme = project.readme()
    if readme is None or not readme.is_file():
        return False
    return f"mcp-name: {name}" in readme.read_text(encoding="utf-8")


def _unproven(project: Project, name: str) -> str:
    readme = project.readme() or project.root / "README.md"
    return (
        f"{readme} lacks the line `mcp-name: {name}`, which the MCP Registry reads on PyPI to "
        "prove the package is this server's (an HTML comment hides it: <!-- mcp-name: ... -->)"
    )
