"""numpy dtypes and h5loom datatypes: numbers, structured dtypes (compounds),
fixed-length strings and enums, converted both ways through the datatype names
of the C++ core (``compound[16]{x: float64 @0, ...}``)."""
from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any, Tuple

import numpy as np

from . import _core
from ._errors import DatatypeError

_SUPPORTED_KINDS = {"i", "u", "f"}


def string_dtype(length: int, encoding: str = "utf-8") -> np.dtype:
    """A fixed-length string dtype of ``length`` bytes (NUL-padded) in ``encoding``
    ("utf-8" or "ascii"): numpy bytes ``S<length>`` marked with the encoding."""
    if encoding.lower().replace("-", "") not in ("utf8", "ascii"):
        raise DatatypeError(f"string_dtype: encoding {encoding!r} is not 'utf-8' or 'ascii'")
    return np.dtype(f"S{int(length)}", metadata={"encoding": encoding.lower()})


def enum_dtype(values: Mapping[str, int], basetype: Any = "i1") -> np.dtype:
    """An enum dtype: integers of ``basetype`` with names (``{"red": 0, "green": 1}``),
    as h5py's ``enum_dtype``; datasets of it read back with the names in
    ``dtype.metadata["enum"]``."""
    return np.dtype(basetype, metadata={"enum": dict(values)})


def _quoted(name: str) -> str:
    """A member or enum name in an h5loom datatype name (quoted if it needs to be)."""
    if name and not any(c in name for c in ':,{}[]<>@"\\') and name[0] != " " and name[-1] != " ":
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_plain_numeric(dt: np.dtype) -> bool:
    return dt.kind in _SUPPORTED_KINDS and dt.fields is None and not (dt.metadata and "enum" in dt.metadata)


def _type_name(dt: np.dtype, what: str) -> str:
    """The h5loom datatype name of a numpy dtype (numbers, structured, S<n>, enums)."""
    if dt.byteorder == ">":
        raise DatatypeError(f"{what}: big-endian dtype {dt} is not supported; use {dt.newbyteorder('<')}")
    if dt.fields is not None:
        members = []
        for name, field in dt.fields.items():
            sub, offset = field[0], field[1]
            if sub.subdtype is not None:
                raise DatatypeError(f"{what}: field '{name}' is an array ({sub}); h5loom compounds hold scalars, "
                                    "strings, enums and compounds")
            members.append(f"{_quoted(name)}: {_type_name(sub, what)} @{offset}")
        return f"compound[{dt.itemsize}]{{{', '.join(members)}}}"
    if dt.kind == "S":
        utf8 = (dt.metadata or {}).get("encoding", "ascii").replace("-", "") == "utf8"
        return f"{'utf8' if utf8 else 'string'}[{dt.itemsize}]"
    if dt.kind in _SUPPORTED_KINDS and dt.metadata and "enum" in dt.metadata:
        base = _type_name(np.dtype(dt.str), what)
        names = ", ".join(f"{_quoted(str(k))}: {int(v)}" for k, v in dt.metadata["enum"].items())
        return f"enum<{base}>{{{names}}}"
    if dt.kind not in _SUPPORTED_KINDS or dt.itemsize not in ((1, 2, 4, 8) if dt.kind != "f" else (4, 8)):
        raise DatatypeError(f"{what}: dtype {dt} is not supported (int8..int64, uint8..uint64, float32, float64, "
                            "structured dtypes, S<n> strings, enum_dtype)")
    return f"{'int' if dt.kind == 'i' else 'uint' if dt.kind == 'u' else 'float'}{dt.itemsize * 8}"


def _dtype_name(dtype: Any, what: str) -> str:
    """h5loom datatype name of a numpy dtype-like."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise DatatypeError(f"{what}: {dtype!r} is not a dtype ({e})") from None
    return _type_name(dt, what)


def _dtype_from_tree(tree: Tuple[Any, ...]) -> np.dtype:
    kind = tree[0]
    if kind == "scalar":
        return np.dtype(tree[1])
    if kind == "string":
        return np.dtype(f"S{tree[1]}", metadata={"encoding": "utf-8" if tree[2] == "utf8" else "ascii"})
    if kind == "enum":
        return np.dtype(tree[1], metadata={"enum": {name: value for name, value in tree[2]}})
    names, offsets, formats = zip(*[(name, offset, _dtype_from_tree(sub)) for name, offset, sub in tree[2]])
    return np.dtype({"names": list(names), "formats": list(formats), "offsets": list(offsets),
                     "itemsize": tree[1]})


def _np_dtype(name: str) -> np.dtype:
    """The numpy dtype of an h5loom datatype name."""
    if name.isalnum():
        return np.dtype(name)  # scalar names are numpy names
    return _dtype_from_tree(_core.type_tree(name))


def _plain(value: Any) -> Any:
    """Python values to compare before and after a conversion: sequences as
    tuples, text as UTF-8 bytes (as stored), numpy scalars as Python ones."""
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bytes):
        return value.rstrip(b"\0")  # fixed strings read back without their padding
    return value


def _same(stored: Any, given: Any) -> bool:
    """Whether a converted value is the value given: exact for integers and
    text, to float32's precision for fractions (0.1 in a float32 field is 0.1)."""
    if isinstance(stored, tuple) or isinstance(given, tuple):
        return (isinstance(stored, tuple) and isinstance(given, tuple) and len(stored) == len(given)
                and all(_same(a, b) for a, b in zip(stored, given)))
    if isinstance(stored, float) or isinstance(given, float):
        try:
            a, b = float(stored), float(given)
        except (TypeError, ValueError):
            return False
        return a == b or abs(a - b) <= 1e-6 * max(abs(a), abs(b))
    return stored == given


def _records(data: Any, dt: np.dtype, path: str) -> np.ndarray:
    """Data for a compound, string or enum dataset: an array of exactly its dtype
    (a structured array with the same fields and offsets, bytes of the same
    length, integers of the enum's base), or values numpy turns into one."""
    if isinstance(data, np.ndarray):
        same = data.dtype == dt and (dt.fields is None or data.dtype.fields == dt.fields)
        if same or (dt.fields is None and data.dtype.kind == dt.kind and
                    (dt.kind != "S" or data.dtype.itemsize <= dt.itemsize) and
                    np.can_cast(data.dtype, dt, casting="safe")):
            return data if same else data.astype(dt)
        raise DatatypeError(f"cannot write {data.dtype} data to dataset '{path}' of type {_type_name(dt, path)}; "
                            "convert it first")
    try:
        if dt.kind == "S":  # never cut a string short: check the lengths first
            natural = np.asarray(data)
            if natural.dtype.kind == "U":
                natural = np.char.encode(natural, "utf-8")
            if natural.dtype.kind != "S" or natural.dtype.itemsize > dt.itemsize:
                raise ValueError(f"{natural.dtype} values do not fit {dt.itemsize}-byte strings")
            return natural.astype(dt)
        arr = np.asarray(data, dtype=dt)
        # numpy converts records, enums and fills field by field and silently
        # (a long string is cut, 1.5 becomes 1, -1 wraps): refuse any change.
        if not _same(_plain(arr.tolist()), _plain(data)):
            raise ValueError("some values change when converted (a string too long, a fraction or an "
                             "integer out of range)")
        return arr
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError) as e:
        raise DatatypeError(f"cannot write {reprlib.repr(data)} to dataset '{path}' of type "
                            f"{_type_name(dt, path)}: {e}") from None
