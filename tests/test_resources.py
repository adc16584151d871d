"""Resources: static ones, RFC 6570 templates, contents, errors per era, directories,
subscriptions, pagination (in memory, both eras)."""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import pytest
from features_support import HANDSHAKE, STATELESS, Client, RPCError, era, rpc_error, run, settle
from pydantic import BaseModel

import mcpkit
from mcpkit import App, Context, DefinitionError, ServerOptions, _directory
from mcpkit.resources import Contents


class Point(BaseModel):
    x: int
    y: int


def make_app(**options: Any) -> App:
    app = App("res", "1.0.0", **options)

    @app.resource("memo://text", title="Text", mime_type="text/plain")
    def text() -> str:
        """A text resource."""
        return "hello"

    @app.resource("memo://bytes")
    def raw() -> bytes:
        return b"\x00\x01\xff"

    @app.resource("memo://dict", description="A dict.")
    def data() -> dict[str, Any]:
        return {"a": 1}

    @app.resource("memo://model")
    def model() -> Point:
        return Point(x=1, y=2)

    @app.resource(
        "memo://many",
        icons=[{"src": "data:image/png;base64,AA==", "mimeType": "image/png"}],
        annotations={"audience": ["user"], "priority": 0.5},
    )
    def many() -> list[Contents]:
        return [
            Contents(text="one", mime_type="text/markdown"),
            Contents(blob=b"two", uri="memo://many/2"),
        ]

    @app.resource("users://{user_id}/profile", name="profile", mime_type="application/json")
    def profile(user_id: int) -> dict[str, Any]:
        """A user's profile.

        Args:
            user_id: The user's number.
        """
        return {"id": user_id, "type": type(user_id).__name__}

    @app.resource("docs://{+path}")
    def doc(path: str) -> str:
        return f"doc at {path}"

    return app


@era
def test_static_resources_list_and_read(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            listed = {r["uri"]: r for r in await client.list_resources()}
            assert list(listed) == [
                "memo://text",
                "memo://bytes",
                "memo://dict",
                "memo://model",
                "memo://many",
            ]
            assert listed["memo://text"] == {
                "uri": "memo://text",
                "name": "text",
                "title": "Text",
                "description": "A text resource.",
                "mimeType": "text/plain",
            }
            assert listed["memo://dict"]["description"] == "A dict."
            assert listed["memo://many"]["annotations"] == {"audience": ["user"], "priority": 0.5}
            assert listed["memo://many"]["icons"][0]["mimeType"] == "image/png"

            assert await client.read_resource("memo://text") == [
                {"uri": "memo://text", "mimeType": "text/plain", "text": "hello"}
            ]
            assert await client.read_resource("memo://bytes") == [
                {
                    "uri": "memo://bytes",
                    "mimeType": "application/octet-stream",
                    "blob": base64.b64encode(b"\x00\x01\xff").decode(),
                }
            ]
            assert await client.read_resource("memo://dict") == [
                {"uri": "memo://dict", "mimeType": "application/json", "text": '{"a":1}'}
            ]
            assert (await client.read_resource("memo://model"))[0]["text"] == '{"x":1,"y":2}'
            assert await client.read_resource("memo://many") == [
                {"uri": "memo://many", "mimeType": "text/markdown", "text": "one"},
                {"uri": "memo://many/2", "blob": base64.b64encode(b"two").decode()},
            ]

    run(scenario)


@era
def test_templates_parse_variables_strictly(version: str) -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=version) as client:
            templates = await client.list_resource_templates()
            assert templates == [
                {
                    "uriTemplate": "users://{user_id}/profile",
                    "name": "profile",
                    "description": "A user's profile.",
                    "mimeType": "application/json",
                },
                {"uriTemplate": "docs://{+path}", "name": "doc"},
            ]
            contents = await client.read_resource("users://123/profile")
            assert contents == [
                {
                    "uri": "users://123/profile",
                    "mimeType": "application/json",
                    "text": '{"id":123,"type":"int"}',
                }
            ]
            bad = await rpc_error(client.read_resource("users://12x/profile"))
            assert bad.code == -32602
            assert bad.data == {"field": "user_id", "expected": "integer", "received": "12x"}
            # {var} stops at '/', {+path} takes several segments
            assert (await client.read_resource("docs://a/b/c.md"))[0]["text"] == "doc at a/b/c.md"
            missing = await rpc_error(client.read_resource("users://1/2/profile"))
            assert missing.data == {"uri": "users://1/2/profile"}

    run(scenario)


