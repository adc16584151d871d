"""Interop with the official ``mcp`` 2.3.0 client over stdio, against examples/everything.py:
resources, prompts, completion and elicitation answered through the client's callback, in
both eras (``ClientSession``: the handshake; ``mcp.Client`` auto mode: 2026-07-28)."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import mcp.types as types
from interop_support import run, stdio_params
from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning


def params() -> StdioServerParameters:
    return stdio_params("examples/everything.py:app")


asked: list[types.ElicitRequestParams] = []


async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    asked.append(params)
    if "decline" in params.message:
        return types.ElicitResult(action="decline")
    return types.ElicitResult(action="accept", content={"name": "Ada", "context": "interop"})


PROMPT_REF = types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")


async def features(client: Any) -> dict[str, Any]:
    """The same calls through either client; returns what they saw."""
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    text = await client.read_resource("test://static-text")
    binary = await client.read_resource("test://static-binary")
    data = await client.read_resource("test://template/123/data")
    prompts = await client.list_prompts()
    prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "one", "arg2": "two"})
    image = await client.get_prompt("test_prompt_with_image")
    completion = await client.complete(PROMPT_REF, {"name": "arg1", "value": "test"})
    elicited = await client.call_tool("test_input_required_result_elicitation", {})
    asked_prompt = await client.get_prompt("test_input_required_result_prompt")
    try:
        await client.read_resource("test://nope")
    except MCPError as exc:
        missing: Any = (exc.code, exc.data)
    return {
        "resources": [str(r.uri) for r in resources.resources],
        "templates": [t.uri_template for t in templates.resource_templates],
        "text": text.contents[0].text,
        "binary": (binary.contents[0].mime_type, bool(binary.contents[0].blob)),
        "data": data.contents[0].text,
        "prompts": [p.name for p in prompts.prompts],
        "prompt": prompt.messages[0].content.text,
        "image": image.messages[0].content.type,
        "completion": completion.completion.values,
        "elicited": elicited.content[0].text,
        "asked_prompt": (asked_prompt.messages[0].content.text),
        "missing": missing,
    }


def check(got: dict[str, Any]) -> None:
    assert got["resources"][:3] == [
        "test://static-text",
        "test://static-binary",
        "test://watched-resource",
    ]
    assert got["templates"] == ["test://template/{id}/data"]
    assert got["text"] == "This is the content of the static text resource."
    assert got["binary"] == ("image/png", True)
    assert '"id":"123"' in got["data"]
    assert "test_prompt_with_arguments" in got["prompts"]
    assert got["prompt"] == "Prompt with arguments: arg1='one', arg2='two'"
    assert got["image"] == "image"
    assert got["completion"] == ["testValue1"]
    assert got["elicited"] == "Hello, Ada!"
    assert got["asked_prompt"] == "Use this context: interop"


def test_client_session_handshake_era() -> None:
    async def scenario() -> dict[str, Any]:
        asked.clear()
        async with (
            stdio_client(params()) as (read, write),
            ClientSession(read, write, elicitation_callback=on_elicit) as session,
        ):
            init = await session.initialize()
            assert init.protocol_version == "2025-11-25"
            assert init.capabilities.completions is not None
            got = await features(session)
            with warnings.catch_warnings():  # deprecated by 2026-07-28, still 2025-11-25 API
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await session.subscribe_resource("test://watched-resource")
                await session.unsubscribe_resource("test://watched-resource")
            return got

    got = run(scenario)
    check(got)
    assert got["missing"] == (-32002, {"uri": "test://nope"})
    assert [p.mode for p in asked] == ["form", "form"]  # real elicitation/create requests
    assert isinstance(asked[0], types.ElicitRequestFormParams)
    assert asked[0].requested_schema["required"] == ["name"]


def test_client_auto_mode_stateless_era() -> None:
    async def scenario() -> dict[str, Any]:
        asked.clear()
        async with Client(
            params(), mode="auto", cache=None, elicitation_callback=on_elicit
        ) as client:
            assert client.protocol_version == "2026-07-28"
            got = await features(client)
            async with client.listen(tools_list_changed=True, prompts_list_changed=True) as sub:
                assert sub.honored.tools_list_changed
                assert sub.honored.prompts_list_changed
                await client.call_tool("test_trigger_tool_change", {})
                with anyio.fail_after(5):
                    async for event in sub:
                        got["event"] = type(event).__name__
                        break
            return got

    got = run(scenario)
    check(got)
    assert got["missing"] == (-32602, {"uri": "test://nope"})
    assert len(asked) == 2  # answered through the callback, as InputRequiredResult rounds
    assert "Tools" in got["event"]


def test_client_auto_mode_decline_and_missing_capability() -> None:
    async def scenario() -> tuple[str, int]:
        async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            return types.ElicitResult(action="decline")

        async with Client(
            params(), mode="auto", cache=None, elicitation_callback=decline
        ) as client:
            declined = await client.call_tool("test_input_required_result_elicitation", {})
            try:
                await client.call_tool("test_missing_capability", {})
            except MCPError as exc:
                code = exc.code
            return declined.content[0].text, code  # type: ignore[union-attr]

    assert run(scenario) == ("No name (decline)", -32021)
