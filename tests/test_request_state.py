"""Multi round-trip requests (2026-07-28): InputRequiredResult, the signed requestState, keys,
questions asked together, and which methods may ask (in memory)."""

from __future__ import annotations

import asyncio
import copy
import time
from typing import Any

import pytest
from features_support import STATELESS, Client, rpc_error, run, text_of
from pydantic import BaseModel

from mcpkit import App, Call, Context, ServerOptions
from mcpkit.middleware import CallNext
from mcpkit.protocol.request import ActingFor
from mcpkit.protocol.request_state import STATE_KEY_ENV, StateSigner
from mcpkit.protocol.server import Server


class Name(BaseModel):
    name: str


class Colour(BaseModel):
    colour: str


def make_app(**options: Any) -> tuple[App, list[str]]:
    app = App("mrtr", "1", **options)
    ran: list[str] = []

    @app.tool
    async def greet(ctx: Context) -> str:
        """Asks a name."""
        ran.append("greet")
        answer = await ctx.elicit("Name?", Name, key="user_name")
        return f"Hello, {answer.content.name}!" if answer.content else answer.action

    @app.tool
    async def together(ctx: Context) -> str:
        """Asks three questions at once."""
        name, sampled, roots = await asyncio.gather(
            ctx.elicit("Name?", Name),
            ctx.sample("Greet", max_tokens=5),
            ctx.list_roots(),
        )
        text = sampled["content"]["text"]
        return f"{name.content.name if name.content else '-'}/{text}/{len(roots)}"

    @app.tool
    async def two_rounds(ctx: Context) -> str:
        """Asks one question, then another."""
        ran.append("two_rounds")
        name = await ctx.elicit("Name?", Name, key="step1")
        colour = await ctx.elicit("Colour?", Colour, key="step2")
        assert name.content
        assert colour.content
        return f"{name.content.name} likes {colour.content.colour}"

    @app.resource("ask://me")
    async def asking_resource(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Name, key="n")
        return f"resource for {answer.content.name if answer.content else '-'}"

    @app.prompt
    async def asking_prompt(ctx: Context) -> str:
        """Asks first."""
        answer = await ctx.elicit("Name?", Name, key="n")
        return f"prompt for {answer.content.name if answer.content else '-'}"

    return app, ran


def answers(method: str) -> dict[str, Any]:
    known: dict[str, dict[str, Any]] = {
        "elicitation/create": {"action": "accept", "content": {"name": "Alice", "colour": "blue"}},
        "sampling/createMessage": {
            "role": "assistant",
            "content": {"type": "text", "text": "hi"},
            "model": "m",
        },
        "roots/list": {"roots": [{"uri": "file:///r"}]},
    }
    return known[method]


def client(app: App, **options: Any) -> Client:
    return Client(
        app,
        protocol_version=STATELESS,
        elicitation=lambda p: answers("elicitation/create"),
        sampling=lambda p: answers("sampling/createMessage"),
        roots=lambda p: answers("roots/list"),
        **options,
    )


def call(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {}, **extra}


def test_a_tampered_request_state_fails_before_the_handler_runs() -> None:
    app, ran = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            first = await c.request("tools/call", call("greet"))
            state = first["requestState"]
            response = {"user_name": answers("elicitation/create")}
            for bad in (
                state + "-TAMPERED",
                "x" + state,
                state.replace(".", ".x"),
                "no-dot",
                "é.é",  # non-ASCII must not crash the comparison
                "a.b.c",
                42,
            ):
                ran.clear()
                error = await rpc_error(
                    c.request(
                        "tools/call", call("greet", inputResponses=response, requestState=bad)
                    )
                )
                assert error.code == -32602, bad
                assert "requestState" in error.message
                assert ran == []
            # a valid state from another tool is refused too
            other = await c.request("tools/call", call("two_rounds"))
            error = await rpc_error(
                c.request("tools/call", call("greet", requestState=other["requestState"]))
            )
            assert error.code == -32602

    run(scenario)


