"""``mcpkit.app``: ``App`` holds identity, lifespan and the registry; protocol tuning is
``ServerOptions``, one validated value read by the core."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from mcpkit import App, DefinitionError, ServerOptions
from mcpkit.testing import Client


def test_app_takes_identity_code_options_and_settings_only() -> None:
    """Identity, the code around requests (lifespan, middleware), ``ServerOptions`` (how the
    protocol is spoken), and the settings (what the server itself is configured with)."""
    assert list(inspect.signature(App).parameters) == [
        "name",
        "version",
        "title",
        "description",
        "instructions",
        "website_url",
        "icons",
        "lifespan",
        "options",
        "middleware",
        "settings",
        "settings_prefix",
    ]


def test_options_default_to_the_documented_values() -> None:
    assert App("a", "1").options == ServerOptions(
        mask_errors=True,
        invalid_arguments=None,
        page_size=100,
        ttl_ms=0,
        cache_scope="public",
        state_key=None,
    )


def test_options_are_frozen() -> None:
    options = ServerOptions(page_size=5)
    with pytest.raises(AttributeError, match="frozen"):
        options.page_size = 6  # type: ignore[misc]
    assert dataclasses.replace(options, ttl_ms=10) == ServerOptions(page_size=5, ttl_ms=10)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"page_size": 0}, "page_size must be an integer of at least 1, not 0"),
        ({"page_size": True}, "page_size must be an integer of at least 1, not True"),
        ({"ttl_ms": -1}, "ttl_ms must be an integer of at least 0, not -1"),
        ({"ttl_ms": 1.5}, "ttl_ms must be an integer of at least 0, not 1.5"),
        (
            {"invalid_arguments": "error"},
            'invalid_arguments must be "protocol", "result" or None, not \'error\'',
        ),
        ({"cache_scope": "shared"}, 'cache_scope must be "public" or "private", not \'shared\''),
    ],
    ids=["page-size-zero", "page-size-bool", "ttl-negative", "ttl-float", "mode", "scope"],
)
def test_options_refuse_values_the_protocol_cannot_carry(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match="must be") as caught:
        ServerOptions(**options)
    assert str(caught.value) == message


def test_options_reach_the_wire() -> None:
    app = App("paged", "1", options=ServerOptions(page_size=1))
    for name in ("one", "two"):
        app.add_tool(lambda: None, name=name)
    with Client(app) as client:
        first = client.request("tools/list", {})
    assert [tool["name"] for tool in first["tools"]] == ["one"]
    assert isinstance(first["nextCursor"], str)


# ---------------------------------------------------------------------------------------------
# Typed registration: a misspelt option is a type error (the ignores below are checked by
# `mypy --strict`, which reports an unused one) and, for callers without a type checker, a
# DefinitionError naming the option.


def noop() -> str:
    return "x"


MISSPELT: list[tuple[str, Callable[[App], object]]] = [
    ("add_tool", lambda app: app.add_tool(noop, descripton="d")),  # type: ignore[call-arg]
    ("tool", lambda app: app.tool(descripton="d")(noop)),  # type: ignore[call-overload]
    ("add_prompt", lambda app: app.add_prompt(noop, mime_type="t")),  # type: ignore[call-arg]
    ("prompt", lambda app: app.prompt(mime_type="t")(noop)),  # type: ignore[call-overload]
    ("add_resource", lambda app: app.add_resource("a://b", noop, blocking=False)),  # type: ignore[call-arg]
    ("resource", lambda app: app.resource("a://b", blocking=False)(noop)),  # type: ignore[call-arg]
    ("add_directory", lambda app: app.add_directory(".", blocking=False)),  # type: ignore[call-arg]
]


@pytest.mark.parametrize("register", [r for _, r in MISSPELT], ids=[n for n, _ in MISSPELT])
def test_an_unknown_option_is_refused_by_name(register: Callable[[App], object]) -> None:
    app = App("a", "1")
    with pytest.raises(
        DefinitionError, match=r"unknown option\(s\) \['(descripton|mime_type|blocking)'\]"
    ):
        register(app)
    assert not app.definitions()


def test_completions_on_a_static_resource_are_refused() -> None:
    app = App("a", "1")
    with pytest.raises(DefinitionError) as caught:
        app.add_resource("a://b", noop, completions={"x": lambda: []})
    assert str(caught.value) == (
        "resource 'a://b': completions complete template variables; this URI has none"
    )


# ---------------------------------------------------------------------------------------------
# One shape for tools, resources, templates and prompts


def echo(x: str) -> str:
    """Echo."""
    return x


def test_every_definition_has_one_shape() -> None:
    app = App("a", "1")
    app.add_tool(noop)
    app.add_resource("a://b", noop, name="b")
    app.add_resource("a://{x}", echo)
    app.add_prompt(echo, name="say")
    for item in app.definitions():
        item.compile()
    assert [(item.name, item.label, item.definition) for item in app.definitions()] == [
        (
            "noop",
            "tool 'noop'",
            {"name": "noop", "inputSchema": {"type": "object", "properties": {}}},
        ),
        ("b", "resource 'a://b'", {"uri": "a://b", "name": "b"}),
        (
            "echo",
            "resource template 'a://{x}'",
            {"uriTemplate": "a://{x}", "name": "echo", "description": "Echo."},
        ),
        (
            "say",
            "prompt 'say'",
            {
                "name": "say",
                "description": "Echo.",
                "arguments": [{"name": "x", "required": True}],
            },
        ),
    ]


def test_the_registries_are_read_only_views_that_follow_the_app() -> None:
    app = App("views", "1.0.0")
    views = (app.tools, app.prompts, app.resources, app.resource_templates)

    @app.tool()
    def ping() -> str:
        return "pong"

    @app.prompt()
    def hello() -> str:
        return "hi"

    @app.resource("memo://a")
    def memo() -> str:
        return "a"

    @app.resource("memo://{name}")
    def named(name: str) -> str:
        return name

    assert [list(view) for view in views] == [["ping"], ["hello"], ["memo://a"], ["memo://{name}"]]
    for view in views:
        with pytest.raises(TypeError):
            view["other"] = None  # type: ignore[index]
    with pytest.raises(AttributeError):
        app.tools = {}  # type: ignore[misc]
    app.remove_tool("ping")
    assert "ping" not in app.tools
