"""A battery of parameter types for the schema-profile tests: ``(id, annotation, default)``."""

from __future__ import annotations

import datetime
import enum
import uuid
from typing import Annotated, Any, Literal

from pydantic import AnyUrl, BaseModel, Field

from mcpkit.schema import EMPTY


class Color(enum.Enum):
    """A colour."""

    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number")
    zip: Annotated[str, Field(pattern=r"^\d{5}$")]
    floor: int | None = None


class Node(BaseModel):
    name: str
    children: list[Node] = []


BATTERY: list[tuple[str, Any, Any]] = [
    ("str", str, EMPTY),
    ("bool-default", bool, False),
    ("int-bounds", Annotated[int, Field(ge=1, le=50)], 10),
    ("float-exclusive", Annotated[float, Field(gt=0, lt=1, multiple_of=0.25)], EMPTY),
    ("int-exclusive", Annotated[int, Field(gt=0, lt=10)], EMPTY),
    ("str-length", Annotated[str, Field(min_length=1, max_length=50, pattern=r"^[a-z]+$")], EMPTY),
    ("optional-none", str | None, None),
    ("optional-default", int | None, 3),
    ("literal", Literal["a", "b"], "a"),
    ("literal-int", Literal[5], EMPTY),
    ("enum", Color, Color.RED),
    ("int-enum", Level, EMPTY),
    ("model", Address, EMPTY),
    ("list-of-models", list[Address], EMPTY),
    ("list-bounds", Annotated[list[int], Field(min_length=1, max_length=3)], EMPTY),
    ("set", set[str], EMPTY),
    ("date-time", datetime.datetime, EMPTY),
    ("uuid", uuid.UUID, EMPTY),
    ("uri", AnyUrl, EMPTY),
    ("dict", dict[str, int], EMPTY),
    ("union", int | str, EMPTY),
    ("tuple", tuple[int, str], EMPTY),
    ("any", Any, EMPTY),
    ("recursive", Node, EMPTY),
]
