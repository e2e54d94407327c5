"""Hashable containers for static (compile-time) model metadata."""

from __future__ import annotations

import hashlib

import numpy as np


class StaticArray:
    """A read-only numpy array that hashes and compares by content.

    Static metadata (indices, masks, schedules) must be hashable so that it can live in a
    pytree's aux data; a bare ``numpy.ndarray`` is not. The hash is computed once.
    """

    __slots__ = ("_array", "_hash")

    def __init__(self, array) -> None:
        arr = np.array(array, copy=True)
        arr.setflags(write=False)
        self._array = arr
        digest = hashlib.blake2b(arr.tobytes(), digest_size=16).hexdigest()
        self._hash = hash((arr.shape, arr.dtype.str, digest))

    @property
    def array(self) -> np.ndarray:
        """The wrapped read-only array."""
        return self._array

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __getitem__(self, item):
        return self._array[item]

    def __len__(self) -> int:
        return len(self._array)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the wrapped array."""
        return self._array.shape

    def tolist(self):
        """The array as nested Python lists."""
        return self._array.tolist()

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if not isinstance(other, StaticArray):
            return NotImplemented
        return self._hash == other._hash and np.array_equal(self._array, other._array)

    def __repr__(self) -> str:
        return f"StaticArray(shape={self._array.shape}, dtype={self._array.dtype})"


class StaticRecord:
    """Mixin for frozen dataclasses of static metadata: hashed once, compared by content.

    Subclasses are ``@dataclasses.dataclass(frozen=True, eq=False)``; their fields must be
    hashable (ints, tuples, :class:`StaticArray`).
    """

    def _key(self) -> tuple:
        import dataclasses

        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))

    def __hash__(self) -> int:
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash(self._key())
            object.__setattr__(self, "_hash", h)
        return h

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return hash(self) == hash(other) and self._key() == other._key()

    def get(self, name: str):
        """Newton-named view of a field: numpy arrays for :class:`StaticArray` fields, lists for tuples (labels),
        other values (counts from properties) unchanged."""
        value = getattr(self, name)
        if isinstance(value, StaticArray):
            return np.asarray(value)
        return list(value) if isinstance(value, tuple) else value


def static_ints(values) -> StaticArray:
    """A flat ``int32`` :class:`StaticArray` of ``values`` (builder index lists → static record fields)."""
    return StaticArray(np.asarray(values, dtype=np.int32).reshape(-1))
