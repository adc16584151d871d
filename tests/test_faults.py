"""Fault injection, the handlers' side: what a client gets when a tool, a resource, a prompt or
the completion handler misbehaves (docs/protocol.md, "What each fault gives the client").

Each fault (``tests/faults_app.py``) runs once over stdio (``mcpkit run``, a real process) and
once over Streamable HTTP (``HttpApp`` in process, a 2025-11-25 session), while another call is
in flight; the table says the exact answer. The server must survive every one: the call
alongside is answered, and so is a ping after it.

- Any exception a tool raises, ``BaseException`` subclasses included (``SystemExit``,
  ``KeyboardInterrupt``, ``GeneratorExit``, a ``CancelledError`` the tool raises itself, a
  user's own), is that call's masked failure: ``isError: true``, "Tool 'x' failed with an
  internal error (reference r)." with ``r`` in the server's log. Only ``ToolError`` shows its
  text; a ``ProtocolError`` is answered as that JSON-RPC error.
- A result JSON cannot carry (an object, a cycle, a lone surrogate) is the same masked failure;
  ``NaN`` or ``Infinity`` says so; an integer of more digits than JSON parsers read (Python's
  stop at 4,300) is a tool error too, never a line a client cannot parse.
- A resource, prompt or completion handler that raises anything answers ``-32603``, logged.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from typing import Any

import faults_app
import pytest
from asgi_support import Exchange, request
from faults_app import SECRET
from faults_support import (
    TARGET,
    TIMEOUT,
    VERSION,
    answers_in,
    call,
    message,
    open_session,
    ping,
    run,
)
from stdio_support import Talk, mcpkit_run

REFERENCE = re.compile(r"\(reference ([0-9a-f]{8})\)")
UNENCODABLE = "a tool error: isError true, one text block"
NO_ANSWER = "no answer: before Python 3.11 a CancelledError reads as a cancellation"
INTERNAL = {"error": {"code": -32603, "message": "Internal error"}}
CANNOT_CARRY = "the tool returned a value JSON cannot carry: {} at structuredContent.{}"


def text_result(text: str, *, error: bool = True) -> dict[str, Any]:
    return {"result": {"content": [{"type": "text", "text": text}], "isError": error}}


def masked(tool: str) -> dict[str, Any]:
    return text_result(f"Tool {tool!r} failed with an internal error (reference <ref>).")


def tool_call(name: str) -> tuple[str, dict[str, Any]]:
    return "tools/call", {"name": name, "arguments": {}}


def raised(fault: str, way: str) -> Any:
    tool = f"{fault}_{way}"
    if fault == "tool_error":
        return text_result("the tool says no")
    if fault == "protocol_error":
        return {"error": {"code": -32602, "message": "Invalid params: the tool refuses"}}
    if fault == "cancelled_error" and sys.version_info < (3, 11):
        return NO_ANSWER
    return masked(tool)


FAULTS = [
    *(
        pytest.param(tool_call(f"{fault}_{way}"), raised(fault, way), id=f"{fault}-{way}")
        for fault in faults_app.RAISES
        for way in ("sync", "async")
    ),
    *(
        pytest.param(tool_call(tool), masked(tool), id=tool.replace("_", "-"))
        for tool in (
            "return_object",
            "return_structured_object",
            "return_meta_object",
            "return_annotation_object",
            "return_cyclic",
            "return_lone_surrogate",
        )
    ),
    pytest.param(
        tool_call("return_nan"), text_result(CANNOT_CARRY.format("NaN", "result")), id="return-nan"
    ),
    pytest.param(
        tool_call("return_infinity"),
        text_result(CANNOT_CARRY.format("Infinity", "v")),
        id="return-infinity",
    ),
    pytest.param(tool_call("return_huge_int"), UNENCODABLE, id="return-huge-int"),
    pytest.param(tool_call("noisy"), text_result("printed", error=False), id="prints"),
    pytest.param(
        ("resources/read", {"uri": "fault://resource/runtime_error"}), INTERNAL, id="resource"
    ),
    pytest.param(
        ("resources/read", {"uri": "fault://resource/system_exit"}),
        INTERNAL,
        id="resource-system-exit",
    ),
    pytest.param(("prompts/get", {"name": "faulty_prompt"}), INTERNAL, id="prompt"),
    pytest.param(
        (
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "faulty_prompt"}, "argument": {"name": "a"}},
        ),
        INTERNAL,
        id="completion",
    ),
]


def check_answer(answer: Any, expected: Any) -> str | None:
    """Compare ``answer`` to the table's entry; the reference it carries, if any."""
    text = json.dumps(answer)
    assert SECRET not in text, text
    assert "Traceback" not in text, text
    found = REFERENCE.search(text)
    if expected == UNENCODABLE:
        assert set(answer) == {"jsonrpc", "id", "result"}, answer
        assert set(answer["result"]) == {"content", "isError"}, answer
        assert answer["result"]["isError"] is True, answer
        [block] = answer["result"]["content"]
        assert block["type"] == "text", answer
        assert block["text"], answer
    else:
        shown = json.loads(REFERENCE.sub("(reference <ref>)", text))
        assert shown == {"jsonrpc": "2.0", "id": 1, **expected}
    return found.group(1) if found else None


