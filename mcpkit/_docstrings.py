"""Docstrings -> a description and per-parameter text (Google, NumPy and reST styles)."""

from __future__ import annotations

import inspect
import re

from mcpkit._frozen import frozen

__all__ = ["Docstring", "parse_docstring"]

# A docstring without any of these has no parameter section: skip the (slower) full parser.
_SECTION_HINT = (
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Returns|Raises|Yields|Examples?)\s*:?\s*$"
    r"|^\s*:(param|parameter|arg|key|type|returns?|raises?)\b"
)
# ... and none without one of these words: most docstrings are told apart without the regular
# expression, which is compiled (and cached by ``re``) at the first that has one.
_SECTION_WORDS = ("Arg", "Param", "Returns", "Raises", "Yields", "Example", ":")


@frozen
class Docstring:
    """What a docstring says: prose for the description, text for each parameter."""

    description: str | None
    params: dict[str, str]


def parse_docstring(doc: str | None) -> Docstring:
    """Split a docstring into its prose and its parameter descriptions."""
    if not doc or not doc.strip():
        return Docstring(None, {})
    text = inspect.cleandoc(doc)
    if not any(word in text for word in _SECTION_WORDS) or not re.search(
        _SECTION_HINT, text, re.MULTILINE
    ):
        return Docstring(text, {})
    import docstring_parser

    parsed = docstring_parser.parse(text)
    prose = "\n\n".join(p for p in (parsed.short_description, parsed.long_description) if p)
    params = {
        p.arg_name: " ".join(p.description.split())
        for p in parsed.params
        if p.description and p.args[0] in {"param", "parameter", "arg", "argument", "key"}
    }
    return Docstring(description=prose or None, params=params)