ADVERSARIAL = """
import json
from mcpkit import App
from mcpkit.testing import Client, RPCError

app = App("slow", "1")

@app.resource("repo://{+owner}/{+path}.md")
def repo(owner: str, path: str) -> str:
    return f"{len(owner)} {len(path)}"

@app.resource("pair://{left}.{right}")
def pair(left: str, right: str) -> str:
    return f"{len(left)} {len(right)}"

answers = []
with Client(app) as client:
    for uri in (
        "repo://" + "a/" * 500_000,  # no ".md": every split of 1 MB tried, ~1e12 steps
        "pair://" + "a." * 500_000 + "/",
        "repo://" + "/" * 16_000 + "x.md",  # within the limit, the longest owner wins
        "pair://" + "a." * 8_000 + "b",
    ):
        try:
            answers.append(client.read_resource(uri)[0]["text"])
        except RPCError as exc:
            answers.append([exc.code, exc.message, exc.data == {"uri": uri}])
print(json.dumps(answers))
"""


def test_adversarial_uris_do_not_backtrack() -> None:
    # in a child process: a regular expression holds the GIL while it backtracks, so a thread
    # could not even be abandoned; the timeout only guards the run (the old matcher needed hours)
    done = subprocess.run(
        [sys.executable, "-c", ADVERSARIAL], capture_output=True, text=True, timeout=120
    )
    assert json.loads(done.stdout) == [
        [-32002, "Resource not found", True],
        [-32002, "Resource not found", True],
        "15999 1",
        "15999 1",
    ]


def test_unknown_uri_is_an_error_per_era_never_empty_contents() -> None:
    async def scenario() -> None:
        for version, code in ((HANDSHAKE, -32002), (STATELESS, -32602)):
            async with Client(make_app(), protocol_version=version) as client:
                error = await rpc_error(client.read_resource("memo://nothing"))
                assert (error.code, error.message, error.data) == (
                    code,
                    "Resource not found",
                    {"uri": "memo://nothing"},
                )

    run(scenario)


def test_template_parameters_must_match_variables() -> None:
    app = App("bad", "1")
    with pytest.raises(DefinitionError, match=r"missing parameters: \['user_id'\]") as caught:

        @app.resource("users://{user_id}")
        def wrong(uid: int) -> str:
            return ""

    assert "parameters not in the template: ['uid']" in str(caught.value)
    assert "users://{user_id}" in str(caught.value)

    with pytest.raises(DefinitionError, match="a static resource takes no parameters"):

        @app.resource("memo://static")
        def static(x: int) -> str:
            return ""

    with pytest.raises(DefinitionError, match=r"each variable may appear once \(twice: \['a'\]\)"):

        @app.resource("pairs://{a}/{a}")
        def twice(a: str) -> str:
            return a

    app.add_resource("memo://a", lambda: "")
    with pytest.raises(DefinitionError, match="defined twice"):
        app.add_resource("memo://a", lambda: "")


def test_context_parameter_is_not_a_variable_and_reads_other_resources() -> None:
    app = make_app()

    @app.resource("combo://{user_id}")
    async def combo(user_id: int, ctx: Context) -> str:
        inner = await ctx.read_resource(f"users://{user_id}/profile")
        return f"{ctx.protocol_version}: {inner[0]['text']}"

    @app.tool
    async def read(uri: str, ctx: Context) -> str:
        """Reads one of the app's resources."""
        return str((await ctx.read_resource(uri))[0]["text"])

    async def scenario() -> None:
        for version in (HANDSHAKE, STATELESS):
            async with Client(app, protocol_version=version) as client:
                text = (await client.read_resource("combo://7"))[0]["text"]
                assert text == f'{version}: {{"id":7,"type":"int"}}'
                result = await client.call_tool("read", {"uri": "memo://text"})
                assert result["content"][0]["text"] == "hello"

    run(scenario)