def test_questions_asked_together_travel_in_one_round() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            first = await c.request("tools/call", call("together"))
            assert first["resultType"] == "input_required"
            assert {k: v["method"] for k, v in first["inputRequests"].items()} == {
                "elicitation-1": "elicitation/create",
                "sampling-2": "sampling/createMessage",
                "roots-3": "roots/list",
            }
            assert first["inputRequests"]["sampling-2"]["params"]["maxTokens"] == 5
            assert "requestState" in first
            responses = {k: answers(v["method"]) for k, v in first["inputRequests"].items()}
            done = await c.request(
                "tools/call",
                call("together", inputResponses=responses, requestState=first["requestState"]),
            )
            assert text_of(done) == "Alice/hi/1"

    run(scenario)


def test_unknown_keys_are_ignored_and_missing_ones_asked_again() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            # a response under a known key is used without any requestState
            extra = {"unknown_extra_key": {"x": 1}, "another_unexpected": 5}
            known = {"user_name": answers("elicitation/create"), **extra}
            done = await c.request("tools/call", call("greet", inputResponses=known))
            assert text_of(done) == "Hello, Alice!"
            # only unknown keys: asked again
            again = await c.request("tools/call", call("greet", inputResponses={"wrong_key": {}}))
            assert again["resultType"] == "input_required"
            assert list(again["inputRequests"]) == ["user_name"]
            # a malformed answer (not an object) counts as missing
            bad = await c.request("tools/call", call("greet", inputResponses={"user_name": 12345}))
            assert bad["resultType"] == "input_required"
            nothing = await c.request("tools/call", call("greet", inputResponses=None))
            assert nothing["resultType"] == "input_required"

    run(scenario)


def test_multi_round_carries_earlier_answers_and_reruns_the_handler() -> None:
    app, ran = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            r1 = await c.request("tools/call", call("two_rounds"))
            assert list(r1["inputRequests"]) == ["step1"]
            step1 = {"step1": answers("elicitation/create")}
            r2 = await c.request(
                "tools/call",
                call("two_rounds", inputResponses=step1, requestState=r1["requestState"]),
            )
            assert r2["resultType"] == "input_required"
            assert list(r2["inputRequests"]) == ["step2"]
            assert r2["requestState"] != r1["requestState"]
            # the second retry sends only step2: step1 travels in the state
            r3 = await c.request(
                "tools/call",
                call(
                    "two_rounds",
                    inputResponses={"step2": answers("elicitation/create")},
                    requestState=r2["requestState"],
                ),
            )
            assert text_of(r3) == "Alice likes blue"
            assert ran == ["two_rounds"] * 3  # the handler ran again from the top each round

    run(scenario)


def test_prompts_and_resources_may_ask_lists_never_do() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            first = await c.request("resources/read", {"uri": "ask://me"})
            assert first["resultType"] == "input_required"
            assert "ttlMs" not in first
            contents = await c.read_resource("ask://me")
            assert contents[0]["text"] == "resource for Alice"
            prompt = await c.request("prompts/get", {"name": "asking_prompt"})
            assert prompt["resultType"] == "input_required"
            got = await c.get_prompt("asking_prompt")
            assert got["messages"][0]["content"]["text"] == "prompt for Alice"
            for method in ("tools/list", "prompts/list", "resources/list"):
                assert (await c.request(method))["resultType"] == "complete"

    run(scenario)


def test_only_declared_kinds_are_asked() -> None:
    app, _ = make_app()

    async def scenario() -> None:
        async with Client(app, protocol_version=STATELESS, capabilities={"sampling": {}}) as c:
            error = await rpc_error(c.request("tools/call", call("greet")))
            assert error.code == -32021
            assert error.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}

    run(scenario)


