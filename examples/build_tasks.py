"""A build tool that runs as a task (the 2026-07-28 tasks extension, SEP-2663).

A build takes a few seconds, so a client that declares ``io.modelcontextprotocol/tasks`` gets a
task id at once and polls ``tasks/get`` while the build reports its steps as the task's
``statusMessage``. Older clients, and clients without the extension, get the result inline, as
from ``examples/build_app.py``. Run it with ``mcpkit run examples/build_tasks.py:app``.
"""

from __future__ import annotations

import asyncio
from enum import Enum

from pydantic import BaseModel
from typing_extensions import TypedDict

from mcpkit import App, Context, ServerOptions

app = App("builder", version="1.0.0", options=ServerOptions(task_poll_interval_ms=500))

STEPS = ("resolving dependencies", "compiling", "linking", "packaging")


class Arch(str, Enum):
    arm64 = "arm64"
    x86_64 = "x86_64"


class Configuration(str, Enum):
    Debug = "Debug"
    Release = "Release"


class BuildResult(TypedDict):
    exit_code: int
    output: str


class Approval(BaseModel):
    publish: bool


@app.tool(name="build-app", task="optional", task_ttl_ms=600_000)
async def build_app(
    project_dir: str,
    arch: Arch,
    ctx: Context,
    configuration: Configuration | None = None,
    step_seconds: float = 0.75,
) -> BuildResult:
    """프로젝트를 빌드한다 (a few seconds; a task for clients that support tasks)"""
    for number, step in enumerate(STEPS, start=1):
        await ctx.report_progress(number - 1, len(STEPS), message=f"{step} ({number}/4)")
        await asyncio.sleep(step_seconds)
    config = configuration or Configuration.Debug
    package = f"{project_dir.rstrip('/').rsplit('/', 1)[-1]}-{config.value.lower()}-{arch.value}"
    return {"exit_code": 0, "output": f"{package}.pkg"}


@app.tool(name="release-app", task="required")
async def release_app(project_dir: str, ctx: Context) -> BuildResult:
    """Builds a release and asks before publishing it (runs only as a task)."""
    name = project_dir.rstrip("/").rsplit("/", 1)[-1]
    await ctx.report_progress(0, 2, message="building the release")
    answer = await ctx.elicit(f"Publish {name}-release?", Approval)
    if answer.action != "accept" or answer.content is None or not answer.content.publish:
        return {"exit_code": 1, "output": "not published"}
    await ctx.report_progress(1, 2, message="publishing")
    return {"exit_code": 0, "output": f"{name}-release published"}
