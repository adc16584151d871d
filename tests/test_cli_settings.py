"""Settings from the command line: ``mcpkit run --set/--env-file``, exit code 2 with every
problem before any protocol message, and the same check in ``mcpkit call`` and ``App.run()``."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_support import ROOT, app, assert_usage_error, mcpkit
from stdio_support import Talk, mcpkit_run, server_env

from mcpkit.cli.loader import load_app
from mcpkit.cli.serve import export_settings

WEATHER_DIR = ROOT / "examples" / "weather"
WEATHER = f"{WEATHER_DIR / 'weather_server.py'}:app"
MISSING_KEY = (
    "invalid settings for 'weather' (1 problem):\n"
    "  WEATHER_API_KEY: required, not set\n"
    "      api_key: The weather service's API key.\n"
)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}},
}
FORECAST = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "forecast", "arguments": {"city": "Lyon", "days": 9}},
}


def env_without_settings(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in server_env().items() if not k.startswith("WEATHER_")}
    return env | extra


def run(args: list[str], env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def serve(*args: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Serve the weather example in ``env``, call ``forecast`` once; its structured result."""
    monkeypatch.setattr(os, "environ", env)  # what the server process is started with

    async def scenario() -> dict[str, Any]:
        async with mcpkit_run(WEATHER, *args) as process:
            talk = Talk(process)
            await talk.initialize()
            answer = await talk.request(FORECAST)
            code, log = await talk.end()
            assert code == 0, log
            result: dict[str, Any] = answer["result"]["structuredContent"]
            return result

    return asyncio.run(scenario())


@pytest.mark.parametrize(
    "args",
    [["-m", "mcpkit", "run", WEATHER], ["-m", "mcpkit", "run", WEATHER, "--log-level", "info"]],
)
def test_bad_settings_exit_2_before_any_protocol_message(args: list[str]) -> None:
    """Both the plain ``run TARGET`` (served without click) and the click command."""
    done = run(args, env_without_settings(), json.dumps(INITIALIZE) + "\n")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mcpkit run: error: {MISSING_KEY}"


def test_the_environment_configures_the_served_app(monkeypatch: pytest.MonkeyPatch) -> None:
    env = env_without_settings(WEATHER_API_KEY="k", WEATHER_MAX_DAYS="5")
    result = serve(env=env, monkeypatch=monkeypatch)
    assert result == {
        "url": "https://api.weather.example/v1/forecast?city=Lyon&days=5&units=metric",
        "timeout": 10.0,
        "authenticated": True,
    }


def test_set_wins_over_the_environment_which_wins_over_the_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = tmp_path / "weather.env"
    env_file.write_text(
        "WEATHER_API_KEY=from-file\nWEATHER_UNITS=imperial\nWEATHER_TIMEOUT=3\n", encoding="utf-8"
    )
    env = env_without_settings(WEATHER_TIMEOUT="4", WEATHER_BASE_URL="https://env.test")
    args = ("--env-file", str(env_file), "--set", "base_url=https://set.test")
    result = serve(*args, env=env, monkeypatch=monkeypatch)
    assert result == {
        "url": "https://set.test/forecast?city=Lyon&days=3&units=imperial",
        "timeout": 4.0,
        "authenticated": True,
    }


def test_every_bad_source_is_reported_together(tmp_path: Path) -> None:
    env_file = tmp_path / "weather.env"
    env_file.write_text("WEATHER_API_KEY=k\nWEATHER_UNIT=metric\n", encoding="utf-8")
    args = ["--env-file", str(env_file), "--set", "timeout=99", "--set", "colour=red"]
    done = run(["-m", "mcpkit", "run", WEATHER, *args], env_without_settings(WEATHER_MAX_DAYS="0"))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "mcpkit run: error: invalid settings for 'weather' (4 problems):\n"
        f"  WEATHER_UNIT (from {env_file}, line 2): no such setting (the settings: "
        "WEATHER_API_KEY, WEATHER_BASE_URL, WEATHER_UNITS, WEATHER_TIMEOUT, WEATHER_MAX_DAYS)\n"
        "  --set colour: no setting named 'colour' (the settings: api_key, base_url, units, "
        "timeout, max_days)\n"
        "  WEATHER_TIMEOUT = '99' (from --set): Input should be less than or equal to 60\n"
        "      timeout: Seconds to wait for the service.\n"
        "  WEATHER_MAX_DAYS = '0' (from the environment): Input should be greater than or equal "
        "to 1\n"
        "      max_days (no description)\n"
    )


def test_a_set_that_is_not_field_value_is_a_usage_error() -> None:
    result = mcpkit("run", WEATHER, "--set", "timeout")
    assert_usage_error(result, "run", "--set: 'timeout' is not KEY=VALUE")


def test_an_app_without_settings_takes_no_set_or_env_file() -> None:
    done = run(["-m", "mcpkit", "run", app("documented"), "--set", "a=1"], server_env())
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "mcpkit run: error: invalid settings for 'documented <&> app' (1 problem):\n"
        "  --env-file and --set: this App declares no settings (App(..., settings=MySettings))\n"
    )


def test_http_checks_the_settings_before_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("WEATHER_")]:
        monkeypatch.delenv(key)
    result = mcpkit("run", WEATHER, "--transport", "http", "--port", "1")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"mcpkit run: error: {MISSING_KEY}"


def test_http_workers_get_the_set_and_env_file_values(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each worker loads the App again: the values travel in the environment."""
    environ = {"WEATHER_UNITS": "metric", "PATH": "/bin"}
    monkeypatch.setattr(os, "environ", environ)
    env_file = tmp_path / "weather.env"
    env_file.write_text("WEATHER_API_KEY=k\nWEATHER_UNITS=imperial\n", encoding="utf-8")
    export_settings(load_app(WEATHER), str(env_file), ("timeout=5", "base_url=https://x=y"))
    assert environ == {
        "WEATHER_UNITS": "metric",
        "PATH": "/bin",
        "WEATHER_API_KEY": "k",
        "WEATHER_TIMEOUT": "5",
        "WEATHER_BASE_URL": "https://x=y",
    }


def test_call_checks_the_settings_first(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("WEATHER_")]:
        monkeypatch.delenv(key)
    result = mcpkit("call", WEATHER, "forecast", "--arg", "city=Lyon", "--arg", "days=1")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"mcpkit call: error: {MISSING_KEY}"


def test_app_run_exits_2_with_the_problems() -> None:
    """The console script of a published server calls ``app.run()``."""
    code = "import weather_server; weather_server.main()"
    env = env_without_settings(PYTHONPATH=os.pathsep.join([str(WEATHER_DIR), str(ROOT)]))
    done = run(["-c", code], env, json.dumps(INITIALIZE) + "\n")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == MISSING_KEY


def test_the_settings_of_an_included_app_are_checked_too(tmp_path: Path) -> None:
    composed = tmp_path / "composed_weather.py"
    composed.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(WEATHER_DIR)!r})\n"
        "from weather_server import app as weather\n"
        "from mcpkit import App\n"
        "app = App('main', '1')\n"
        "app.include(weather, prefix='wx')\n",
        encoding="utf-8",
    )
    done = run(["-m", "mcpkit", "run", f"{composed}:app"], env_without_settings())
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"mcpkit run: error: {MISSING_KEY}"
