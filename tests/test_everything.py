"""examples/everything.py against what the conformance suite calls and checks, in both eras.

The fixture names are the suite's (docs: ../shared/notes/conformance.md §4 and §7.11); a
missing one fails here before it fails the suite.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path
from typing import Any

import pytest
from features_support import HANDSHAKE, STATELESS, Client, era, rpc_error, run, text_of

from examples.everything import JSON_SCHEMA_2020_12, app
from mcpkit import App

TOOLS_0_1_16 = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
}
TOOLS_0_2_0 = {
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_logging_tool",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "test_x_mcp_header",
    *(
        f"test_input_required_result_{suffix}"
        for suffix in (
            "elicitation",
            "sampling",
            "list_roots",
            "request_state",
            "multiple_inputs",
            "multi_round",
            "tampered_state",
            "capabilities",
        )
    ),
}
TASK_TOOLS = {
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
}
PROMPTS = {
    "test_simple_prompt",
    "test_prompt_with_arguments",
    "test_prompt_with_embedded_resource",
    "test_prompt_with_image",
    "test_input_required_result_prompt",
}
RESOURCES = {"test://static-text", "test://static-binary", "test://watched-resource"}
TEMPLATES = {"test://template/{id}/data"}
NAME = re.compile(r"[A-Za-z0-9_./-]{1,64}")

SAMPLE_VALUES = {
    "username": "testuser",
    "email": "test@example.com",
    "name": "Alice",
    "ok": True,
    "color": "blue",
    "context": "test context",
}


def elicit(params: dict[str, Any]) -> dict[str, Any]:
    """The suite's mock: accept, with a value for every property it knows."""
    properties = params["requestedSchema"].get("properties", {})
    return {
        "action": "accept",
        "content": {k: v for k, v in SAMPLE_VALUES.items() if k in properties},
    }


def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": {"type": "text", "text": "This is a test response from the client"},
        "model": "test-model",
        "stopReason": "endTurn",
    }


def roots(params: Any) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}


def suite_client(version: str, **options: Any) -> Client:
    return Client(
        app, protocol_version=version, elicitation=elicit, sampling=sample, roots=roots, **options
    )


@era
def test_every_fixture_is_listed_and_described(version: str) -> None:
    run(lambda: check_listing(app, version))


async def check_listing(the_app: App, version: str) -> None:
    async with Client(the_app, protocol_version=version, elicitation=elicit) as client:
        tools = await client.list_tools()
        names = [t["name"] for t in tools]
        wanted = TOOLS_0_1_16 | TOOLS_0_2_0 | TASK_TOOLS
        assert set(names) >= wanted, wanted - set(names)
        for tool in tools:
            assert NAME.fullmatch(tool["name"]), tool["name"]
            assert tool.get("description"), tool["name"]
            assert tool["inputSchema"]["type"] == "object"
        prompts = await client.list_prompts()
        assert {p["name"] for p in prompts} >= PROMPTS
        assert all(p.get("description") for p in prompts)
        resources = await client.list_resources()
        assert {r["uri"] for r in resources} >= RESOURCES
        assert all(r.get("name") for r in resources)
        templates = await client.list_resource_templates()
        assert {t["uriTemplate"] for t in templates} >= TEMPLATES
        # ordering constraints: the first tool succeeds with {} (and without arguments),
        # the first resource is readable
        first = await client.call_tool(names[0], {})
        assert not first.get("isError")
        assert text_of(first)
        bare = await client.request("tools/call", {"name": names[0]})
        assert not bare.get("isError")
        contents = await client.read_resource(resources[0]["uri"])
        assert contents
        assert contents[0]["uri"]
        assert contents[0]["text"]
        # the x-mcp-header fixture: the first tool with one has a string header property
        headed = [
            t
            for t in tools
            if any("x-mcp-header" in p for p in t["inputSchema"].get("properties", {}).values())
        ]
        prop = next(
            p for p in headed[0]["inputSchema"]["properties"].values() if "x-mcp-header" in p
        )
        assert prop["type"] == "string"
        assert headed[0]["inputSchema"].get("required", []) == []
        echoed = await client.call_tool(headed[0]["name"], {"region": "SGVsbG8="})
        assert text_of(echoed) == "region=SGVsbG8="
        schema = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")
        assert schema["inputSchema"] == JSON_SCHEMA_2020_12