def annotated(item_id: int, ctx: Annotated[Context, "injected"]) -> str:
    return f"{item_id} via {ctx.protocol_version}"


def optional(item_id: int, ctx: Optional[Context]) -> str:  # noqa: UP045 (the spelling tested)
    return f"{item_id} via {ctx and ctx.protocol_version}"


def none_first(item_id: int, ctx: None | Context) -> str:  # noqa: RUF036 (the spelling tested)
    return f"{item_id} via {ctx and ctx.protocol_version}"


def dotted(item_id: int, ctx: mcpkit.Context) -> str:
    return f"{item_id} via {ctx.protocol_version}"


def dotted_static(ctx: mcpkit.Context) -> str:
    return f"static via {ctx.protocol_version}"


@pytest.mark.parametrize("fn", [annotated, optional, none_first, dotted], ids=lambda f: f.__name__)
def test_the_context_is_found_one_way_however_it_is_written(fn: Callable[..., str]) -> None:
    # Decoration and compile agree on which parameter is the Context, with the annotations
    # still text (this module uses `from __future__ import annotations`).
    app = App("ctx", "1")
    app.add_resource("items://{item_id}", fn)
    app.add_resource("items://static", dotted_static)

    async def scenario() -> None:
        async with Client(app, protocol_version=HANDSHAKE) as client:
            assert await client.read_resource("items://7") == [
                {"uri": "items://7", "mimeType": "text/plain", "text": f"7 via {HANDSHAKE}"}
            ]
            assert await client.read_resource("items://static") == [
                {
                    "uri": "items://static",
                    "mimeType": "text/plain",
                    "text": f"static via {HANDSHAKE}",
                }
            ]

    run(scenario)


def test_a_failing_resource_is_an_internal_error() -> None:
    app = App("fails", "1")

    @app.resource("memo://boom")
    def boom() -> str:
        raise RuntimeError("secret detail")

    async def scenario() -> None:
        for version in (HANDSHAKE, STATELESS):
            async with Client(app, protocol_version=version) as client:
                error = await rpc_error(client.read_resource("memo://boom"))
                assert error.code == -32603
                assert "secret" not in error.message

    run(scenario)


def test_stateless_results_carry_cache_hints() -> None:
    async def scenario() -> None:
        app = make_app(options=ServerOptions(ttl_ms=5000, cache_scope="private"))
        async with Client(app, protocol_version=STATELESS) as client:
            for method, params in (
                ("resources/list", None),
                ("resources/templates/list", None),
                ("resources/read", {"uri": "memo://text"}),
            ):
                result = await client.request(method, params)
                assert result["resultType"] == "complete"
                assert (result["ttlMs"], result["cacheScope"]) == (5000, "private")

    run(scenario)


@era
def test_pagination(version: str) -> None:
    async def scenario() -> None:
        async with Client(
            make_app(options=ServerOptions(page_size=2)), protocol_version=version
        ) as client:
            first = await client.request("resources/list")
            assert [r["uri"] for r in first["resources"]] == ["memo://text", "memo://bytes"]
            assert "nextCursor" in first
            assert len(await client.list_resources()) == 5
            assert len(await client.list_resource_templates()) == 2
            bad = await rpc_error(client.request("resources/list", {"cursor": "nope"}))
            assert bad.code == -32602

    run(scenario)


# ------------------------------------------------------------------------- directories


