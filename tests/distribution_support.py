"""What the ``mcpkit bundle`` and ``mcpkit registry`` tests share: the official schemas (copied
in tests/schemas/, see its README), a throwaway project, and Python 3.10's missing tomllib."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from cli_support import ROOT, assert_usage_error
from click.testing import Result
from jsonschema import Draft7Validator, FormatChecker

SCHEMAS = ROOT / "tests" / "schemas"
MANIFEST_SCHEMA = SCHEMAS / "mcpb" / "mcpb-manifest-v0.3.schema.json"
SERVER_SCHEMA = SCHEMAS / "mcp-registry" / "server.schema.2025-12-11.json"
NO_TOMLLIB = sys.version_info < (3, 11)  # Python 3.10: pyproject.toml cannot be read

PYPROJECT = """\
[project]
name = "acme-mcp"
version = "2.0.0"
description = "The package's own description."
authors = [{ name = "Acme", email = "dev@acme.example" }]
license = "Apache-2.0"
requires-python = ">=3.11"

[project.scripts]
acme-mcp = "server:main"

[tool.mcpkit]
registry-name = "io.github.acme/server"
"""

SERVER = """\
from pydantic import BaseModel, Field, SecretStr

from mcpkit import App


class Settings(BaseModel):
    token: SecretStr = Field(description="The API token.")
    region: str = Field("eu", title="Region")
    retries: int = Field(2, ge=0, lt=10, description="How often to retry.")
    verbose: bool = False


app = App("acme", "2.0.0", description="Acme's tools.", settings=Settings)


@app.tool
def ping() -> str:
    '''Answer pong.'''
    return "pong"
"""


def project(
    tmp_path: Path,
    pyproject: str | None = PYPROJECT,
    server: str = SERVER,
    readme: str = "",
    module: str = "server",
) -> str:
    """A project in ``tmp_path`` (``pyproject=None``: none); the TARGET of its server (in
    ``module``.py: a name no other test imports, when the TARGET names the module)."""
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    if readme:
        (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    (tmp_path / f"{module}.py").write_text(server, encoding="utf-8")
    return f"{tmp_path / f'{module}.py'}:app"


def errors(document: Any, schema: Path) -> list[str]:
    """What the official draft-07 schema finds wrong with ``document`` (formats checked)."""
    validator = Draft7Validator(
        json.loads(schema.read_text(encoding="utf-8")), format_checker=FormatChecker()
    )
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def needs_tomllib(result: Result, command: str) -> bool:
    """On Python 3.10 the command must refuse clearly (exit 2): check that, say so."""
    if not NO_TOMLLIB:
        return False
    assert_usage_error(result, command, "needs Python 3.11 or later")
    return True


def assert_fails(result: Result, command: str, message: str) -> None:
    """Exit 1, nothing on stdout, exactly ``message`` on stderr after the command's prefix."""
    assert (result.exit_code, result.stdout) == (1, ""), result.output
    assert result.stderr == f"mcpkit {command}: error: {message}\n"
