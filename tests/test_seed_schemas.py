"""Seed acceptance: ``examples/build_app.py`` publishes exactly the seed's tool definitions."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcpkit import App
from mcpkit._workers import Workers
from mcpkit.exceptions import InvalidArguments

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "build_app.py"

SEED_BUILD_APP = {
    "type": "object",
    "properties": {
        "project_dir": {"type": "string"},
        "configuration": {"type": "string", "enum": ["Debug", "Release"]},
        "arch": {"type": "string", "enum": ["arm64", "x86_64"]},
    },
    "required": ["project_dir", "arch"],
}
SEED_LINT_CHECK: dict[str, Any] = {"type": "object", "properties": {}}


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("seed_build_app", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclass/TypedDict resolution looks the module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def app() -> App:
    module_app = load_example().app
    assert isinstance(module_app, App)
    module_app.compile()
    return module_app


def as_compared(schema: dict[str, Any]) -> dict[str, Any]:
    """``required`` is a set in the seed's acceptance rule; everything else compares exactly."""
    out = dict(schema)
    if "required" in out:
        out["required"] = sorted(out["required"])
        assert len(out["required"]) == len(set(out["required"]))
    return out


@pytest.mark.parametrize(
    ("name", "description", "schema"),
    [
        pytest.param("build-app", "프로젝트를 빌드한다", SEED_BUILD_APP, id="build-app"),
        pytest.param("lint-check", "코드 린트 검사를 실행한다", SEED_LINT_CHECK, id="lint-check"),
    ],
)
def test_seed_definitions(app: App, name: str, description: str, schema: dict[str, Any]) -> None:
    definition = app.tools[name].definition
    assert definition["description"] == description
    assert as_compared(definition["inputSchema"]) == as_compared(schema)


def test_tool_order(app: App) -> None:
    assert list(app.tools) == ["build-app", "lint-check"]


def test_build_app_call(app: App) -> None:
    tool = app.tools["build-app"]
    arguments = {"project_dir": "./app", "configuration": "Release", "arch": "arm64"}
    value = asyncio.run(tool.run(arguments, None, Workers()))
    assert value == {"exit_code": 0, "output": "app-release-arm64.pkg"}
    assert tool.to_result(value) == {
        "content": [{"type": "text", "text": '{"exit_code":0,"output":"app-release-arm64.pkg"}'}],
        "structuredContent": {"exit_code": 0, "output": "app-release-arm64.pkg"},
        "isError": False,
    }


def test_build_app_rejects_unknown_arch(app: App) -> None:
    with pytest.raises(InvalidArguments) as caught:
        app.tools["build-app"].validate({"project_dir": "./app", "arch": "ARM"})
    assert caught.value.detail == {
        "field": "arch",
        "expected": ["arm64", "x86_64"],
        "received": "ARM",
    }
