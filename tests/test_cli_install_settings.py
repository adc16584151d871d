"""``mcpkit install --set``: an App's settings become the entry's environment variables, checked
as the server will check them when the client starts it (nothing is written otherwise)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from cli_support import BUILD_APP, ROOT, assert_usage_error, mcpkit

WEATHER = f"{ROOT / 'examples' / 'weather' / 'weather_server.py'}:app"


@pytest.fixture(autouse=True)
def no_weather_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry's environment is what counts, never this process's."""
    for key in [k for k in os.environ if k.startswith("WEATHER_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("WEATHER_API_KEY", "ignored: the client does not pass it on")


def test_set_becomes_the_settings_variable_of_the_entry() -> None:
    result = mcpkit(
        "install",
        "--print",
        "cursor",
        WEATHER,
        "--set",
        "api_key=k",
        "--set",
        "units=imperial",
        "--env",
        "WEATHER_TIMEOUT=5",
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "mcpServers": {
            "weather": {
                "command": os.path.abspath(sys.executable),
                "args": ["-m", "mcpkit", "run", WEATHER],
                "env": {
                    "WEATHER_TIMEOUT": "5",
                    "WEATHER_API_KEY": "k",
                    "WEATHER_UNITS": "imperial",
                },
            }
        }
    }


def test_settings_the_server_would_refuse_are_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    config = tmp_path / "mcp.json"
    result = mcpkit("install", "cursor", WEATHER, "--config", str(config), "--set", "timeout=0")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "mcpkit install: error: the server would not start: invalid settings for 'weather' "
        "(2 problems):\n"
        "  WEATHER_API_KEY: required, not set\n"
        "      api_key: The weather service's API key.\n"
        "  WEATHER_TIMEOUT = '0' (from the environment): Input should be greater than 0\n"
        "      timeout: Seconds to wait for the service.\n"
        "(give each with --set FIELD=VALUE)\n"
    )
    assert not config.exists()


@pytest.mark.parametrize(
    ("target", "item", "message"),
    [
        (
            WEATHER,
            "colour=red",
            "--set colour: no setting named 'colour' (api_key, base_url, units, timeout, max_days)",
        ),
        (WEATHER, "api_key", "--set: 'api_key' is not KEY=VALUE"),
        (BUILD_APP, "a=1", "--set: this App declares no settings (App(..., settings=MySettings))"),
    ],
    ids=["unknown-field", "not-a-pair", "no-settings"],
)
def test_a_bad_set_is_a_usage_error(target: str, item: str, message: str) -> None:
    result = mcpkit("install", "--print", "cursor", target, "--set", item)
    assert_usage_error(result, "install", message)