@era
def test_content_tools(version: str) -> None:
    async def scenario() -> None:
        async with suite_client(version) as client:
            simple = await client.call_tool("test_simple_text")
            assert text_of(simple) == "This is a simple text response for testing."
            image = (await client.call_tool("test_image_content"))["content"][0]
            assert image["type"] == "image"
            assert image["data"]
            assert image["mimeType"] == "image/png"
            audio = (await client.call_tool("test_audio_content"))["content"][0]
            assert audio["type"] == "audio"
            assert audio["data"]
            assert audio["mimeType"] == "audio/wav"
            embedded = (await client.call_tool("test_embedded_resource"))["content"][0]
            assert embedded["resource"] == {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            }
            mixed = (await client.call_tool("test_multiple_content_types"))["content"]
            assert [c["type"] for c in mixed] == ["text", "image", "resource"]
            assert mixed[2]["resource"]["text"] == '{"test":"data","value":123}'
            error = await client.call_tool("test_error_handling")
            assert error["isError"] is True
            assert text_of(error) == "This tool intentionally returns an error for testing"
            assert text_of(await client.call_tool("test_reconnection"))

    run(scenario)


@era
def test_progress_fixture(version: str) -> None:
    async def scenario() -> None:
        async with suite_client(version) as client:
            await client.call_tool(
                "test_tool_with_progress", {}, _meta={"progressToken": "progress-test-1"}
            )
            progress = [
                n["params"] for n in client.notifications if n["method"] == "notifications/progress"
            ]
            assert len(progress) >= 3
            assert {p["progressToken"] for p in progress} == {"progress-test-1"}
            values = [p["progress"] for p in progress]
            assert values == sorted(values)

    run(scenario)


def test_logging_fixtures() -> None:
    async def scenario() -> None:
        async with suite_client(HANDSHAKE) as client:
            assert await client.request("logging/setLevel", {"level": "info"}) == {}
            await client.call_tool("test_tool_with_logging")
            logs = [n for n in client.notifications if n["method"] == "notifications/message"]
            assert len(logs) >= 3
            assert all("level" in n["params"] and "data" in n["params"] for n in logs)
        async with suite_client(STATELESS) as client:
            assert (
                await rpc_error(client.request("logging/setLevel", {"level": "info"}))
            ).code == -32601
            result = await client.call_tool("test_logging_tool")
            assert not result.get("isError")
            assert client.notifications == []  # no logLevel: no logs
            meta = {"io.modelcontextprotocol/logLevel": "info"}
            await client.call_tool("test_logging_tool", {}, _meta=meta)
            [log] = client.notifications
            assert log["params"]["level"] == "info"
            assert log["params"]["data"]

    run(scenario)