@pytest.fixture
def served(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "hello.txt").write_text("hi there", encoding="utf-8")
    (root / "sub" / "data.json").write_text('{"k": 1}', encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "secret.txt").write_text("top secret", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", root / "escape.txt")
    os.symlink(tmp_path, root / "up")
    os.symlink(root / "hello.txt", root / "inside.txt")
    return root


@era
def test_directory_serves_files_and_refuses_traversal(
    served: Path, version: str, opener: bool
) -> None:
    app = App("files", "1")
    template = app.add_directory(served, uri_prefix="file:///", description="My files.")
    assert template.definition == {
        "uriTemplate": "file:///{+path}",
        "name": "files",
        "description": "My files.",
    }

    async def scenario() -> None:
        async with Client(app, protocol_version=version) as client:
            assert await client.read_resource("file:///hello.txt") == [
                {"uri": "file:///hello.txt", "mimeType": "text/plain", "text": "hi there"}
            ]
            data = await client.read_resource("file:///sub/data.json")
            assert data[0]["mimeType"] == "application/json"
            image = await client.read_resource("file:///image.png")
            assert image[0]["blob"] == base64.b64encode(b"\x89PNG\r\n").decode()
            assert (await client.read_resource("file:///inside.txt"))[0]["text"] == "hi there"
            for uri in (
                "file:///../secret.txt",
                "file:///sub/../../secret.txt",
                f"file:///{served.parent / 'secret.txt'}",  # absolute: file:////tmp/...
                "file:///escape.txt",  # a symlink leaving the root
                "file:///up/secret.txt",  # through a symlinked directory
                "file:///sub\\..\\..\\secret.txt",
            ):
                error = await rpc_error(client.read_resource(uri))
                assert error.code == -32602, uri
                assert "leaves the served directory" in error.message, uri
            missing = await rpc_error(client.read_resource("file:///nope.txt"))
            assert missing.code == (-32002 if version == HANDSHAKE else -32602)
            assert missing.data == {"uri": "file:///nope.txt"}
            assert (await rpc_error(client.read_resource("file:///sub"))).data == {
                "uri": "file:///sub"
            }

    run(scenario)


@pytest.fixture(params=[True, False], ids=["walk", "resolve"])
def opener(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways of opening: name by name (POSIX) and resolve-then-check (Windows)."""
    walks: bool = request.param
    monkeypatch.setattr(_directory, "_WALKS", walks)
    return walks


def test_directory_follows_symlinks_only_inside_the_root(served: Path, opener: bool) -> None:
    os.symlink("sub/data.json", served / "relative.json")
    os.symlink("../hello.txt", served / "sub" / "back.txt")
    os.symlink("sub", served / "alias")
    os.symlink("../../secret.txt", served / "sub" / "out.txt")
    os.symlink("loop", served / "loop")
    app = App("files", "1")
    app.add_directory(served)

    async def scenario() -> None:
        async with Client(app) as client:
            for uri, text in (
                ("file:///relative.json", '{"k": 1}'),
                ("file:///sub/back.txt", "hi there"),
                ("file:///alias/data.json", '{"k": 1}'),
                ("file:///alias/../hello.txt", None),
                ("file:///inside.txt", "hi there"),
            ):
                if text is None:
                    error = await rpc_error(client.read_resource(uri))
                    assert error.code == -32602, uri  # ".." as written is refused
                else:
                    assert (await client.read_resource(uri))[0]["text"] == text, uri
            error = await rpc_error(client.read_resource("file:///sub/out.txt"))
            assert (error.code, error.message) == (
                -32602,
                "Invalid params: path 'sub/out.txt' leaves the served directory",
            )
            loop = await rpc_error(client.read_resource("file:///loop"))
            assert (loop.code, loop.data) == (-32002, {"uri": "file:///loop"})

    run(scenario)


FLIPPER = """
import os, sys
folder, aside, outside = sys.argv[1:]
print("flipping", flush=True)
while True:
    os.rename(folder, aside)
    os.symlink(outside, folder)
    os.unlink(folder)
    os.rename(aside, folder)
"""


def test_directory_swapped_for_a_symlink_mid_read_never_serves_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "sub" / "data.txt").write_text("inside", encoding="utf-8")
    (outside / "data.txt").write_text("outside secret", encoding="utf-8")
    app = App("files", "1")
    app.add_directory(root)
    # another process flips root/sub between the folder and a symlink to outside/: truly
    # concurrent with the reads, where a thread would flip only between the server's steps
    args = [str(root / "sub"), str(tmp_path / "aside"), str(outside)]
    answers: set[Any] = set()
    with subprocess.Popen(
        [sys.executable, "-c", FLIPPER, *args], stdout=subprocess.PIPE, text=True
    ) as flipper:
        try:
            assert flipper.stdout is not None
            assert flipper.stdout.readline() == "flipping\n"
            with Client(app) as client:
                for _ in range(2000):
                    try:
                        answers.add(client.read_resource("file:///sub/data.txt")[0]["text"])
                    except RPCError as exc:
                        answers.add((exc.code, exc.message))
                    assert "outside secret" not in answers
        finally:
            flipper.kill()
    # each read saw the folder, the symlink, or neither (mid-flip); none failed inside
    assert answers <= {
        "inside",
        (-32602, "Invalid params: path 'sub/data.txt' leaves the served directory"),
        (-32002, "Resource not found"),
    }


def test_names_no_file_can_have_are_not_found(
    served: Path, opener: bool, caplog: pytest.LogCaptureFixture
) -> None:
    os.mkfifo(served / "fifo")
    app = App("files", "1")
    app.add_directory(served)

    async def scenario() -> None:
        async with Client(app) as client:
            for uri in (
                "file:///a\x00b.txt",
                "file:///a%00b.txt",
                "file:///" + "n" * 300,  # longer than a name may be
                "file:///sub/" + "n" * 300,
                "file:///" + "d/" * 3000 + "x",  # longer than a path may be
                "file:///fifo",  # not a regular file (and never blocks)
            ):
                error = await rpc_error(client.read_resource(uri))
                assert (error.code, error.message, error.data) == (
                    -32002,
                    "Resource not found",
                    {"uri": uri},
                ), uri[:40]

    with caplog.at_level(logging.ERROR, logger="mcpkit"):
        run(scenario)
    assert caplog.records == []


# ----------------------------------------------------------------------- subscriptions


def test_subscribe_and_notify_resource_updated() -> None:
    app = make_app()

    async def scenario() -> None:
        async with Client(app) as client:
            caps = (client.initialize_result or {})["capabilities"]
            assert caps["resources"] == {"subscribe": True, "listChanged": True}
            assert await client.request("resources/subscribe", {"uri": "memo://text"}) == {}
            app.notify_resource_updated("memo://text")
            app.notify_resource_updated("memo://dict")  # not subscribed: nothing
            await settle()
            assert client.notifications == [
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": "memo://text"},
                }
            ]
            assert await client.request("resources/unsubscribe", {"uri": "memo://text"}) == {}
            app.notify_resource_updated("memo://text")
            await settle()
            assert len(client.notifications) == 1
            error = await rpc_error(client.request("resources/subscribe", {"uri": 3}))
            assert error.code == -32602

    run(scenario)


def test_subscribe_does_not_exist_in_the_stateless_era() -> None:
    async def scenario() -> None:
        async with Client(make_app(), protocol_version=STATELESS) as client:
            for method in ("resources/subscribe", "resources/unsubscribe"):
                error = await rpc_error(client.request(method, {"uri": "memo://text"}))
                assert error.code == -32601

    run(scenario)


def test_no_resources_no_capability() -> None:
    app = App("empty", "1")

    @app.tool
    def noop() -> str:
        """Nothing."""
        return ""

    async def scenario() -> None:
        async with Client(app) as client:
            assert "resources" not in (client.initialize_result or {})["capabilities"]
            assert (await rpc_error(client.request("resources/list"))).code == -32601

    run(scenario)


def test_remove_resource() -> None:
    app = make_app()
    app.remove_resource("memo://text")
    app.remove_resource("docs://{+path}")
    assert "memo://text" not in app.resources
    assert "docs://{+path}" not in app.resource_templates
    with pytest.raises(KeyError):
        app.remove_resource("memo://text")


def test_contents_needs_exactly_one_of_text_or_blob() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Contents()
    with pytest.raises(ValueError, match="exactly one"):
        Contents(text="a", blob=b"b")


def test_a_template_may_say_not_found() -> None:
    from mcpkit import ResourceNotFound  # public: the idiom the docs show

    assert ResourceNotFound is mcpkit.exceptions.ResourceNotFound
    app = App("users", "1")

    @app.resource("users://{user_id}")
    def user(user_id: int) -> str:
        if user_id != 1:
            raise ResourceNotFound()
        return "Ada"

    async def scenario() -> None:
        for version, code in ((HANDSHAKE, -32002), (STATELESS, -32602)):
            async with Client(app, protocol_version=version) as client:
                assert (await client.read_resource("users://1"))[0]["text"] == "Ada"
                error = await rpc_error(client.read_resource("users://2"))
                assert (error.code, error.data) == (code, {"uri": "users://2"})

    run(scenario)


@pytest.mark.parametrize("error", [KeyError, LookupError, IndexError], ids=lambda e: e.__name__)
def test_a_lookup_error_in_a_template_is_an_internal_error_not_not_found(
    error: type[Exception], caplog: pytest.LogCaptureFixture
) -> None:
    # A KeyError escaping a function is a bug in it (a dict without that key), not the
    # client's missing resource: it is never silently turned into "not found".
    app = App("users", "1")

    @app.resource("users://{user_id}")
    def user(user_id: int) -> str:
        raise error(user_id)

    async def scenario() -> None:
        for version in (HANDSHAKE, STATELESS):
            async with Client(app, protocol_version=version) as client:
                error = await rpc_error(client.read_resource("users://2"))
                assert (error.code, error.message, error.data) == (-32603, "Internal error", None)

    with caplog.at_level(logging.ERROR, logger="mcpkit"):
        run(scenario)
    assert caplog.records  # the bug is in the log, for the server's owner


# ----------------------------------------------------------------------- percent-encoding


@era
def test_template_values_are_percent_decoded(
    served: Path, version: str, caplog: pytest.LogCaptureFixture
) -> None:
    app = App("decoded", "1")

    @app.resource("user://{name}/profile")
    def profile(name: str) -> str:
        return name

    @app.resource("docs://{+path}")
    def doc(path: str) -> str:
        return path

    (served / "my file.txt").write_text("spaced", encoding="utf-8")
    app.add_directory(served)
    not_found = -32002 if version == HANDSHAKE else -32602

    async def scenario() -> None:
        async with Client(app, protocol_version=version) as client:
            assert await client.read_resource("user://Jos%C3%A9/profile") == [
                {"uri": "user://Jos%C3%A9/profile", "mimeType": "text/plain", "text": "José"}
            ]
            # {var}: every triplet decoded; {+var}: those of reserved characters stay
            for uri, value in (
                ("user://a%2Fb%3Fc%25/profile", "a/b?c%"),
                ("docs://guides/a%20b%2Fc%3f%25%7E", "guides/a b%2Fc%3f%~"),
                ("file:///my%20file.txt", "spaced"),
                ("file:///sub/d%61ta.json", '{"k": 1}'),
            ):
                assert (await client.read_resource(uri))[0]["text"] == value, uri
            # a decoded ".." is still refused; an encoded "/" is part of a name, not a separator
            for uri, path in (
                ("file:///%2e%2e/secret.txt", "../secret.txt"),
                ("file:///sub/%2E%2E/%2e%2e/secret.txt", "sub/../../secret.txt"),
            ):
                error = await rpc_error(client.read_resource(uri))
                assert (error.code, error.message) == (
                    -32602,
                    f"Invalid params: path {path!r} leaves the served directory",
                ), uri
            for uri in (
                "file:///..%2fsecret.txt",
                "file:///%2e%2e%2Fsecret.txt",
                "user://%zz/profile",  # not a triplet
                "user://%4/profile",  # cut short
                "user://Jos%C3/profile",  # not UTF-8
                "docs://%FF",
                "file:///%E9t%E9.txt",  # Latin-1
            ):
                error = await rpc_error(client.read_resource(uri))
                assert (error.code, error.message, error.data) == (
                    not_found,
                    "Resource not found",
                    {"uri": uri},
                ), uri

    with caplog.at_level(logging.ERROR, logger="mcpkit"):
        run(scenario)
    assert caplog.records == []


@era
def test_a_tool_reading_a_missing_resource_catches_resource_not_found_in_every_era(
    version: str,
) -> None:
    """One exception for "not found" in user code, whatever the era; only the wire answer
    differs by era (the server decides that, once)."""
    app = App("reader", "1")

    @app.tool
    async def peek(uri: str, ctx: Context) -> str:
        """Reads one of the app's resources."""
        try:
            await ctx.read_resource(uri)
        except mcpkit.ResourceNotFound as exc:
            return f"missing: {exc.data}"
        return "found"

    async def scenario() -> str:
        async with Client(app, protocol_version=version) as client:
            return (await client.call_tool("peek", {"uri": "memo://nothing"})).text

    assert run(scenario) == "missing: {'uri': 'memo://nothing'}"
