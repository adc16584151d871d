"""A weather server configured with typed settings: ``App(settings=WeatherSettings)``.

The settings are read once, at start, from ``WEATHER_*`` environment variables (an env file with
``mcpkit run --env-file``, single fields with ``--set``); a missing API key stops the server
with exit code 2 before it answers anything. This example stays offline: ``forecast`` says
which request it would send instead of sending it.

Serve it with ``WEATHER_API_KEY=... mcpkit run examples/weather/weather_server.py:app``; its
``manifest.json`` and ``server.json`` are generated with ``mcpkit bundle`` and
``mcpkit registry`` (``docs/examples/weather.*.json``, kept fresh by CI).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr

from mcpkit import App, Context


class WeatherSettings(BaseModel):
    """What the server needs to reach the weather service."""

    api_key: SecretStr = Field(description="The weather service's API key.")
    base_url: str = Field("https://api.weather.example/v1", description="The service's base URL.")
    units: Literal["metric", "imperial"] = Field("metric", description="Units of the forecasts.")
    timeout: float = Field(10.0, gt=0, le=60, description="Seconds to wait for the service.")
    max_days: int = Field(3, ge=1, le=14)


app = App(
    "weather",
    version="1.2.0",
    title="Weather",
    description="Forecasts for a city, from a weather service configured with typed settings.",
    settings=WeatherSettings,
)


class Request(BaseModel):
    """The request the server would send to the weather service."""

    url: str
    timeout: float
    authenticated: bool


@app.tool
def forecast(city: str, days: int, settings: WeatherSettings) -> Request:
    """The forecast for a city (this example returns the request it would send).

    Args:
        city: The city's name, e.g. "Lyon".
        days: How many days ahead, at most the server's ``max_days``.
    """
    days = min(days, settings.max_days)
    url = f"{settings.base_url}/forecast?city={city}&days={days}&units={settings.units}"
    return Request(url=url, timeout=settings.timeout, authenticated=bool(settings.api_key))


@app.tool
def units(ctx: Context) -> str:
    """The units this server reports in ("metric" or "imperial")."""
    settings: WeatherSettings = ctx.settings
    return settings.units


@app.prompt
def packing_list(city: str) -> str:
    """Ask what to pack for a trip, given the forecast for a city."""
    return f"Check the forecast for {city} with the forecast tool, then suggest what to pack."


def main() -> None:
    """The console script (``mcpkit-weather-example``): serve over stdio."""
    app.run()
