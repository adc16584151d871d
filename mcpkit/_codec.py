"""pydantic_core's JSON codec and errors, as every mcpkit module reaches them: ``_codec.to_json``.

The same functions and classes as ``from pydantic_core import ...``, loaded on the first
attribute read, not at import: a server answers ``initialize`` and a small ``tools/list`` with
the standard library's ``json`` (:mod:`mcpkit.protocol.plain`), and the
warm-up after the listing loads pydantic, and this with it. (The compiled module is 5 MB with
``datetime``: ~3 ms of every start-up on a slow VM.) Modules therefore import this module, not
its names, and read them at the call (``_codec.to_json(...)``, ``except _codec.ValidationError``).

Where ``mcpkit._speedups`` can, the names come from pydantic_core's compiled module loaded
without the package's ``__init__`` (which imports ``core_schema``, ``fractions`` and
``decimal``, none of which a server needs before its first call). Without the speed-up, from the
package.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

__all__ = [
    "PydanticSerializationError",
    "ValidationError",
    "from_json",
    "to_json",
    "to_jsonable_python",
]

if TYPE_CHECKING:
    from pydantic_core import (
        PydanticSerializationError,
        ValidationError,
        from_json,
        to_json,
        to_jsonable_python,
    )

try:
    from mcpkit import _speedups
except ImportError:  # pragma: no cover - deleted: the package is imported
    _speedups = None  # type: ignore[assignment]

_loading = threading.Lock()  # the warm-up's compile thread may read a name first


def __getattr__(name: str) -> Any:
    """The first read of one of the names loads them all (then they are module globals, and
    this function is gone)."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _loading:
        if name not in globals():
            _load()
    return globals()[name]


def _load() -> None:
    core = None if _speedups is None else _speedups.pydantic_core_extension()
    if core is None:
        import pydantic_core as core
    names = globals()
    for name in __all__:
        names[name] = getattr(core, name)
    # Python does not specialise attribute reads on a module with a ``__getattr__`` (3.11's
    # LOAD_ATTR_MODULE): with the names in place it has nothing left to do.
    names.pop("__getattr__", None)