def test_handshake_only_fixtures() -> None:
    async def scenario() -> None:
        async with suite_client(HANDSHAKE) as client:
            sampled = await client.call_tool(
                "test_sampling", {"prompt": "Test prompt for sampling"}
            )
            assert text_of(sampled) == "LLM response: This is a test response from the client"
            assert client.server_requests[-1]["params"] == {
                "messages": [
                    {
                        "role": "user",
                        "content": {"type": "text", "text": "Test prompt for sampling"},
                    }
                ],
                "maxTokens": 100,
            }
            elicited = await client.call_tool(
                "test_elicitation", {"message": "Please provide your information"}
            )
            assert "testuser" in text_of(elicited)
            form = client.server_requests[-1]["params"]["requestedSchema"]
            assert form["properties"] == {
                "username": {"type": "string"},
                "email": {"type": "string"},
            }
            assert set(form["required"]) == {"username", "email"}

            await client.call_tool("test_elicitation_sep1034_defaults")
            props = client.server_requests[-1]["params"]["requestedSchema"]["properties"]
            assert props["name"] == {"type": "string", "default": "John Doe"}
            assert props["age"] == {"type": "integer", "default": 30}
            assert props["score"] == {"type": "number", "default": 95.5}
            assert props["status"]["enum"] == ["active", "inactive", "pending"]
            assert props["status"]["default"] == "active"
            assert props["verified"] == {"type": "boolean", "default": True}

            result = await client.call_tool("test_elicitation_sep1330_enums")
            assert text_of(result).startswith("Elicitation completed: action=accept")
            props = client.server_requests[-1]["params"]["requestedSchema"]["properties"]
            assert "enum" in props["untitledSingle"]
            assert "oneOf" not in props["untitledSingle"]
            assert all({"const", "title"} <= set(o) for o in props["titledSingle"]["oneOf"])
            assert len(props["legacyEnum"]["enum"]) == len(props["legacyEnum"]["enumNames"])
            assert "enum" in props["untitledMulti"]["items"]
            assert "anyOf" in props["titledMulti"]["items"]

            for method in ("resources/subscribe", "resources/unsubscribe"):
                assert await client.request(method, {"uri": "test://watched-resource"}) == {}
            assert await client.request("ping") == {}

    run(scenario)


