"""pydantic_core's JSON codec and errors, as every mcpkit module imports them.

The same functions and classes as ``from pydantic_core import ...``: where
``mcpkit._speedups`` can, they come from pydantic_core's compiled module loaded without the
package's ``__init__`` (which imports ``core_schema``, ``fractions`` and ``decimal``, none of
which a server needs before its first call). Without the speed-up, from the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
else:
    try:
        from mcpkit._speedups import pydantic_core_extension
    except ImportError:  # pragma: no cover - the speed-up is optional by design
        _core = None
    else:
        _core = pydantic_core_extension()
    if _core is None:
        import pydantic_core as _core

    PydanticSerializationError = _core.PydanticSerializationError
    ValidationError = _core.ValidationError
    from_json = _core.from_json
    to_json = _core.to_json
    to_jsonable_python = _core.to_jsonable_python
