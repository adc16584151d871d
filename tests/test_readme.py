"""The README's example and set-up commands are true."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mcpkit import App
from mcpkit.testing import Client

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def run_example() -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "readme_example"}
    exec(blocks("python")[0], namespace)
    return namespace


def test_the_readme_shows_a_complete_example_of_15_to_25_lines_with_an_enum_argument() -> None:
    """A house rule for the README, not behaviour: its first example is a whole server in
    15-25 lines (that it runs as written is ``test_example_serves_its_tool``)."""
    example = blocks("python")[0]
    assert 15 <= len(example.strip().splitlines()) <= 25
    assert "(str, Enum)" in example


def test_example_serves_its_tool() -> None:
    app = run_example()["app"]
    assert isinstance(app, App)
    with Client(app) as client:
        (tool,) = client.list_tools()
        assert tool["inputSchema"] == {
            "type": "object",
            "properties": {
                "project_dir": {"type": "string", "description": "Folder that holds the project."},
                "arch": {
                    "type": "string",
                    "enum": ["arm64", "x86_64"],
                    "description": "CPU architecture to build for.",
                },
                "release": {
                    "type": "boolean",
                    "default": False,
                    "description": "Build with optimisations.",
                },
            },
            "required": ["project_dir", "arch"],
        }
        result = client.call_tool("build-app", {"project_dir": ".", "arch": "arm64"})
        assert result["structuredContent"] == {"exit_code": 0, "output": "./app-debug-arm64.pkg"}


def test_testing_snippet_runs() -> None:
    namespace = run_example()
    exec(blocks("python")[1], namespace)
    namespace["test_build"]()


def test_set_up_is_two_commands_matching_ci() -> None:
    commands = [line for block in blocks("sh") for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    serve, test = commands
    assert serve.startswith("python3 -m venv .venv && ")
    assert serve.endswith("mcpkit run examples/build_app.py:app")
    assert test.startswith("python3 -m venv .venv && ")
    install = re.search(r"\.venv/bin/pip install (.+?) &&", test)
    assert install is not None
    ci = (ROOT / ".ci" / "run").read_text()
    assert f'/bin/pip" install {install.group(1)}' in ci
    assert test.endswith(".venv/bin/python -m pytest")
    assert "run -m pytest" in ci  # the same command, under coverage


def test_set_up_ends_with_the_dev_page_as_the_next_thing_to_try() -> None:
    set_up = README.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    assert blocks("console")[0] == "$ .venv/bin/mcpkit dev examples/build_app.py:app\n"
    assert set_up.rstrip().endswith(
        "![mcpkit dev on the seed's build-app](docs/images/dev-page.png)"
    )
    assert (ROOT / "docs" / "images" / "dev-page.png").is_file()
