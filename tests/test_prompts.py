"""Prompts: arguments from the signature, string parsing, every accepted return shape,
errors, pagination (in memory, both eras)."""

from __future__ import annotations

import base64
from typing import Any, Literal

import pytest
from features_support import Client, era, rpc_error, run

from mcpkit import App, Context, DefinitionError, EmbeddedResource, Image, ServerOptions, Text
from mcpkit.prompts import Message

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def make_app(**options: Any) -> App:
    app = App("prompts", "1.0.0", **options)

    @app.prompt
    def review(code: str, strict: bool = False, rounds: int = 1) -> str:
        """Review some code.

        Args:
            code: The code to review.
            strict: Whether to be strict.
            rounds: How many passes.
        """
        return f"Review ({'strict' if strict else 'lenient'}, {rounds}x):\n{code}"

    @app.prompt(name="chat", title="A chat", description="Several messages.")
    def conversation(topic: Literal["cats", "dogs"]) -> list[Any]:
        return [
            Message(f"Tell me about {topic}."),
            Message(Text("Gladly."), role="assistant"),
            {"role": "user", "content": "And more?"},
            Message(Image(data=PNG, mime_type="image/png")),
            Message(EmbeddedResource(uri="memo://x", mime_type="text/plain", text="embedded")),
            Message({"type": "text", "text": "a raw block"}, role="assistant"),
        ]

    @app.prompt
    async def context_aware(ctx: Context) -> Message:
        """Knows its protocol version."""
        return Message(f"version {ctx.protocol_version}", role="assistant")

    return app


@era
def test_list_prompts(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            prompts = await client.list_prompts()
            assert prompts == [
                {
                    "name": "review",
                    "description": "Review some code.",
                    "arguments": [
                        {"name": "code", "description": "The code to review.", "required": True},
                        {
                            "name": "strict",
                            "description": "Whether to be strict.",
                            "required": False,
                        },
                        {"name": "rounds", "description": "How many passes.", "required": False},
                    ],
                },
                {
                    "name": "chat",
                    "title": "A chat",
                    "description": "Several messages.",
                    "arguments": [{"name": "topic", "required": True}],
                },
                {
                    "name": "context_aware",
                    "description": "Knows its protocol version.",
                    "arguments": [],
                },
            ]
            if client.initialize_result is not None:
                caps = client.initialize_result["capabilities"]
                assert caps["prompts"] == {"listChanged": True}

    run(scenario)


@era
def test_get_prompt_parses_string_arguments(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            result = await client.get_prompt(
                "review", {"code": "x = 1", "strict": "true", "rounds": "3"}
            )
            assert result["description"] == "Review some code."
            assert result["messages"] == [
                {"role": "user", "content": {"type": "text", "text": "Review (strict, 3x):\nx = 1"}}
            ]
            plain = await client.get_prompt("review", {"code": "y"})
            assert plain["messages"][0]["content"]["text"] == "Review (lenient, 1x):\ny"

    run(scenario)


@era
def test_get_prompt_accepts_messages_blocks_and_lists(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            messages = (await client.get_prompt("chat", {"topic": "cats"}))["messages"]
            assert [m["role"] for m in messages] == [
                "user",
                "assistant",
                "user",
                "user",
                "user",
                "assistant",
            ]
            assert messages[0]["content"] == {"type": "text", "text": "Tell me about cats."}
            assert messages[1]["content"] == {"type": "text", "text": "Gladly."}
            assert messages[2]["content"] == {"type": "text", "text": "And more?"}
            assert messages[3]["content"]["type"] == "image"
            assert messages[3]["content"]["mimeType"] == "image/png"
            assert messages[4]["content"] == {
                "type": "resource",
                "resource": {"uri": "memo://x", "mimeType": "text/plain", "text": "embedded"},
            }
            assert messages[5]["content"] == {"type": "text", "text": "a raw block"}
            single = await client.get_prompt("context_aware")
            assert single["messages"] == [
                {"role": "assistant", "content": {"type": "text", "text": f"version {version}"}}
            ]

    run(scenario)


@era
def test_prompt_errors_are_invalid_params(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            unknown = await rpc_error(client.get_prompt("nope"))
            assert (unknown.code, unknown.message) == (-32602, "Unknown prompt: nope")
            missing = await rpc_error(client.get_prompt("review", {}))
            assert missing.code == -32602
            assert missing.data == {"field": "code", "expected": "required", "received": None}
            malformed = await rpc_error(client.get_prompt("review", {"code": "c", "rounds": "2x"}))
            assert malformed.code == -32602
            assert malformed.data["field"] == "rounds"
            literal = await rpc_error(client.get_prompt("chat", {"topic": "birds"}))
            assert literal.data["expected"] == ["cats", "dogs"]
            extra = await rpc_error(client.get_prompt("review", {"code": "c", "other": "1"}))
            assert extra.data["field"] == "other"
            not_string = await rpc_error(
                client.request("prompts/get", {"name": "review", "arguments": {"code": 1}})
            )
            assert not_string.code == -32602
            not_object = await rpc_error(
                client.request("prompts/get", {"name": "review", "arguments": []})
            )
            assert not_object.code == -32602
            no_name = await rpc_error(client.request("prompts/get", {}))
            assert no_name.code == -32602

    run(scenario)


@era
def test_prompt_pagination(version: str) -> None:
    async def scenario() -> None:
        async with Client(
            make_app(options=ServerOptions(page_size=1)), protocol_version=version
        ) as client:
            first = await client.request("prompts/list")
            assert [p["name"] for p in first["prompts"]] == ["review"]
            assert [p["name"] for p in await client.list_prompts()] == [
                "review",
                "chat",
                "context_aware",
            ]

    run(scenario)


def test_prompt_definition_errors() -> None:
    app = App("bad", "1")
    with pytest.raises(DefinitionError, match="prompt name"):
        app.add_prompt(lambda: "x", name="has space")
    with pytest.raises(DefinitionError, match="completions for unknown arguments"):

        @app.prompt(completions={"nope": lambda value, given: []})
        def p(a: str) -> str:
            return a

    app.add_prompt(make_app().prompts["review"].fn)
    with pytest.raises(DefinitionError, match="defined twice"):
        app.add_prompt(make_app().prompts["review"].fn)
    app.remove_prompt("review")
    with pytest.raises(KeyError):
        app.remove_prompt("review")


def test_a_prompt_returning_something_else_is_an_internal_error() -> None:
    app = App("odd", "1")

    @app.prompt
    def odd() -> Any:
        """Returns a number."""
        return 42

    with Client(app) as client, pytest.raises(Exception, match="-32603"):
        client.get_prompt("odd")
