"""The seed's example server: a simulated build tool and a lint check.

Run it with ``mcpkit run examples/build_app.py:app``.
"""

from __future__ import annotations

from enum import Enum

from typing_extensions import TypedDict

from mcpkit import App

app = App("builder", version="1.0.0")


class Arch(str, Enum):
    arm64 = "arm64"
    x86_64 = "x86_64"


class Configuration(str, Enum):
    Debug = "Debug"
    Release = "Release"


class BuildResult(TypedDict):
    exit_code: int
    output: str


@app.tool(name="build-app")
def build_app(
    project_dir: str, arch: Arch, configuration: Configuration | None = None
) -> BuildResult:
    """프로젝트를 빌드한다"""
    config = configuration or Configuration.Debug
    package = f"{project_dir.rstrip('/').rsplit('/', 1)[-1]}-{config.value.lower()}-{arch.value}"
    return {"exit_code": 0, "output": f"{package}.pkg"}


@app.tool(name="lint-check")
def lint_check() -> BuildResult:
    """코드 린트 검사를 실행한다"""
    return {"exit_code": 0, "output": "no problems found"}
