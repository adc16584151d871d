"""The method table (``mcpkit.protocol.methods``): every MCP method registered once, by its
feature's module, and handlers given the narrow ``Runtime``, never the server."""

from __future__ import annotations

from typing import Any

import pytest

from mcpkit import App
from mcpkit.protocol import methods
from mcpkit.protocol.methods import (
    completion,
    lifecycle,
    prompts,
    resources,
    subscriptions,
    tasks,
    tools,
)
from mcpkit.protocol.request import RequestContext
from mcpkit.testing import Client
from mcpkit.testing.client import RPCError

FEATURES = {
    lifecycle: ["ping", "logging/setLevel", "server/discover"],
    tools: ["tools/list", "tools/call"],
    resources: [
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
    ],
    prompts: ["prompts/list", "prompts/get"],
    completion: ["completion/complete"],
    tasks: ["tasks/get", "tasks/update", "tasks/cancel"],
    subscriptions: ["subscriptions/listen"],
}


def test_each_method_is_registered_once_by_its_feature() -> None:
    for module, names in FEATURES.items():
        assert list(module.METHODS) == names, module.__name__
    every = [name for names in FEATURES.values() for name in names]
    assert sorted(methods.HANDLERS) == sorted(every)
    assert len(every) == len(set(every))


def test_a_handler_is_given_the_runtime_not_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    app = App("runtime", "1", instructions="Hello.")
    seen: list[Any] = []

    async def probe(
        runtime: methods.Runtime, ctx: RequestContext, params: dict[str, Any]
    ) -> dict[str, Any]:
        seen.append(runtime)
        return {"capabilities": runtime.capabilities(), "instructions": runtime.app.instructions}

    monkeypatch.setitem(methods.HANDLERS, "ping", methods.MethodSpec(probe, stateless=False))
    with Client(app) as client:
        assert client.request("ping") == {"capabilities": {"logging": {}}, "instructions": "Hello."}
    assert [type(runtime) for runtime in seen] == [methods.Runtime]
    assert seen[0].app is app


def _everything() -> App:
    app = App("params", "1")

    @app.tool
    def echo(text: str) -> str:
        return text

    @app.prompt
    def greet(name: str) -> str:
        return f"Hello {name}"

    @app.resource("data://one")
    def one() -> str:
        return "1"

    return app


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("tools/call", {"name": 5}, "Invalid params: 'name' must be a string"),
        ("prompts/get", {}, "Invalid params: 'name' must be a string"),
        ("resources/read", {"uri": None}, "Invalid params: 'uri' must be a string"),
        ("resources/subscribe", {"uri": 1}, "Invalid params: 'uri' must be a string"),
        ("resources/unsubscribe", {}, "Invalid params: 'uri' must be a string"),
    ],
    ids=["tool-name", "prompt-name", "read-uri", "subscribe-uri", "unsubscribe-uri"],
)
def test_a_missing_or_non_string_name_or_uri_is_32602_in_one_wording(
    method: str, params: dict[str, Any], message: str
) -> None:
    with Client(_everything()) as client, pytest.raises(RPCError) as caught:
        client.request(method, params)
    assert caught.value.error == {"code": -32602, "message": message}