@era
def test_resource_and_prompt_fixtures(version: str) -> None:
    async def scenario() -> None:
        async with suite_client(version) as client:
            [text] = await client.read_resource("test://static-text")
            assert text["mimeType"] == "text/plain"
            assert text["text"] == "This is the content of the static text resource."
            [binary] = await client.read_resource("test://static-binary")
            assert binary["mimeType"] == "image/png"
            assert binary["blob"]
            [data] = await client.read_resource("test://template/123/data")
            assert data["uri"] == "test://template/123/data"
            assert "123" in data["text"]
            assert data["mimeType"] == "application/json"

            simple = await client.get_prompt("test_simple_prompt")
            assert (
                simple["messages"][0]["content"]["text"] == "This is a simple prompt for testing."
            )
            args = await client.get_prompt(
                "test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"}
            )
            text_out = args["messages"][0]["content"]["text"]
            assert "testValue1" in text_out
            assert "testValue2" in text_out
            embedded = await client.get_prompt(
                "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
            )
            assert embedded["messages"][0]["content"]["type"] == "resource"
            assert (
                embedded["messages"][0]["content"]["resource"]["uri"] == "test://example-resource"
            )
            image = await client.get_prompt("test_prompt_with_image")
            assert image["messages"][0]["content"]["type"] == "image"
            assert image["messages"][0]["content"]["mimeType"] == "image/png"

            completion = await client.complete(
                {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "test"
            )
            assert isinstance(completion["values"], list)

            missing = await rpc_error(
                client.read_resource("test://nonexistent-resource-for-conformance-testing")
            )
            assert missing.code == (-32602 if version == STATELESS else -32002)
            assert missing.data == {"uri": "test://nonexistent-resource-for-conformance-testing"}

    run(scenario)


def test_stateless_fixtures() -> None:
    async def scenario() -> None:
        async with Client(app, protocol_version=STATELESS) as bare:
            error = await rpc_error(bare.call_tool("test_missing_capability"))
            assert error.code == -32021
            assert error.data == {"requiredCapabilities": {"sampling": {}}}
        async with Client(
            app, protocol_version=STATELESS, capabilities={"elicitation": {}}
        ) as client:
            streaming = await client.request(
                "tools/call", {"name": "test_streaming_elicitation", "arguments": {}}
            )
            assert streaming["resultType"] == "input_required"
            assert [r["method"] for r in streaming["inputRequests"].values()] == [
                "elicitation/create"
            ]
            for trigger in ("test_trigger_tool_change", "test_trigger_prompt_change"):
                assert not (await client.call_tool(trigger)).get("isError")
        async with suite_client(STATELESS) as client:
            assert text_of(await client.call_tool("test_missing_capability")).startswith("Sampled")
            discovered = await client.request("server/discover")
            assert discovered["capabilities"]["tools"] == {"listChanged": True}
            assert discovered["capabilities"]["prompts"] == {"listChanged": True}
            assert "2026-07-28" in discovered["supportedVersions"]

    run(scenario)


@pytest.mark.parametrize(
    ("tool", "key", "method"),
    [
        ("test_input_required_result_elicitation", "user_name", "elicitation/create"),
        ("test_input_required_result_sampling", "capital_question", "sampling/createMessage"),
        ("test_input_required_result_list_roots", "client_roots", "roots/list"),
        ("test_input_required_result_request_state", "confirm", "elicitation/create"),
        ("test_input_required_result_tampered_state", "user_name", "elicitation/create"),
    ],
)
def test_input_required_fixtures(tool: str, key: str, method: str) -> None:
    async def scenario() -> None:
        async with suite_client(STATELESS) as client:
            first = await client.request("tools/call", {"name": tool, "arguments": {}})
            assert first["resultType"] == "input_required"
            assert list(first["inputRequests"]) == [key]
            assert first["inputRequests"][key]["method"] == method
            assert isinstance(first["requestState"], str)
            done = await client.call_tool(tool)
            assert done["resultType"] == "complete"
            assert text_of(done)
            tampered = await rpc_error(
                client.request(
                    "tools/call",
                    {
                        "name": tool,
                        "arguments": {},
                        "inputResponses": {key: {"action": "accept", "content": {"name": "x"}}},
                        "requestState": first["requestState"] + "-TAMPERED",
                    },
                )
            )
            assert tampered.code == -32602
        # the same fixtures work in the handshake era with real requests
        async with suite_client(HANDSHAKE) as client:
            assert text_of(await client.call_tool(tool))
            assert client.server_requests[0]["method"] == method

    run(scenario)


def test_input_required_multi_fixtures() -> None:
    async def scenario() -> None:
        async with suite_client(STATELESS) as client:
            first = await client.request(
                "tools/call",
                {"name": "test_input_required_result_multiple_inputs", "arguments": {}},
            )
            assert {r["method"] for r in first["inputRequests"].values()} == {
                "elicitation/create",
                "sampling/createMessage",
                "roots/list",
            }
            assert set(first["inputRequests"]) == {"user_name", "greeting", "client_roots"}
            assert "requestState" in first
            done = await client.call_tool("test_input_required_result_multiple_inputs")
            assert (
                text_of(done)
                == "name=Alice, greeting=This is a test response from the client, roots=1"
            )
            assert text_of(await client.call_tool("test_input_required_result_multi_round")) == (
                "Alice likes blue"
            )
            prompt = await client.request(
                "prompts/get", {"name": "test_input_required_result_prompt"}
            )
            assert list(prompt["inputRequests"]) == ["user_context"]
            got = await client.get_prompt("test_input_required_result_prompt")
            assert got["messages"][0]["content"]["text"] == "Use this context: test context"
            # the elicitation fixture takes user_name without any requestState
            direct = await client.request(
                "tools/call",
                {
                    "name": "test_input_required_result_elicitation",
                    "arguments": {},
                    "inputResponses": {
                        "user_name": {"action": "accept", "content": {"name": "Alice"}},
                        "unknown_extra_key": {"action": "accept"},
                    },
                },
            )
            assert text_of(direct) == "Hello, Alice!"
        async with Client(app, protocol_version=STATELESS, capabilities={"sampling": {}}) as only:
            first = await only.request(
                "tools/call", {"name": "test_input_required_result_capabilities", "arguments": {}}
            )
            assert first["resultType"] == "input_required"
            assert [r["method"] for r in first["inputRequests"].values()] == [
                "sampling/createMessage"
            ]

    run(scenario)


def test_a_missing_fixture_fails_this_module() -> None:
    """The lists above are what the suite calls: removing a fixture must fail the listing test."""
    copy = runpy.run_path(str(Path(__file__).parent.parent / "examples" / "everything.py"))["app"]
    run(lambda: check_listing(copy, STATELESS))
    copy.remove_tool("test_logging_tool")
    with pytest.raises(AssertionError, match="test_logging_tool"):
        run(lambda: check_listing(copy, STATELESS))