def test_state_key_is_shared_through_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    async def first_state(app: App) -> str:
        async with client(app) as c:
            state: str = (await c.request("tools/call", call("greet")))["requestState"]
            return state

    async def retry(app: App, state: str) -> Any:
        async with client(app) as c:
            return await c.request("tools/call", call("greet", requestState=state))

    async def scenario() -> None:
        # ServerOptions(state_key=...): another server (a worker, a replica) accepts the state
        state = await first_state(make_app(options=ServerOptions(state_key="k1-" + "x" * 16))[0])
        again = await retry(make_app(options=ServerOptions(state_key="k1-" + "x" * 16))[0], state)
        assert again["resultType"] == "input_required"
        assert (
            await rpc_error(
                retry(make_app(options=ServerOptions(state_key="k2-" + "x" * 16))[0], state)
            )
        ).code == -32602
        # MCPKIT_STATE_KEY does the same for every App without a configured key
        monkeypatch.setenv(STATE_KEY_ENV, "shared-secret-of-32-characters!")
        state = await first_state(make_app()[0])
        assert (await retry(make_app()[0], state))["resultType"] == "input_required"
        monkeypatch.delenv(STATE_KEY_ENV)
        # without configuration each server has its own random key
        state = await first_state(make_app()[0])
        assert (await rpc_error(retry(make_app()[0], state))).code == -32602

    run(scenario)


def test_state_signer_binds_method_and_target() -> None:
    signer = StateSigner(b"key")
    state = signer.encode("tools/call", "greet", {"a": {"action": "cancel"}})
    assert signer.decode(state, "tools/call", "greet") == {"a": {"action": "cancel"}}
    for method, target in (("prompts/get", "greet"), ("tools/call", "other")):
        with pytest.raises(Exception, match="requestState failed verification"):
            signer.decode(state, method, target)
    with pytest.raises(Exception, match="failed verification"):
        StateSigner(b"other").decode(state, "tools/call", "greet")


def test_input_required_is_not_swallowed_by_except_exception() -> None:
    app = App("careful", "1")

    @app.tool
    async def careful(ctx: Context) -> str:
        """Catches every Exception around the question."""
        try:
            answer = await ctx.elicit("Name?", Name)
        except Exception:
            return "swallowed"
        return answer.action

    async def scenario() -> None:
        async with client(app) as c:
            first = await c.request("tools/call", call("careful"))
            assert first["resultType"] == "input_required"

    run(scenario)


def test_a_short_state_key_is_refused(monkeypatch: Any) -> None:
    monkeypatch.setenv(STATE_KEY_ENV, "")
    with pytest.raises(ValueError, match="at least 16 bytes"):
        Server(App("short", "1"))


