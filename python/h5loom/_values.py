"""numpy-style indexing as h5loom selections, and Python values as checked
numpy arrays (no write may silently lose values)."""

from __future__ import annotations

import reprlib
from typing import Any, Tuple

import numpy as np

from ._core import Selection
from ._dtypes import _SUPPORTED_KINDS, Reference, ref_dtype, string_dtype
from ._errors import DatatypeError, SelectionError


def _selection_for(key: Any, shape: Tuple[int, ...], path: str) -> Tuple[Selection, Tuple[int, ...]]:
    """numpy-style basic indexing -> (hyperslab selection, shape of the result)."""
    if isinstance(key, Selection):
        return key, tuple(key.selected_shape(list(shape)))
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise SelectionError(f"an index can only have one ellipsis (dataset '{path}')")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (len(shape) - len(key) + 1) + key[i + 1:]
    if len(key) > len(shape):
        raise SelectionError(f"too many indices for dataset '{path}': {len(key)} given, "
                             f"it has {len(shape)} dimensions")
    key = key + (slice(None),) * (len(shape) - len(key))
    start, count, stride, out_shape = [], [], [], []
    for d, (k, n) in enumerate(zip(key, shape)):
        if isinstance(k, slice):
            b, e, s = k.indices(n)
            if s <= 0:
                raise SelectionError(f"slice step {s} in dimension {d} of dataset '{path}': "
                                     "only positive steps are supported")
            c = len(range(b, e, s))
            start.append(b if c else 0)
            count.append(c)
            stride.append(s)
            out_shape.append(c)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            i = int(k)
            if not -n <= i < n:
                raise SelectionError(f"index {i} is out of bounds for dimension {d} of dataset '{path}' "
                                     f"with size {n}")
            start.append(i % n)
            count.append(1)
            stride.append(1)
        else:
            raise SelectionError(f"unsupported index {k!r} in dimension {d} of dataset '{path}': use integers, "
                                 "slices with positive steps, '...' or an h5loom.Selection")
    return Selection.hyperslab(start, count, stride), tuple(out_shape)


def _checked_values(data: Any, dt: np.dtype, path: str) -> np.ndarray:
    """Scalars, lists and numpy scalars as an array of ``dt``, under the rule
    numpy arrays follow (Dataset._prepare): no write may silently lose values.

    numpy scalars carry a dtype: numpy's "safe" casts, as for arrays. Python
    numbers have none, so they follow numpy's rule for them (NEP 50): an int
    fits any type whose range holds its value; a float goes into a float type
    (unless it overflows to inf), never into an integer type, where it would
    be truncated (1.7 -> 1) or wrap (3e9 -> -2147483648 in int32)."""
    def lost(why: str) -> DatatypeError:
        return DatatypeError(f"cannot write {reprlib.repr(data)} to dataset '{path}' of type {dt} "
                             f"without losing values: {why}")
    try:
        natural = np.asarray(data)
    except (TypeError, ValueError) as e:
        raise DatatypeError(f"cannot write {type(data).__name__} to dataset '{path}' of type {dt}: {e}") from None
    kind = natural.dtype.kind
    if isinstance(data, np.generic):
        if kind not in _SUPPORTED_KINDS or not np.can_cast(natural.dtype, dt, casting="safe"):
            raise lost(f"{natural.dtype} does not convert safely to {dt}")
    elif kind == "O":  # Python ints beyond 64 bits, or a mix numpy could not type
        flat = natural.ravel()
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in flat):
            raise lost("the values are not all numbers of one kind")
        if dt.kind in "iu":
            info = np.iinfo(dt)
            if any(not info.min <= int(v) <= info.max for v in flat):
                raise lost(f"outside the range of {dt}, [{info.min}, {info.max}]")
        elif dt.kind == "f" and any(abs(int(v)) > np.finfo(dt).max for v in flat):
            raise lost(f"too large for {dt}")
    elif kind in "iu":
        if dt.kind in "iu" and natural.size:
            info = np.iinfo(dt)
            lo, hi = int(natural.min()), int(natural.max())
            if lo < info.min or hi > info.max:
                raise lost(f"outside the range of {dt}, [{info.min}, {info.max}]")
    elif kind == "f":
        if dt.kind in "iu":
            raise lost(f"a float does not convert to the integer type {dt} (it would be truncated or wrap); "
                       "round it and pass an integer")
        with np.errstate(over="ignore"):
            converted = natural.astype(dt)
        if np.any(np.isinf(converted) & np.isfinite(natural)):
            raise lost(f"too large for {dt}")
        return converted
    else:
        raise DatatypeError(f"cannot write {reprlib.repr(data)} ({natural.dtype}) to dataset '{path}' of type {dt}: "
                            "only numbers can be written")
    return np.asarray(natural, dtype=dt)



def _as_data_array(data: Any, dtype: Any) -> np.ndarray:
    """``create_dataset``'s data as an array; without a dtype, an object array of
    only str becomes variable-length strings, of only References references."""
    if isinstance(data, Reference):
        data = np.array(data, dtype=object)
    arr = np.asarray(data)
    if dtype is None and arr.dtype.kind == "O" and arr.dtype.fields is None and arr.size:
        items = arr.ravel().tolist()
        if all(isinstance(v, str) for v in items):
            return _with_dtype(arr, string_dtype())
        if all(isinstance(v, Reference) for v in items):
            return _with_dtype(arr, ref_dtype)
    return arr


def _with_dtype(arr: np.ndarray, dt: np.dtype) -> np.ndarray:
    """An object array of the same values whose dtype carries ``dt``'s metadata."""
    out = np.empty(arr.shape, dtype=dt)
    out[...] = arr
    return out
