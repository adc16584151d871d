"""completion/complete: per-argument completers, Enum/Literal values, the app-level handler,
the 100-value cap, errors, and the capability (in memory, both eras)."""

from __future__ import annotations

import enum
from typing import Any, Literal

from features_support import Client, era, rpc_error, run

from mcpkit import App


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"
    GREY = "grey"


PROMPT = {"type": "ref/prompt", "name": "paint"}
TEMPLATE = {"type": "ref/resource", "uri": "paint://{colour}/{size}"}


def make_app() -> App:
    app = App("complete", "1")

    async def many(value: str, given: dict[str, str]) -> list[str]:
        return [f"{value}{i:03}" for i in range(250)]

    @app.prompt(
        completions={
            "finish": lambda value, given: [
                f
                for f in ("matte", "gloss", f"for-{given.get('colour', '?')}")
                if f.startswith(value)
            ],
            "room": many,
        }
    )
    def paint(
        colour: Colour, finish: str, room: str, mode: Literal["fast", "slow"] = "slow"
    ) -> str:
        """Paint something."""
        return f"{colour} {finish} {room} {mode}"

    @app.resource("paint://{colour}/{size}", completions={"size": lambda value, given: ["S", "M"]})
    def pot(colour: Colour, size: str) -> str:
        return f"{colour.value} {size}"

    return app


@era
def test_completion_sources(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            if client.initialize_result is not None:
                assert client.initialize_result["capabilities"]["completions"] == {}
            # Enum parameter: its values, filtered by the prefix
            assert await client.complete(PROMPT, "colour", "gr") == {
                "values": ["green", "grey"],
                "total": 2,
                "hasMore": False,
            }
            # Literal parameter
            assert (await client.complete(PROMPT, "mode", ""))["values"] == ["fast", "slow"]
            # a sync completer that sees the arguments already given
            done = await client.complete(PROMPT, "finish", "", {"colour": "red"})
            assert done["values"] == ["matte", "gloss", "for-red"]
            assert (await client.complete(PROMPT, "finish", "g"))["values"] == ["gloss"]
            # templates: Enum variables and per-variable completers
            assert (await client.complete(TEMPLATE, "colour", "r"))["values"] == ["red"]
            assert (await client.complete(TEMPLATE, "size"))["values"] == ["S", "M"]
            # an argument nothing completes: no values
            assert await client.complete(TEMPLATE, "other", "x") == {
                "values": [],
                "total": 0,
                "hasMore": False,
            }

    run(scenario)


@era
def test_at_most_100_values(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            result = await client.complete(PROMPT, "room", "r")
            assert len(result["values"]) == 100
            assert result["values"][0] == "r000"
            assert (result["total"], result["hasMore"]) == (250, True)

    run(scenario)


@era
def test_app_level_handler(version: str) -> None:
    app = App("handler", "1")
    seen: list[Any] = []

    @app.prompt
    def greet(name: str) -> str:
        """Greets someone."""
        return f"Hello {name}"

    @app.resource("user://{name}")
    def user(name: str) -> str:
        return name

    @app.completion
    async def complete(
        ref: dict[str, Any], argument: str, value: str, given: dict[str, str]
    ) -> list[str]:
        seen.append((ref["type"], argument, value, given))
        return [n for n in ("alice", "bob") if n.startswith(value)]

    async def scenario() -> None:
        async with Client(app, protocol_version=version) as client:
            prompt = {"type": "ref/prompt", "name": "greet"}
            assert (await client.complete(prompt, "name", "a"))["values"] == ["alice"]
            template = {"type": "ref/resource", "uri": "user://{name}"}
            assert (await client.complete(template, "name", "", {"x": "y"}))["values"] == [
                "alice",
                "bob",
            ]
        assert seen == [
            ("ref/prompt", "name", "a", {}),
            ("ref/resource", "name", "", {"x": "y"}),
        ]

    run(scenario)


@era
def test_completion_errors(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            for params in (
                {
                    "ref": {"type": "ref/prompt", "name": "nope"},
                    "argument": {"name": "a", "value": ""},
                },
                {
                    "ref": {"type": "ref/resource", "uri": "no://{x}"},
                    "argument": {"name": "x", "value": ""},
                },
                {"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}},
                {"ref": PROMPT},
                {"ref": PROMPT, "argument": {"name": 1, "value": ""}},
            ):
                error = await rpc_error(client.request("completion/complete", params))
                assert error.code == -32602, params

    run(scenario)


@era
def test_nothing_to_complete_means_no_capability_and_method_not_found(version: str) -> None:
    app = App("plain", "1")

    @app.prompt
    def free(text: str) -> str:
        """Free text."""
        return text

    @app.resource("free://{text}")
    def free_resource(text: str) -> str:
        return text

    async def scenario() -> None:
        async with Client(app, protocol_version=version) as client:
            if client.initialize_result is not None:
                assert "completions" not in client.initialize_result["capabilities"]
            else:
                discovered = await client.request("server/discover")
                assert "completions" not in discovered["capabilities"]
            error = await rpc_error(client.complete({"type": "ref/prompt", "name": "free"}, "text"))
            assert error.code == -32601

    run(scenario)
