"""Frozen records that travel as plain JSON: ``to_dict`` / ``from_dict`` from the fields alone.

A stored document (a job's progress or result) is declared once, as a frozen dataclass that
inherits :class:`JsonRecord`; adding a field with a default is the whole change. ``from_dict``
reads documents written by older versions (missing keys take the field's default) and newer ones
(unknown keys are ignored), so a job stored before an upgrade still shows in the Jobs tab.

Values are converted by the field's annotation: ``Path``, nested records, ``tuple[Record, ...]``,
enums, ``int``/``float`` and ``X | None`` of those; anything else is passed through as JSON.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

__all__ = ["JsonRecord"]


class JsonRecord:
    """Mixin for frozen dataclasses whose instances are stored as JSON objects."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values, one key per field (paths as strings, nested records as objects)."""
        return {field.name: _dump(getattr(self, field.name)) for field in dataclasses.fields(self)}  # type: ignore[arg-type]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Self:
        """The record a document describes; missing keys take defaults, unknown keys are ignored.

        Raises:
            TypeError: a field without a default is missing from ``data``.
        """
        data = data or {}
        hints = _hints(cls)
        values = {
            field.name: _load(hints[field.name], data[field.name])
            for field in dataclasses.fields(cls)  # type: ignore[arg-type]
            if field.init and field.name in data
        }
        return cls(**values)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _dump(value: Any) -> Any:
    if isinstance(value, JsonRecord):
        return value.to_dict()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_dump(item) for item in value]
    if isinstance(value, Mapping):
        return {str(key): _dump(item) for key, item in value.items()}
    return value


def _load(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _load(options[0], value) if len(options) == 1 else value
    if origin is tuple:
        args = typing.get_args(hint)
        item_hint = args[0] if args else Any
        return tuple(_load(item_hint, item) for item in value)
    if not isinstance(hint, type):
        return value
    if issubclass(hint, JsonRecord):
        return hint.from_dict(value)
    if issubclass(hint, Path):
        return Path(value)
    if issubclass(hint, enum.Enum):
        return hint(value)
    if hint is float and isinstance(value, (int, float)):
        return float(value)
    return value
