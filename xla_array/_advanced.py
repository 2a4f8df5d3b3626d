"""Array keys in indexing: integer arrays and boolean masks (being written)."""

from typing import Any

__all__: list[str] = []


def getitem_advanced(x: Any, key: Any) -> Any:
    raise IndexError("integer-array and boolean-mask indexing is not available yet")


def setitem_advanced(x: Any, key: Any, value: Any) -> Any:
    raise IndexError("integer-array and boolean-mask indexing is not available yet")
