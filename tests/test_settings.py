"""Typed settings: each source and its priority, every failure message, and how handlers read
them (``ctx.settings``, an injected parameter, ``app.settings`` in the lifespan)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, SecretStr, model_validator
from typing_extensions import TypedDict

from mcpkit import App, Context, DefinitionError, SettingsError
from mcpkit.settings import default_prefix
from mcpkit.testing import Client


class Weather(BaseModel):
    api_key: SecretStr = Field(description="The service's API key.")
    base_url: str = "https://api.example/v1"
    units: Literal["metric", "imperial"] = Field("metric", description="Units of the answers.")
    timeout: float = Field(10.0, gt=0, le=60, description="Seconds to wait.")
    tags: list[str] = []


def weather_app(**options: Any) -> App:
    return App("weather-server", "1.0", settings=Weather, **options)


def problems(app: App, values: dict[str, Any] | None = None, **sources: Any) -> str:
    with pytest.raises(SettingsError) as caught:
        app.load_settings(values, **sources)
    return str(caught.value)


# ------------------------------------------------------------------------- sources


def test_defaults_fill_what_no_source_sets() -> None:
    settings = weather_app().load_settings(environ={"WEATHER_SERVER_API_KEY": "k"})
    assert settings.model_dump(exclude={"api_key"}) == {
        "base_url": "https://api.example/v1",
        "units": "metric",
        "timeout": 10.0,
        "tags": [],
    }
    assert settings.api_key.get_secret_value() == "k"


def test_the_environment_is_read_as_pydantic_reads_text() -> None:
    environ = {
        "WEATHER_SERVER_API_KEY": "k",
        "WEATHER_SERVER_TIMEOUT": "2.5",
        "WEATHER_SERVER_UNITS": "imperial",
        "WEATHER_SERVER_TAGS": '["a", "b"]',
        "UNRELATED": "x",
    }
    settings = weather_app().load_settings(environ=environ)
    assert (settings.timeout, settings.units, settings.tags) == (2.5, "imperial", ["a", "b"])


def test_os_environ_is_the_default_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEATHER_SERVER_API_KEY", "from-env")
    assert weather_app().settings.api_key.get_secret_value() == "from-env"


def test_an_env_file_is_below_the_environment_and_explicit_values_over_both(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "# comment\nexport WEATHER_SERVER_API_KEY='file-key'\nWEATHER_SERVER_TIMEOUT=3\n"
        "WEATHER_SERVER_UNITS=imperial\nOTHER_THING=1\n",
        encoding="utf-8",
    )
    app = weather_app()
    environ = {"WEATHER_SERVER_TIMEOUT": "4", "WEATHER_SERVER_UNITS": "metric"}
    settings = app.load_settings({"units": "imperial"}, environ=environ, env_file=str(env_file))
    assert settings.api_key.get_secret_value() == "file-key"
    assert (settings.timeout, settings.units) == (4.0, "imperial")


def test_an_empty_variable_counts_as_not_set(tmp_path: Path) -> None:
    """Hosts write "" for an option the user left blank: the default applies."""
    env_file = tmp_path / ".env"
    env_file.write_text("WEATHER_SERVER_TIMEOUT=\n", encoding="utf-8")
    environ = {"WEATHER_SERVER_API_KEY": "k", "WEATHER_SERVER_UNITS": ""}
    settings = weather_app().load_settings(environ=environ, env_file=str(env_file))
    assert (settings.timeout, settings.units) == (10.0, "metric")


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("weather-server", "WEATHER_SERVER_"),
        ("weatherServer", "WEATHER_SERVER_"),
        ("my.app 2", "MY_APP_2_"),
        ("---", ""),
    ],
)
def test_the_default_prefix_is_the_app_name_in_upper_snake(name: str, prefix: str) -> None:
    assert default_prefix(name) == prefix


def test_settings_prefix_replaces_the_default() -> None:
    app = weather_app(settings_prefix="WX_")
    assert app.load_settings(environ={"WX_API_KEY": "k"}).api_key.get_secret_value() == "k"
    bare = weather_app(settings_prefix="")
    assert bare.load_settings(environ={"API_KEY": "k"}).api_key.get_secret_value() == "k"


@dataclasses.dataclass
class DataSettings:
    token: SecretStr
    retries: int = 2


class DictSettings(TypedDict):
    region: str
    debug: bool


def test_a_dataclass_and_a_typeddict_are_settings_too() -> None:
    data = App("d", "1", settings=DataSettings).load_settings(
        environ={"D_TOKEN": "tok-secret", "D_RETRIES": "5"}
    )
    assert (data.token.get_secret_value(), data.retries) == ("tok-secret", 5)
    assert repr(data) == "DataSettings(token=SecretStr('**********'), retries=5)"
    typed = App("t", "1", settings=DictSettings).load_settings(
        environ={"T_REGION": "eu", "T_DEBUG": "true"}
    )
    assert typed == {"region": "eu", "debug": True}


def test_settings_must_be_a_model_dataclass_or_typeddict() -> None:
    with pytest.raises(DefinitionError) as caught:
        App("a", "1", settings=dict)
    assert str(caught.value) == (
        "settings=<class 'dict'>: the settings are a pydantic model, a dataclass or a "
        "TypedDict (one field per setting)"
    )


def test_an_app_without_settings_has_none_and_cannot_load_them() -> None:
    app = App("plain", "1")
    assert app.settings is None
    with pytest.raises(ValueError, match="no settings") as caught:
        app.load_settings({})
    assert str(caught.value) == "App 'plain' has no settings (pass settings=... to App)"


def test_settings_are_validated_once_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    app = weather_app()
    monkeypatch.setenv("WEATHER_SERVER_API_KEY", "first")
    first = app.settings
    monkeypatch.setenv("WEATHER_SERVER_API_KEY", "second")
    assert app.settings is first


# ------------------------------------------------------------------------ failures


def test_a_missing_required_setting_names_its_variable_and_description() -> None:
    assert problems(weather_app(), environ={}) == (
        "invalid settings for 'weather-server' (1 problem):\n"
        "  WEATHER_SERVER_API_KEY: required, not set\n"
        "      api_key: The service's API key."
    )


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("WEATHER_SERVER_COLOUR=red\n", encoding="utf-8")
    environ = {"WEATHER_SERVER_TAGS": "a,b", "WEATHER_SERVER_UNITS": "kelvin"}
    text = problems(
        weather_app(), {"timeout": "-1", "speed": 3}, environ=environ, env_file=str(env_file)
    )
    assert text == (
        "invalid settings for 'weather-server' (6 problems):\n"
        f"  WEATHER_SERVER_COLOUR (from {env_file}, line 1): no such setting (the settings: "
        "WEATHER_SERVER_API_KEY, WEATHER_SERVER_BASE_URL, WEATHER_SERVER_UNITS, "
        "WEATHER_SERVER_TIMEOUT, WEATHER_SERVER_TAGS)\n"
        "  --set speed: no setting named 'speed' (the settings: api_key, base_url, units, "
        "timeout, tags)\n"
        "  WEATHER_SERVER_TAGS = 'a,b' (from the environment): not JSON text (a list or an "
        'object, e.g. ["a"])\n'
        "      tags (no description)\n"
        "  WEATHER_SERVER_API_KEY: required, not set\n"
        "      api_key: The service's API key.\n"
        "  WEATHER_SERVER_UNITS = 'kelvin' (from the environment): Input should be 'metric' or "
        "'imperial'\n"
        "      units: Units of the answers.\n"
        "  WEATHER_SERVER_TIMEOUT = '-1' (from --set): Input should be greater than 0\n"
        "      timeout: Seconds to wait."
    )


class Guarded(BaseModel):
    password: SecretStr = Field(min_length=8, description="The admin password.")
    items: list[int] = []

    @model_validator(mode="after")
    def _items_need_a_password(self) -> Guarded:
        if self.items and self.password.get_secret_value() == "password":
            raise ValueError("choose a better password")
        return self


def test_a_secret_value_is_never_shown() -> None:
    app = App("vault", "1", settings=Guarded)
    text = problems(app, environ={"VAULT_PASSWORD": "hunter2"})
    assert "hunter2" not in text
    assert text == (
        "invalid settings for 'vault' (1 problem):\n"
        "  VAULT_PASSWORD (from the environment; a secret, its value not shown): Value should "
        "have at least 8 items after validation, not 7\n"
        "      password: The admin password."
    )
    settings = app.load_settings(environ={"VAULT_PASSWORD": "correct horse"})
    assert "correct horse" not in repr(settings)
    assert "correct horse" not in str(settings)


def test_an_item_of_a_list_setting_is_named() -> None:
    text = problems(
        App("vault", "1", settings=Guarded),
        environ={"VAULT_PASSWORD": "long enough", "VAULT_ITEMS": '[1, "x"]'},
    )
    assert text == (
        "invalid settings for 'vault' (1 problem):\n"
        "  VAULT_ITEMS = '[1, \"x\"]' (from the environment): Input should be a valid integer, "
        "unable to parse string as an integer (at 1)\n"
        "      items (no description)"
    )


def test_a_whole_settings_check_is_named_by_the_class() -> None:
    text = problems(
        App("vault", "1", settings=Guarded),
        environ={"VAULT_PASSWORD": "password", "VAULT_ITEMS": "[1]"},
    )
    assert text == (
        "invalid settings for 'vault' (1 problem):\n"
        "  Guarded: Value error, choose a better password"
    )


def test_an_env_file_that_cannot_be_read_or_parsed_is_a_problem(tmp_path: Path) -> None:
    missing = tmp_path / "missing.env"
    assert problems(
        weather_app(), environ={"WEATHER_SERVER_API_KEY": "k"}, env_file=str(missing)
    ) == (
        "invalid settings for 'weather-server' (1 problem):\n"
        f"  cannot read --env-file {missing}: [Errno 2] No such file or directory: '{missing}'"
    )
    bad = tmp_path / "bad.env"
    bad.write_text("WEATHER_SERVER_API_KEY\n", encoding="utf-8")
    assert problems(weather_app(), environ={}, env_file=str(bad)) == (
        "invalid settings for 'weather-server' (2 problems):\n"
        f"  {bad}, line 1: 'WEATHER_SERVER_API_KEY' is not KEY=VALUE\n"
        "  WEATHER_SERVER_API_KEY: required, not set\n"
        "      api_key: The service's API key."
    )


def test_the_error_keeps_each_problem() -> None:
    with pytest.raises(SettingsError) as caught:
        weather_app().load_settings({"timeout": 0}, environ={})
    assert caught.value.problems == (
        "  WEATHER_SERVER_API_KEY: required, not set\n      api_key: The service's API key.",
        "  WEATHER_SERVER_TIMEOUT = 0 (from --set): Input should be greater than 0\n"
        "      timeout: Seconds to wait.",
    )


# ------------------------------------------------------------------ handlers read them


def settings_app() -> App:
    @contextlib.asynccontextmanager
    async def lifespan(app: App) -> AsyncIterator[str]:
        yield f"connected to {app.settings.base_url}"

    app = weather_app(lifespan=lifespan)

    @app.tool
    def where(ctx: Context) -> str:
        """Where the service is, and what the lifespan made of it."""
        return f"{ctx.settings.base_url} ({ctx.state})"

    @app.tool
    def ask(question: str, settings: Weather) -> str:
        """Ask the service.

        Args:
            question: What to ask.
        """
        return f"{question} in {settings.units}, key {settings.api_key}"

    return app


def test_tools_read_ctx_settings_and_lifespan_reads_app_settings() -> None:
    app = settings_app()
    with Client(app, settings={"api_key": "k", "base_url": "https://wx.test"}) as client:
        assert client.call_tool("where", {})["content"] == [
            {"type": "text", "text": "https://wx.test (connected to https://wx.test)"}
        ]


def test_a_parameter_of_the_settings_class_is_injected_and_never_published() -> None:
    app = settings_app()
    with Client(app, settings={"api_key": "k", "units": "imperial"}) as client:
        tools = {tool["name"]: tool for tool in client.list_tools()}
        assert tools["ask"]["inputSchema"] == {
            "type": "object",
            "properties": {"question": {"type": "string", "description": "What to ask."}},
            "required": ["question"],
        }
        assert client.call_tool("ask", {"question": "rain?"})["content"] == [
            {"type": "text", "text": "rain? in imperial, key **********"}
        ]


def test_the_client_ignores_the_environment_and_puts_the_settings_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WEATHER_SERVER_BASE_URL", "https://from.env")
    monkeypatch.setenv("WEATHER_SERVER_API_KEY", "env-key")
    app = settings_app()
    before = app.settings
    with Client(app, settings={"api_key": "k"}) as client:
        assert client.call_tool("where", {})["content"][0]["text"].startswith(
            "https://api.example/v1 "
        )
    assert app.settings is before
    with Client(app) as client:  # without settings=: what the environment gave
        assert client.call_tool("where", {})["content"][0]["text"].startswith("https://from.env ")


def test_the_client_reports_bad_settings_before_any_request() -> None:
    with pytest.raises(SettingsError) as caught, Client(settings_app(), settings={"units": "k"}):
        pass  # pragma: no cover (never entered)
    assert str(caught.value) == (
        "invalid settings for 'weather-server' (2 problems):\n"
        "  WEATHER_SERVER_API_KEY: required, not set\n"
        "      api_key: The service's API key.\n"
        "  WEATHER_SERVER_UNITS = 'k' (from Client(settings=...)): Input should be 'metric' or "
        "'imperial'\n"
        "      units: Units of the answers."
    )


def test_client_settings_need_an_app_with_settings() -> None:
    with (
        pytest.raises(ValueError, match="no settings") as caught,
        Client(App("p", "1"), settings={}),
    ):
        pass  # pragma: no cover (never entered)
    assert str(caught.value) == "Client(settings=...): App 'p' has no settings"


def test_a_parameter_of_another_model_is_still_an_argument() -> None:
    app = App("plain", "1")

    @app.tool
    def configure(options: Weather) -> str:
        """Takes a model as its argument: no settings, so nothing is injected."""
        return options.units

    assert "options" in app.tools["configure"].definition["inputSchema"]["properties"]


def test_an_included_apps_tools_read_its_own_settings() -> None:
    part = weather_app()

    @part.tool
    def units(settings: Weather, ctx: Context) -> str:
        """The units, injected and from the context."""
        return f"{settings.units} {ctx.settings.units}"

    part.load_settings({"api_key": "k", "units": "imperial"}, environ={})
    main = App("main", "1")
    main.include(part, prefix="wx")
    with Client(main) as client:
        assert client.call_tool("wx_units", {})["content"] == [
            {"type": "text", "text": "imperial imperial"}
        ]
