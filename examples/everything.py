"""Every fixture the official MCP conformance suite calls, written the way a user would.

Run it over HTTP for the suite (``mcpkit run examples/everything.py:app --transport http``) or
over stdio. Names, URIs and texts follow the suite's fixture list; the first listed tool
succeeds with ``{}`` and the first listed resource is readable, as the suite requires.
"""

from __future__ import annotations

import asyncio
import base64
import struct
from typing import Annotated, Any, Literal

from pydantic import BaseModel

from mcpkit import (
    App,
    Audio,
    Context,
    EmbeddedResource,
    Header,
    Image,
    ProtocolError,
    Text,
    ToolError,
)
from mcpkit.prompts import Message

app = App(
    "mcpkit-everything",
    version="1.0.0",
    title="mcpkit conformance fixtures",
    instructions="Test fixtures for the MCP conformance suite.",
)

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _wav() -> bytes:
    samples = b"\x00\x00" * 8
    header = struct.pack("<4sI4s", b"RIFF", 36 + len(samples), b"WAVE")
    fmt = struct.pack("<4sIHHIIHH", b"fmt ", 16, 1, 1, 8000, 16000, 2, 16)
    return header + fmt + struct.pack("<4sI", b"data", len(samples)) + samples


# ------------------------------------------------------------------------ content tools


@app.tool
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@app.tool
def test_image_content() -> Image:
    """Returns a 1x1 PNG image."""
    return Image(data=PNG, mime_type="image/png")


@app.tool
def test_audio_content() -> Audio:
    """Returns a short silent WAV sound."""
    return Audio(data=_wav(), mime_type="audio/wav")


@app.tool
def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return EmbeddedResource(
        uri="test://embedded-resource",
        mime_type="text/plain",
        text="This is an embedded resource content.",
    )


@app.tool
def test_multiple_content_types() -> list[Text | Image | EmbeddedResource]:
    """Returns text, an image and an embedded resource."""
    return [
        Text("Multiple content types test:"),
        Image(data=PNG, mime_type="image/png"),
        EmbeddedResource(
            uri="test://mixed-content-resource",
            mime_type="application/json",
            text='{"test":"data","value":123}',
        ),
    ]


@app.tool
def test_error_handling() -> str:
    """Always fails with a tool error."""
    raise ToolError("This tool intentionally returns an error for testing")


@app.tool
async def test_reconnection() -> str:
    """Answers after a short pause."""
    await asyncio.sleep(0.15)
    return "Reconnection test completed."


# ------------------------------------------------------------------- logging, progress


@app.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Logs three messages while it runs."""
    for text in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(text)
        await asyncio.sleep(0.05)
    return "Logging test completed."


@app.tool
async def test_logging_tool(ctx: Context) -> str:
    """Logs one message, sent only when the client asked for logs."""
    await ctx.info("test_logging_tool ran")
    return "Logged."


@app.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100."""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100)
        await asyncio.sleep(0.05)
    return "Progress test completed."


# ------------------------------------------------------------- asking the client


@app.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model to answer a prompt.

    Args:
        prompt: The prompt to send to the model.
    """
    result = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {result.get('content', {}).get('text', '')}"


class UserInfo(BaseModel):
    username: str
    email: str


@app.tool
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email address.

    Args:
        message: The message shown to the user.
    """
    answer = await ctx.elicit(message, UserInfo)
    content = answer.content.model_dump() if answer.content is not None else None
    return f"User response: action={answer.action}, content={content}"


class Defaults(BaseModel):
    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: Literal["active", "inactive", "pending"] = "active"
    verified: bool = True


@app.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks for a form whose every field has a default."""
    answer = await ctx.elicit("Please review your details", Defaults)
    content = answer.content.model_dump() if answer.content is not None else None
    return f"Elicitation completed: action={answer.action}, content={content}"


ENUM_FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2"],
            "enumNames": ["Option One", "Option Two"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                ]
            },
        },
    },
}


@app.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks for a form with every kind of enum field."""
    answer = await ctx.elicit("Please choose your options", ENUM_FORM)
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


@app.tool
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability (answers -32021 without it)."""
    result = await ctx.sample("Say hello", max_tokens=20)
    return f"Sampled: {result.get('content', {}).get('text', '')}"


@app.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks the user to confirm, then reports the answer."""
    answer = await ctx.elicit("Continue streaming?", {"type": "object", "properties": {}})
    return f"Streaming complete: {answer.action}"


# -------------------------------------------------------------- dynamic lists


async def test_dynamic_tool() -> str:
    """A tool that exists only for a moment."""
    return "dynamic"


def test_dynamic_prompt() -> str:
    """A prompt that exists only for a moment."""
    return "dynamic"


@app.tool
def test_trigger_tool_change() -> str:
    """Adds and removes a tool, so listening clients hear that the tool list changed."""
    app.add_tool(test_dynamic_tool)
    app.remove_tool("test_dynamic_tool")
    return "Tool list changed."


@app.tool
def test_trigger_prompt_change() -> str:
    """Adds and removes a prompt, so listening clients hear that the prompt list changed."""
    app.add_prompt(test_dynamic_prompt)
    app.remove_prompt("test_dynamic_prompt")
    return "Prompt list changed."


# -------------------------------------------------------------- schemas and headers

JSON_SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@app.tool(input_schema=JSON_SCHEMA_2020_12)
def json_schema_2020_12_tool(
    name: str = "",
    address: dict[str, str] | None = None,
    contactMethod: str = "",
    phone: str = "",
    email: str = "",
) -> str:
    """Takes arguments described by a JSON Schema 2020-12 document, published verbatim."""
    return f"Received: name={name!r}, contactMethod={contactMethod!r}"


