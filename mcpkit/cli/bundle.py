"""``mcpkit bundle TARGET``: the ``manifest.json`` of an MCP Bundle (``.mcpb``), version 0.3.

Everything in it comes from the code: name, version, title and description from the ``App``
(author, license, keywords, the Python requirement from ``pyproject.toml``), ``tools`` and
``prompts`` as the server lists them, ``user_config`` from the App's settings, and a ``server``
that starts ``python -m mcpkit run`` on the bundled file with each setting passed as
``${user_config.FIELD}`` in its environment. Packing the archive (the dependencies vendored in
``lib/``, per platform) is the official ``mcpb pack``'s job: see ``docs/distribution.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from mcpkit.app import App
from mcpkit.cli._io import check_option, emit, fail, load_compiled, one_output, output_option
from mcpkit.cli.loader import is_path_target, split_target
from mcpkit.cli.project import Project, ProjectError, pyproject_option, read_project
from mcpkit.cli.snapshot import dumps, snapshot
from mcpkit.protocol.versions import LATEST_HANDSHAKE
from mcpkit.settings import Setting

__all__ = ["MANIFEST_VERSION", "bundle", "manifest", "user_config"]

MANIFEST_VERSION = "0.3"
"""The newest stable MCPB manifest version (``@anthropic-ai/mcpb``'s ``MANIFEST.md``)."""

_BOUNDS = (
    ("minimum", "min"),
    ("exclusiveMinimum", "min"),
    ("maximum", "max"),
    ("exclusiveMaximum", "max"),
)
_PATH_FORMATS = {"directory-path": "directory", "file-path": "file"}


@click.command()
@click.argument("target")
@output_option
@check_option
@pyproject_option
def bundle(target: str, output: str | None, check: str | None, pyproject: str | None) -> None:
    """Write the MCP Bundle manifest.json of the App that TARGET names.

    Then `mcpb pack` makes the .mcpb archive (see docs/distribution.md).
    """
    one_output("bundle", output, check)
    app = load_compiled("bundle", target)
    project = read_project("bundle", pyproject)
    try:
        text = dumps(manifest(app, project, target))
    except ProjectError as exc:
        fail("bundle", str(exc), code=1)
    emit("bundle", text, output, check)


def manifest(app: App, project: Project, target: str) -> dict[str, Any]:
    """The manifest of ``app`` (served from ``target``) in ``project``."""
    listed = snapshot(app, LATEST_HANDSHAKE)
    found: dict[str, Any] = {
        "manifest_version": MANIFEST_VERSION,
        "name": app.name,
        "version": project.version(app),
        "description": project.description(app),
        "author": project.author(),
        "server": _server(app, project, target),
    }
    optional = {
        "display_name": app.title,
        "homepage": app.website_url,
        "license": project.string("license"),
        "keywords": project.keywords(),
        "tools": [_tool(tool) for tool in listed["tools/list"]],
        "prompts": [_prompt(prompt) for prompt in listed["prompts/list"]],
        "user_config": {s.name: user_config(s) for s in _settings(app)},
    }
    found.update({key: value for key, value in optional.items() if value})
    python = project.string("requires-python")
    if python:
        found["compatibility"] = {"runtimes": {"python": python}}
    return found


def _settings(app: App) -> tuple[Setting, ...]:
    return () if app.settings_spec is None else app.settings_spec.fields


def _server(app: App, project: Project, target: str) -> dict[str, Any]:
    module_part, attr = split_target(target)
    if is_path_target(module_part):
        entry = _inside(Path(module_part), project)
        served = f"${{__dirname}}/{entry}" + (f":{attr}" if attr else "")
    else:
        entry, served = module_part.replace(".", "/") + ".py", target
    env = {"PYTHONPATH": "${__dirname}/lib"}
    env |= {s.env: f"${{user_config.{s.name}}}" for s in _settings(app)}
    python3 = {"command": "python3"}  # macOS and Linux have no `python` by default
    config = {
        "command": "python",
        "args": ["-m", "mcpkit", "run", served],
        "env": env,
        "platform_overrides": {"darwin": python3, "linux": python3},
    }
    return {"type": "python", "entry_point": entry, "mcp_config": config}


def _inside(path: Path, project: Project) -> str:
    try:
        return path.resolve().relative_to(project.root.resolve()).as_posix()
    except ValueError:
        raise ProjectError(
            f"{path} is not inside the project ({project.root}); a bundle holds the project's "
            "files: run from the project or pass --pyproject"
        ) from None


def _tool(tool: dict[str, Any]) -> dict[str, Any]:
    found = {"name": tool["name"]}
    if tool.get("description"):
        found["description"] = tool["description"]
    return found


def _prompt(prompt: dict[str, Any]) -> dict[str, Any]:
    """A prompt as the manifest lists it; its ``text`` (required there) is its description,
    since the messages exist only when the server renders them."""
    text = prompt.get("description") or prompt["name"]
    found = {"name": prompt["name"], "description": text, "text": text}
    arguments = [argument["name"] for argument in prompt.get("arguments") or []]
    if arguments:
        found["arguments"] = arguments
    return found


def user_config(setting: Setting) -> dict[str, Any]:
    """One setting as a ``user_config`` entry (the host's configuration form)."""
    schema = setting.schema
    title = schema.get("title")
    found: dict[str, Any] = {
        "type": _type(schema),
        "title": title if isinstance(title, str) and title else setting.name,
        "description": setting.description,
        "required": setting.required,
    }
    if setting.secret:
        found["sensitive"] = True
    default = schema.get("default")
    if not setting.secret and isinstance(default, (str, int, float)):  # bool is an int
        found["default"] = default
    for key, bound in _BOUNDS:  # the form's bounds; the server still checks exclusive ones
        if isinstance(schema.get(key), (int, float)):
            found[bound] = schema[key]
    return found


def _type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if kind in ("integer", "number"):
        return "number"
    if kind == "boolean":
        return "boolean"
    return _PATH_FORMATS.get(str(schema.get("format")), "string")
