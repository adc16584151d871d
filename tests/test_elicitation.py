"""Asking the client: elicitation, sampling and roots in both eras, the per-version form
rendering, and missing capabilities (in memory)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Literal

import pytest
from features_support import HANDSHAKE, STATELESS, Client, accept, era, rpc_error, run, text_of
from pydantic import BaseModel
from typing_extensions import TypedDict

from mcpkit import App, ClientCapabilityError, Context, DefinitionError
from mcpkit.schema import elicitation_schema


class Signup(BaseModel):
    username: str
    age: int = 30


def make_app() -> App:
    app = App("ask", "1")

    @app.tool
    async def signup(ctx: Context) -> str:
        """Asks for a username."""
        answer = await ctx.elicit("Who are you?", Signup, key="who")
        if answer.action != "accept":
            return f"no: {answer.action}"
        assert isinstance(answer.content, Signup)
        return f"{answer.content.username} ({answer.content.age})"

    @app.tool
    async def summarize(text: str, ctx: Context) -> str:
        """Asks the client's model."""
        result = await ctx.sample(
            text, max_tokens=50, system_prompt="Be brief.", temperature=0.2, key="summary"
        )
        return f"{result['model']}: {result['content']['text']}"

    @app.tool
    async def roots(ctx: Context) -> str:
        """Lists the client's roots."""
        return ", ".join(root["uri"] for root in await ctx.list_roots())

    @app.tool
    async def optional_roots(ctx: Context) -> str:
        """Uses the roots when the client has them."""
        try:
            found = await ctx.list_roots()
        except ClientCapabilityError:
            return "no roots capability"
        return str(len(found))

    return app


def sampler(params: dict[str, Any]) -> dict[str, Any]:
    text = params["messages"][0]["content"]["text"]
    return {
        "role": "assistant",
        "content": {"type": "text", "text": f"short {text}"},
        "model": "test-model",
        "stopReason": "endTurn",
    }


ANSWERS = [
    ({"action": "accept", "content": {"username": "ada"}}, "ada (30)"),
    ({"action": "accept", "content": {"username": "bob", "age": 41}}, "bob (41)"),
    ({"action": "decline"}, "no: decline"),
    ({"action": "cancel"}, "no: cancel"),
]


@pytest.mark.parametrize(("answer", "expected"), ANSWERS)
def test_elicit_handshake_sends_a_real_request(answer: dict[str, Any], expected: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), elicitation=lambda params: answer) as client:
            result = await client.call_tool("signup")
            assert text_of(result) == expected
            [request] = client.server_requests
            assert request["method"] == "elicitation/create"
            assert isinstance(request["id"], str)
            assert request["params"] == {
                "message": "Who are you?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "username": {"type": "string"},
                        "age": {"type": "integer", "default": 30},
                    },
                    "required": ["username"],
                },
                "mode": "form",
            }

    run(scenario)


@pytest.mark.parametrize(("answer", "expected"), ANSWERS)
def test_elicit_stateless_returns_input_required_then_retries(
    answer: dict[str, Any], expected: str
) -> None:
    async def scenario() -> None:
        async with Client(
            make_app(), protocol_version=STATELESS, elicitation=lambda params: answer
        ) as client:
            first = await client.request("tools/call", {"name": "signup", "arguments": {}})
            assert first["resultType"] == "input_required"
            assert list(first["inputRequests"]) == ["who"]
            asked = first["inputRequests"]["who"]
            assert asked["method"] == "elicitation/create"
            assert asked["params"]["requestedSchema"]["required"] == ["username"]
            assert isinstance(first["requestState"], str)
            assert "ttlMs" not in first
            retried = await client.request(
                "tools/call",
                {
                    "name": "signup",
                    "arguments": {},
                    "inputResponses": {"who": answer},
                    "requestState": first["requestState"],
                },
            )
            assert retried["resultType"] == "complete"
            assert text_of(retried) == expected
            assert client.server_requests == []  # never a server-to-client request
            # the client's automatic loop lands on the same result
            assert text_of(await client.call_tool("signup")) == expected

    run(scenario)


@era
def test_sampling(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version, sampling=sampler) as client:
            result = await client.call_tool("summarize", {"text": "the news"})
            assert text_of(result) == "test-model: short the news"
            if version == HANDSHAKE:
                [request] = client.server_requests
                assert request["method"] == "sampling/createMessage"
                assert request["params"] == {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "the news"}}],
                    "maxTokens": 50,
                    "systemPrompt": "Be brief.",
                    "temperature": 0.2,
                }

    run(scenario)


@era
def test_roots(version: str) -> None:
    def roots(params: Any) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]}

    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version, roots=roots) as client:
            assert text_of(await client.call_tool("roots")) == "file:///a, file:///b"
            assert text_of(await client.call_tool("optional_roots")) == "2"

    run(scenario)