@app.tool
def test_x_mcp_header(region: Annotated[str, Header("Region")] = "<none>") -> str:
    """Echoes the region sent in the body and mirrored in the Mcp-Param-Region header.

    Args:
        region: The region to route to.
    """
    return f"region={region}"


# ------------------------------------------------------- multi round-trip requests


class Name(BaseModel):
    name: str


class Ok(BaseModel):
    ok: bool


class Color(BaseModel):
    color: str


@app.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name (input key user_name)."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    return f"Hello, {answer.content.name}!" if answer.content else f"No name ({answer.action})"


@app.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question (input key capital_question)."""
    result = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"The model said: {result.get('content', {}).get('text', '')}"


@app.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots (input key client_roots)."""
    roots = await ctx.list_roots(key="client_roots")
    return f"Roots: {[root.get('uri') for root in roots]}"


@app.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation (input key confirm)."""
    answer = await ctx.elicit("Confirm?", Ok, key="confirm")
    return "state-ok" if answer.content and answer.content.ok else "not confirmed"


@app.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks for a name, a greeting and the roots in one round."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", Name, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    text = greeting.get("content", {}).get("text", "")
    return (
        f"name={name.content.name if name.content else None}, greeting={text}, roots={len(roots)}"
    )


@app.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks for a name, then for a colour, in two rounds."""
    name = await ctx.elicit("What is your name?", Name, key="step1")
    color = await ctx.elicit("What is your favourite colour?", Color, key="step2")
    who = name.content.name if name.content else "?"
    return f"{who} likes {color.content.color if color.content else '?'}"


@app.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks a question; a retry with an altered requestState is refused."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    return f"Hello, {answer.content.name}!" if answer.content else "No name"


@app.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only with what the client declared: elicitation if it can, else sampling."""
    if "elicitation" in ctx.client_capabilities:
        answer = await ctx.elicit("What is your name?", Name, key="user_name")
        return f"elicited: {answer.action}"
    result = await ctx.sample("What is your name?", max_tokens=20, key="sampled_name")
    return f"sampled: {result.get('content', {}).get('text', '')}"


# ------------------------------------------------- tasks (io.modelcontextprotocol/tasks)


@app.tool
def greet(name: str) -> str:
    """Greets someone (never a task)."""
    return f"Hello, {name}!"


@app.tool(task="optional")
async def slow_compute(seconds: float = 1, label: str = "") -> str:
    """Waits `seconds`, then answers (a task when the client declares the tasks extension)."""
    await asyncio.sleep(seconds)
    return f"Computed {label!r} after {seconds} s"


@app.tool(task="required")
async def failing_job() -> str:
    """Fails as a tool after about a second (runs only as a task)."""
    await asyncio.sleep(1)
    raise ToolError("failing_job failed, as it always does")


@app.tool(task="optional")
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error: its task settles as failed."""
    raise ProtocolError("protocol_error_job broke at the protocol level", code=-32603)


class Confirmation(BaseModel):
    confirm: bool


class Part(BaseModel):
    name: str = ""
    confirm: bool = False


@app.tool(task="optional")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks the user to confirm, then 'deletes' the file."""
    answer = await ctx.elicit(f"Delete {filename}?", Confirmation)
    if answer.action == "accept" and answer.content and answer.content.confirm:
        return f"Deleted {filename}"
    return f"Kept {filename}"


@app.tool(task="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once (two input requests pending together)."""
    first, second = await asyncio.gather(
        ctx.elicit("First part?", Part), ctx.elicit("Second part?", Part)
    )
    names = [a.content.name for a in (first, second) if a.content is not None]
    return "Got " + " and ".join(names)


@app.tool(task="required")
async def test_tool_with_task(ctx: Context) -> str:
    """Asks the user's name (input key user_name) in the call, then goes on as a task."""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    await ctx.continue_as_task()
    name = answer.content.name if answer.content else "nobody"
    return f"Hello, {name}! (from a task)"


# ------------------------------------------------------------------------ resources


@app.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@app.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (a PNG image)."""
    return PNG


@app.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients may subscribe to."""
    return "Watched resource content."


@app.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
def template_data(id: str) -> dict[str, Any]:
    """Data for an id.

    Args:
        id: The id to look up.
    """
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


# -------------------------------------------------------------------------- prompts


@app.prompt
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@app.prompt(
    completions={
        "arg1": lambda value, _: [v for v in ("testValue1", "alpha") if v.startswith(value)]
    }
)
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two arguments.

    Args:
        arg1: The first argument.
        arg2: The second argument.
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
    """A prompt that embeds a resource.

    Args:
        resourceUri: The URI of the resource to embed.
    """
    resource = EmbeddedResource(
        uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
    )
    return [Message(resource), Message("Please process the embedded resource above.")]


@app.prompt
def test_prompt_with_image() -> list[Message]:
    """A prompt with an image."""
    return [
        Message(Image(data=PNG, mime_type="image/png")),
        Message("Please analyze the image above."),
    ]


@app.prompt
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that first asks the user for context (input key user_context)."""

    class UserContext(BaseModel):
        context: str

    answer = await ctx.elicit(
        "What context should the prompt use?", UserContext, key="user_context"
    )
    given = answer.content.context if answer.content else "none"
    return f"Use this context: {given}"
