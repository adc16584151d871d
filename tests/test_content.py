"""Content helpers -> MCP content blocks."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from mcpkit import Audio, EmbeddedResource, Image, ResourceLink, Text
from mcpkit.content import Content

PNG = b"\x89PNG\r\n\x1a\n"
B64 = base64.b64encode(PNG).decode()


@pytest.mark.parametrize(
    ("helper", "block"),
    [
        pytest.param(Text("hi"), {"type": "text", "text": "hi"}, id="text"),
        pytest.param(
            Text("hi", annotations={"audience": ["user"]}, meta={"k": 1}),
            {
                "type": "text",
                "text": "hi",
                "annotations": {"audience": ["user"]},
                "_meta": {"k": 1},
            },
            id="text-annotated",
        ),
        pytest.param(
            Image(data=PNG), {"type": "image", "data": B64, "mimeType": "image/png"}, id="image"
        ),
        pytest.param(
            Image(data=PNG, mime_type="image/webp"),
            {"type": "image", "data": B64, "mimeType": "image/webp"},
            id="image-mime",
        ),
        pytest.param(
            Audio(data=PNG), {"type": "audio", "data": B64, "mimeType": "audio/wav"}, id="audio"
        ),
        pytest.param(
            ResourceLink("file:///a.txt", "a.txt"),
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
            id="link",
        ),
        pytest.param(
            ResourceLink(
                "file:///a.txt", "a", title="A", description="d", mime_type="text/plain", size=0
            ),
            {
                "type": "resource_link",
                "uri": "file:///a.txt",
                "name": "a",
                "title": "A",
                "description": "d",
                "mimeType": "text/plain",
                "size": 0,
            },
            id="link-full",
        ),
        pytest.param(
            EmbeddedResource("file:///a.txt", text="hello", mime_type="text/plain"),
            {
                "type": "resource",
                "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"},
            },
            id="embedded-text",
        ),
        pytest.param(
            EmbeddedResource("file:///a.png", blob=PNG),
            {"type": "resource", "resource": {"uri": "file:///a.png", "blob": B64}},
            id="embedded-blob",
        ),
    ],
)
def test_blocks(helper: Any, block: dict[str, Any]) -> None:
    assert isinstance(helper, Content)
    assert helper.to_block() == block


@pytest.mark.parametrize(
    ("cls", "filename", "mime"),
    [
        pytest.param(Image, "logo.png", "image/png", id="png"),
        pytest.param(Image, "photo.jpg", "image/jpeg", id="jpg"),
        pytest.param(Image, "logo.unknownext", "image/png", id="image-fallback"),
        pytest.param(Audio, "sound.mp3", "audio/mpeg", id="mp3"),
        pytest.param(Audio, "sound.unknownext", "audio/wav", id="audio-fallback"),
    ],
)
def test_files_and_guessed_mime(
    tmp_path: Path, cls: type[Image] | type[Audio], filename: str, mime: str
) -> None:
    path = tmp_path / filename
    path.write_bytes(PNG)
    block = cls(path=path).to_block()
    assert block == {"type": cls._kind, "data": B64, "mimeType": mime}
    assert cls(path=str(path)).to_block() == block


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: Image(), id="image-nothing"),
        pytest.param(lambda: Image(data=PNG, path="x.png"), id="image-both"),
        pytest.param(lambda: Audio(), id="audio-nothing"),
        pytest.param(lambda: EmbeddedResource("u:"), id="resource-nothing"),
        pytest.param(lambda: EmbeddedResource("u:", text="a", blob=b"b"), id="resource-both"),
    ],
)
def test_exactly_one_source(make: Any) -> None:
    with pytest.raises(ValueError, match="exactly one of"):
        make()