@era
def test_missing_capability_is_32021(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            for tool, arguments, required in (
                ("signup", {}, {"elicitation": {"form": {}}}),
                ("summarize", {"text": "x"}, {"sampling": {}}),
                ("roots", {}, {"roots": {}}),
            ):
                error = await rpc_error(client.call_tool(tool, arguments))
                assert error.code == -32021, tool
                assert error.data == {"requiredCapabilities": required}
            # a tool that catches ClientCapabilityError carries on
            assert text_of(await client.call_tool("optional_roots")) == "no roots capability"
            assert client.server_requests == []

    run(scenario)


@era
def test_url_only_elicitation_is_not_form_mode(version: str) -> None:
    async def scenario() -> None:
        async with Client(
            make_app(), protocol_version=version, capabilities={"elicitation": {"url": {}}}
        ) as client:
            error = await rpc_error(client.call_tool("signup"))
            assert error.code == -32021
        # ``elicitation: {}`` counts as form mode
        async with Client(
            make_app(),
            protocol_version=version,
            capabilities={"elicitation": {}},
            elicitation=accept({"username": "x"}),
        ) as client:
            assert text_of(await client.call_tool("signup")) == "x (30)"

    run(scenario)


def test_client_error_answer_reaches_the_tool() -> None:
    app = App("refuses", "1")

    @app.tool
    async def ask(ctx: Context) -> str:
        """Asks, and reports a refusal."""
        from mcpkit.exceptions import ClientRequestError

        try:
            await ctx.elicit("Name?", Signup)
        except ClientRequestError as exc:
            return f"refused: {exc.code}"
        return "answered"

    async def scenario() -> None:
        client = Client(app, capabilities={"elicitation": {}})
        async with client:
            assert text_of(await client.call_tool("ask")) == "refused: -32601"

    run(scenario)


def test_invalid_accepted_content_is_a_tool_error() -> None:
    async def scenario() -> None:
        async with Client(make_app(), elicitation=accept({"age": "old"})) as client:
            result = await client.call_tool("signup")
            assert result["isError"] is True

    run(scenario)


def test_elicit_at_2025_06_18_has_no_mode() -> None:
    async def scenario() -> None:
        async with Client(
            make_app(), protocol_version="2025-06-18", elicitation=accept({"username": "z"})
        ) as client:
            assert text_of(await client.call_tool("signup")) == "z (30)"
            params = client.server_requests[0]["params"]
            assert "mode" not in params
            assert params["requestedSchema"]["properties"]["age"] == {"type": "integer"}

    run(scenario)


# ----------------------------------------------------------------- per-version forms


class Colour(enum.Enum):
    Red = "r"
    Green = "g"


class Form(BaseModel):
    name: str = "Ada"
    age: int = 36
    score: float = 9.5
    subscribed: bool = True
    colour: Colour = Colour.Red
    size: Literal["S", "M"] = "M"


class Multi(BaseModel):
    tags: list[Literal["a", "b"]] = []
    colours: list[Colour] = []


def test_form_rendering_2025_06_18() -> None:
    assert elicitation_schema(Form, version="2025-06-18") == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "score": {"type": "number"},
            "subscribed": {"type": "boolean", "default": True},
            "colour": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            "size": {"type": "string", "enum": ["S", "M"]},
        },
    }
    with pytest.raises(DefinitionError, match="'tags' is a multi-select"):
        elicitation_schema(Multi, version="2025-06-18")


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_form_rendering_2025_11_25_and_later(version: str) -> None:
    assert elicitation_schema(Form, version=version) == {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "score": {"type": "number", "default": 9.5},
            "subscribed": {"type": "boolean", "default": True},
            "colour": {
                "type": "string",
                "default": "r",
                "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
            },
            "size": {"type": "string", "enum": ["S", "M"], "default": "M"},
        },
    }
    assert elicitation_schema(Multi, version=version) == {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b"]},
                "default": [],
            },
            "colours": {
                "type": "array",
                "items": {
                    "anyOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]
                },
                "default": [],
            },
        },
    }


class Point(TypedDict):
    x: int
    y: int


@dataclass
class Person:
    name: str
    nickname: str = "-"


class Nested(BaseModel):
    inner: Signup


def test_form_types_and_refusals() -> None:
    assert elicitation_schema(Point, version="2025-11-25") == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
        "required": ["x", "y"],
    }
    assert elicitation_schema(Person, version="2025-11-25")["properties"]["nickname"] == {
        "type": "string",
        "default": "-",
    }
    with pytest.raises(DefinitionError, match="'inner' is not a primitive"):
        elicitation_schema(Nested, version="2025-11-25")


def test_multi_select_answers_are_validated() -> None:
    app = App("multi", "1")

    @app.tool
    async def pick(ctx: Context) -> str:
        """Picks colours."""
        answer = await ctx.elicit("Pick", Multi)
        return repr(answer.content.colours if answer.content else None)

    async def scenario() -> None:
        async with Client(app, elicitation=accept({"colours": ["g"]})) as client:
            assert text_of(await client.call_tool("pick")) == "[<Colour.Green: 'g'>]"

    run(scenario)