def test_questions_asked_in_a_task_group_travel_together() -> None:
    app = App("group", "1")

    class Name(BaseModel):
        name: str

    @app.tool
    async def two(ctx: Context) -> str:
        """Asks two questions at once."""
        task_group = getattr(asyncio, "TaskGroup", None)
        if task_group is None:  # Python 3.10: gather asks from child tasks too
            one, other = await asyncio.gather(
                ctx.elicit("first?", Name, key="a"), ctx.elicit("second?", Name, key="b")
            )
            return f"{one.content.name} and {other.content.name}"
        async with task_group() as group:
            first = group.create_task(ctx.elicit("first?", Name, key="a"))
            second = group.create_task(ctx.elicit("second?", Name, key="b"))
        return f"{first.result().content.name} and {second.result().content.name}"

    def answer(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": params["message"].rstrip("?")}}

    with Client(app, protocol_version=STATELESS, elicitation=answer) as client:
        result = client.call_tool("two")
        assert text_of(result) == "first and second"
        assert client.server_requests == []  # stateless: only input rounds, no server requests


def test_a_state_cannot_be_replayed_with_other_arguments_or_after_it_expires(
    monkeypatch: Any,
) -> None:
    app, ran = make_app()

    async def scenario() -> None:
        async with client(app) as c:
            first = await c.request("tools/call", call("greet"))
            state = first["requestState"]
            moved = call("greet", requestState=state)
            moved["arguments"] = {"extra": 1}
            assert (await rpc_error(c.request("tools/call", moved))).code == -32602
            later = time.time() + 2 * 3600
            monkeypatch.setattr(time, "time", lambda: later)  # the clock mrtr reads
            expired = await rpc_error(c.request("tools/call", call("greet", requestState=state)))
            assert (expired.code, expired.message) == (
                -32602,
                "Invalid params: requestState expired; start the request again",
            )

    run(scenario)
    assert ran == ["greet"]  # neither retry reached the handler


def test_a_state_belongs_to_its_caller_by_issuer_and_subject() -> None:
    """A refreshed token (same ``iss`` and ``sub``, new claims) may carry on; another caller
    may not replay the state (the same rule binds HTTP sessions, ``request.caller_key``)."""
    app, ran = make_app()
    ada = {"iss": "https://auth.example.com", "sub": "ada", "exp": 1}
    callers = {"refreshed": {**ada, "exp": 2}, "bob": {**ada, "sub": "bob"}}
    callers["elsewhere"] = {**ada, "iss": "https://other.example.com"}

    async def retry(c: Client, principal: Any, state: str) -> Any:
        with ActingFor(principal):
            return await c.request("tools/call", call("greet", requestState=state))

    async def scenario() -> None:
        async with client(app) as c:
            with ActingFor(ada):
                state = (await c.request("tools/call", call("greet")))["requestState"]
            for name in ("bob", "elsewhere"):
                error = await rpc_error(retry(c, callers[name], state))
                assert error.code == -32602, name
            assert (await retry(c, callers["refreshed"], state))["resultType"] == "input_required"

    run(scenario)
    assert ran == ["greet", "greet"]  # the first call and the refreshed caller's retry


def test_a_call_that_changes_its_arguments_before_it_asks_has_its_retry_accepted() -> None:
    """The state is bound to the arguments the request sent (the retry sends them again),
    not to what became of them before the call asked: here a tool changes the request's own
    arguments (which a middleware handed it) in place, nested values and top-level ones."""
    app = App("changing", "1")
    sent_now: dict[str, Any] = {}

    async def keep_arguments(call: Call, call_next: CallNext) -> dict[str, Any]:
        sent_now["arguments"] = call.params.get("arguments")
        return await call_next(call)

    app.middleware(keep_arguments)

    @app.tool
    async def nested(ctx: Context, items: list[str], label: str) -> str:
        """Changes a nested argument of the request, then asks."""
        sent_now["arguments"]["items"].append("added")
        answer = await ctx.elicit("Name?", Name, key="who")
        return f"{label}: {answer.content.name if answer.content else '-'} {items}"

    @app.tool
    async def flat(ctx: Context, label: str, count: int) -> str:
        """Changes a top-level argument of the request, then asks."""
        sent_now["arguments"]["count"] = count + 1
        answer = await ctx.elicit("Name?", Name, key="who")
        return f"{label} x{count}: {answer.content.name if answer.content else '-'}"

    sent = {"nested": {"items": ["a"], "label": "N"}, "flat": {"label": "F", "count": 2}}
    expected = {"nested": "N: Alice ['a']", "flat": "F x2: Alice"}

    async def scenario() -> None:
        async with client(app) as c:
            for name, arguments in sent.items():
                params = {"name": name, "arguments": arguments}
                first = await c.request("tools/call", copy.deepcopy(params))
                assert first["resultType"] == "input_required"
                retry = {
                    **copy.deepcopy(params),
                    "inputResponses": {"who": answers("elicitation/create")},
                    "requestState": first["requestState"],
                }
                assert text_of(await c.request("tools/call", retry)) == expected[name]

    run(scenario)