@pytest.mark.parametrize(("sent", "expected"), FAULTS)
def test_a_handler_fault_over_stdio(sent: tuple[str, dict[str, Any]], expected: Any) -> None:
    async def scenario() -> tuple[Talk, int, str]:
        async with mcpkit_run(TARGET) as process:
            talk = Talk(process)
            await talk.initialize(VERSION)
            await talk.send(call("alongside", "hold"))
            await talk.send(message(1, *sent))
            if expected != NO_ANSWER:
                await talk.answer(1)
            assert await talk.request(ping(2)) == {"jsonrpc": "2.0", "id": 2, "result": {}}
            await talk.request(call("release", "release"))
            assert (await talk.answer("alongside"))["result"]["content"][0]["text"] == "held"
            code, log = await talk.end()
            return talk, code, log

    talk, code, log = run(scenario)
    assert code == 0, log
    if expected == NO_ANSWER:
        assert 1 not in talk.answers
    reference = None if expected == NO_ANSWER else check_answer(talk.answers[1], expected)
    if reference is not None:
        assert f"reference {reference}" in log  # the traceback is logged under it
    if expected == INTERNAL:
        assert "Traceback (most recent call last)" in log  # logged with its traceback
    for unhandled in ("Exception in callback", "exception was never retrieved"):
        assert unhandled not in log, log


@pytest.mark.parametrize(("sent", "expected"), FAULTS)
def test_a_handler_fault_over_http(sent: tuple[str, dict[str, Any]], expected: Any) -> None:
    async def scenario() -> tuple[int, list[Any]]:
        asgi = faults_app.make_app().asgi()
        headers = await open_session(asgi)
        alongside = Exchange(asgi, "POST", call("alongside", "hold"), headers)
        faulty = Exchange(asgi, "POST", message(1, *sent), headers)
        await asyncio.wait([faulty.task], timeout=TIMEOUT)  # ended cancelled, before 3.11
        assert (await request(asgi, "POST", ping(2), headers)).json["result"] == {}
        await request(asgi, "POST", call("release", "release"), headers)
        held = await asyncio.wait_for(alongside.reply(), TIMEOUT)
        assert held.json["result"]["content"][0]["text"] == "held"
        await asgi.aclose()
        body = bytes(faulty.received)
        return faulty.status, answers_in(body, faulty.headers.get("content-type", ""))

    status, answers = run(scenario)
    if expected == NO_ANSWER:
        assert [a for a in answers if "method" not in a] == []
        return
    assert status == 200
    [answer] = answers
    check_answer(answer, expected)


def test_notifications_json_cannot_carry_are_dropped_over_stdio() -> None:
    """A NaN progress value and an Infinity in log data: nothing goes out, the call answers."""

    async def scenario() -> tuple[Talk, str]:
        async with mcpkit_run(TARGET) as process:
            talk = Talk(process)
            await talk.initialize(VERSION)
            await talk.request(message(1, "logging/setLevel", {"level": "debug"}))
            answer = await talk.request(call(2, "nan_notes", _meta={"progressToken": "p"}))
            assert answer["result"]["content"] == [{"type": "text", "text": "noted"}]
            _, log = await talk.end()
            return talk, log

    talk, log = run(scenario)
    assert talk.notes == []  # every line was strict JSON (Talk parses each one strictly)
    assert "NaN" in log
    assert "Infinity" in log
