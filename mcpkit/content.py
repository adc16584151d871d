"""Content blocks a tool may return for unstructured results.

``str`` becomes a text block by itself; these helpers cover the rest::

    @app.tool
    def logo() -> Image:
        return Image(path="logo.png")        # MIME type guessed, base64 on the wire
"""

from __future__ import annotations

import base64
import os
from typing import Any

from mcpkit._frozen import frozen

__all__ = ["Audio", "Content", "EmbeddedResource", "Image", "ResourceLink", "Text"]


@frozen
class Text:
    """A text block (a plain ``str`` return does the same)."""

    text: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_block(self) -> dict[str, Any]:
        return _finish({"type": "text", "text": self.text}, self.annotations, self.meta)


@frozen
class _Binary:
    """What :class:`Image` and :class:`Audio` share: bytes, or a file to read them from.

    (Documented, as every ``@frozen`` class should be: ``dataclasses`` writes a missing
    docstring from ``inspect.signature``, whose first use compiles ``tokenize``'s regular
    expressions, a few ms of every start-up.)
    """

    data: bytes | None = None
    path: str | os.PathLike[str] | None = None  # a pathlib.Path, or any path-like
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    _kind = "binary"
    _fallback_mime = "application/octet-stream"

    def __post_init__(self) -> None:
        if (self.data is None) == (self.path is None):
            raise ValueError(f"{type(self).__name__} takes exactly one of data= or path=")

    def _payload(self) -> tuple[str, str]:
        if self.data is not None:
            raw = self.data
        else:  # open(), not pathlib: pathlib costs ~5 ms of a start-up that reads no file
            assert self.path is not None  # __post_init__: exactly one of data= and path=
            with open(os.fspath(self.path), "rb") as file:
                raw = file.read()
        mime = self.mime_type or self._guess_mime()
        return base64.b64encode(raw).decode("ascii"), mime

    def _guess_mime(self) -> str:
        if self.path is not None:
            import mimetypes  # its tables load with the first path that needs a guess

            guessed, _ = mimetypes.guess_type(os.fspath(self.path))
            if guessed:
                return guessed
        return self._fallback_mime

    def to_block(self) -> dict[str, Any]:
        data, mime = self._payload()
        block = {"type": self._kind, "data": data, "mimeType": mime}
        return _finish(block, self.annotations, self.meta)


@frozen
class Image(_Binary):
    """An image from bytes or a file; ``mime_type`` is guessed from the path when not given."""

    _kind = "image"
    _fallback_mime = "image/png"


@frozen
class Audio(_Binary):
    """Audio from bytes or a file; ``mime_type`` is guessed from the path when not given."""

    _kind = "audio"
    _fallback_mime = "audio/wav"


@frozen
class ResourceLink:
    """A link to a resource the client may read (``resource_link``, since 2025-06-18)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        optional = {
            "title": self.title,
            "description": self.description,
            "mimeType": self.mime_type,
            "size": self.size,
        }
        block.update({k: v for k, v in optional.items() if v is not None})
        return _finish(block, self.annotations, self.meta)


@frozen
class EmbeddedResource:
    """A resource's contents inside the result: ``text`` or ``blob`` (bytes, base64 on the wire)."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError("EmbeddedResource takes exactly one of text= or blob=")

    def to_block(self) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": self.uri}
        if self.mime_type:
            resource["mimeType"] = self.mime_type
        if self.text is not None:
            resource["text"] = self.text
        else:
            resource["blob"] = base64.b64encode(self.blob or b"").decode("ascii")
        return _finish({"type": "resource", "resource": resource}, self.annotations, self.meta)


Content = (Text, Image, Audio, ResourceLink, EmbeddedResource)
"""The content helper classes, as a tuple for ``isinstance`` checks."""


def _finish(
    block: dict[str, Any], annotations: dict[str, Any] | None, meta: dict[str, Any] | None
) -> dict[str, Any]:
    if annotations:
        block["annotations"] = annotations
    if meta:
        block["_meta"] = meta
    return block
