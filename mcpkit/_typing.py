"""The typing introspection mcpkit needs, without importing ``typing_extensions`` for it.

``typing_extensions`` costs a few ms of every start-up. On Python 3.11+ the names below are the
standard library's own objects (``typing_extensions`` re-exports them: the same objects, so
the same answers); on 3.10 they come from ``typing_extensions``, as before. ``is_typeddict``
also knows ``typing_extensions.TypedDict`` classes, which can only exist once their module has
been imported: it looks in ``sys.modules`` first, as :mod:`mcpkit._pydantic_loaded` does for
pydantic, and reads the function with ``getattr``: another thread (the warm-up's compile thread)
may be importing it at that moment, and a module half run has no ``is_typeddict`` yet (and no
class made by its ``TypedDict`` exists yet, so the answer is ``False``). ``get_type_hints`` is
``typing_extensions``' only with ``include_extras=True`` on 3.11+, the one way mcpkit calls it.
"""

from __future__ import annotations

import sys
import typing
from typing import Any

if sys.version_info >= (3, 11):
    from typing import (
        Annotated,
        Literal,
        NotRequired,
        Optional,
        Required,
        dataclass_transform,
        get_args,
        get_origin,
        get_type_hints,
    )
else:  # pragma: no cover - Python 3.10
    from typing import Annotated, Literal, Optional, get_args, get_origin

    from typing_extensions import (
        NotRequired,
        Required,
        dataclass_transform,
        get_type_hints,
    )

__all__ = [
    "Annotated",
    "Literal",
    "NotRequired",
    "Optional",
    "Required",
    "dataclass_transform",
    "get_args",
    "get_origin",
    "get_type_hints",
    "is_typeddict",
]


def is_typeddict(tp: Any) -> bool:
    """``typing_extensions.is_typeddict``: a ``typing`` or ``typing_extensions`` TypedDict."""
    if typing.is_typeddict(tp):
        return True
    check = getattr(sys.modules.get("typing_extensions"), "is_typeddict", None)
    return check is not None and bool(check(tp))
