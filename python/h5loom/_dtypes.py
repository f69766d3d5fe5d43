"""numpy dtypes and h5loom datatypes: numbers, structured dtypes (compounds),
fixed-length and variable-length strings, enums and object references,
converted both ways through the datatype names of the C++ core
(``compound[16]{x: float64 @0, ...}``, ``utf8``, ``reference``).

Variable-length strings and references are numpy object dtypes marked with
metadata, as in h5py: ``string_dtype()`` is ``dtype('O')`` with
``{"vlen": str, "encoding": "utf-8"}``, ``ref_dtype`` is ``dtype('O')`` with
``{"ref": Reference}``. Their elements are Python objects, so they travel to
and from the core converted: strings as bytes, references as their 8-byte
tokens (the "raw" dtype, where each reference is a ``<u8``)."""
from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any, Optional, Tuple, Union

import numpy as np

from . import _core
from ._errors import DatatypeError, SelectionError

_SUPPORTED_KINDS = {"i", "u", "f"}
_U64_MAX = 2**64 - 1


class Reference:
    """A reference to a group or dataset of one file: ``obj.ref`` makes one,
    ``f[ref]`` opens the object, ``f.dereference(ref)`` gives its path.

    An immutable value (a token the engine chose): hashable, equal to the
    references to the same object, false when null (``Reference()``). Only the
    file that made it resolves it. Store it in datasets and attributes of
    ``h5loom.ref_dtype`` (or in a field of a structured dtype)."""

    __slots__ = ("_token",)

    def __init__(self, token: int = 0) -> None:
        if isinstance(token, Reference):
            token = token.token
        if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= int(token) <= _U64_MAX:
            raise DatatypeError(f"Reference({token!r}): a reference token is an integer in [0, 2**64)")
        object.__setattr__(self, "_token", int(token))

    @property
    def token(self) -> int:
        """The engine's token (0 for the null reference)."""
        return self._token

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("h5loom.Reference is immutable")

    def __bool__(self) -> bool:
        return self._token != 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reference) and other._token == self._token

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(("h5loom.Reference", self._token))

    def __reduce__(self) -> Any:
        return (Reference, (self._token,))

    def __repr__(self) -> str:
        return f"<h5loom.Reference {self._token}>" if self._token else "<h5loom.Reference (null)>"


Reference.__module__ = "h5loom"  # its public name (repr, pickles)

# h5py's spelling: a numpy object dtype whose elements are Reference objects.
ref_dtype = np.dtype("O", metadata={"ref": Reference})


def _encoding_name(encoding: str) -> str:
    e = str(encoding).lower().replace("-", "").replace("_", "")
    if e not in ("utf8", "ascii"):
        raise DatatypeError(f"string_dtype: encoding {encoding!r} is not 'utf-8' or 'ascii'")
    return "utf-8" if e == "utf8" else "ascii"


def string_dtype(encoding: Union[str, int] = "utf-8", length: Union[None, int, str] = None) -> np.dtype:
    """A string dtype, as h5py's ``string_dtype``: ``length=None`` for
    variable-length strings (a numpy object dtype marked
    ``{"vlen": str, "encoding": ...}``; they read back as ``str`` objects),
    ``length=N`` for fixed-length strings of N bytes, NUL-padded (numpy bytes
    ``S<N>`` marked with the encoding). ``encoding``: "utf-8" or "ascii".

    ``string_dtype(16)`` (a length first, this package's older order) is
    ``string_dtype(length=16)``."""
    if isinstance(encoding, (int, np.integer)) and not isinstance(encoding, bool):
        encoding, length = (length if isinstance(length, str) else "utf-8"), encoding
    enc = _encoding_name(encoding)  # type: ignore[arg-type]
    if length is None:
        return np.dtype("O", metadata={"vlen": str, "encoding": enc})
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or int(length) < 1:
        raise DatatypeError(f"string_dtype: length {length!r} is not a positive integer (None: variable length)")
    return np.dtype(f"S{int(length)}", metadata={"encoding": enc})


def _is_vlen(dt: np.dtype) -> bool:
    """A dtype of variable-length strings (ours, or h5py's ``{"vlen": str|bytes}``)."""
    return (dt.kind == "O" and dt.fields is None and bool(dt.metadata) and
            dt.metadata.get("vlen") in (str, bytes))  # type: ignore


def _is_sequence(dt: np.dtype) -> bool:
    """A dtype of variable-length sequences (h5py's ``vlen_dtype(base)``: ``{"vlen": base dtype}``)."""
    return (dt.kind == "O" and dt.fields is None and bool(dt.metadata) and "vlen" in dt.metadata and
            dt.metadata["vlen"] not in (str, bytes))  # type: ignore


def _has_parts(dt: np.dtype) -> bool:
    """Variable-length parts in an element: sequences, or strings inside records."""
    if dt.subdtype is not None:
        return _has_parts(dt.subdtype[0])
    if dt.fields is not None:
        return any(_is_vlen(f[0]) or _has_parts(f[0]) for f in dt.fields.values())
    return _is_sequence(dt)


def vlen_dtype(base: Any) -> np.dtype:
    """A dtype of variable-length sequences of ``base``, as h5py's
    ``vlen_dtype``: a numpy object dtype whose elements are 1-D arrays of
    ``base`` (ragged arrays; HDF5's variable-length type)."""
    return np.dtype("O", metadata={"vlen": np.dtype(base)})


def _vlen_encoding(dt: np.dtype) -> str:
    md = dt.metadata or {}
    if "encoding" in md:
        return _encoding_name(md["encoding"])
    return "ascii" if md.get("vlen") is bytes else "utf-8"  # h5py: vlen=bytes is ASCII


def _is_ref(dt: np.dtype) -> bool:
    return dt.kind == "O" and dt.fields is None and bool(dt.metadata) and "ref" in dt.metadata  # type: ignore


def _has_refs(dt: np.dtype) -> bool:
    """References anywhere in an element (the dtype itself or a field, nested)."""
    if dt.fields is None:
        return _is_ref(dt)
    return any(_has_refs(field[0]) for field in dt.fields.values())


def _raw_dtype(dt: np.dtype) -> np.dtype:
    """The dtype of the bytes the core moves: each reference a ``<u8`` token."""
    if _is_ref(dt):
        return np.dtype("<u8")
    if dt.fields is None or not _has_refs(dt):
        return dt
    names = list(dt.names)
    return np.dtype({"names": names, "formats": [_raw_dtype(dt.fields[n][0]) for n in names],
                     "offsets": [dt.fields[n][1] for n in names], "itemsize": dt.itemsize})


def _token_of(value: Any, path: str) -> int:
    if isinstance(value, Reference):
        return value.token
    if value is None:
        return 0
    raise DatatypeError(f"cannot write {reprlib.repr(value)} as a reference in '{path}': "
                        "references are h5loom.Reference objects (obj.ref), or None for a null one")


def _refs_to_raw(arr: np.ndarray, dt: np.dtype, path: str) -> np.ndarray:
    """An array of ``dt`` (references as Reference objects) as its raw dtype (tokens)."""
    raw = np.empty(arr.shape, dtype=_raw_dtype(dt))
    _copy_to_raw(raw, arr, dt, path)
    return raw


def _copy_to_raw(raw: np.ndarray, arr: np.ndarray, dt: np.dtype, path: str) -> None:
    if _is_ref(dt):
        raw[...] = np.array([_token_of(v, path) for v in arr.ravel().tolist()], dtype="<u8").reshape(arr.shape)
    elif dt.fields is not None and _has_refs(dt):
        for name in dt.names:
            _copy_to_raw(raw[name], arr[name], dt.fields[name][0], path)
    else:
        raw[...] = arr


def _refs_from_raw(raw: np.ndarray, dt: np.dtype, out: Optional[np.ndarray] = None) -> np.ndarray:
    """Raw elements (tokens) as an array of ``dt`` with Reference objects (into ``out`` if given)."""
    if out is None:
        out = np.empty(raw.shape, dtype=dt)
    _copy_from_raw(out, raw, dt)
    return out


def _copy_from_raw(out: np.ndarray, raw: np.ndarray, dt: np.dtype) -> None:
    if _is_ref(dt):
        refs = np.empty(raw.size, dtype=object)
        refs[:] = [Reference(t) for t in raw.ravel().tolist()]
        out[...] = refs.reshape(raw.shape)
    elif dt.fields is not None and _has_refs(dt):
        for name in dt.names:
            _copy_from_raw(out[name], raw[name], dt.fields[name][0])
    else:
        out[...] = raw


def _strings_for(data: Any, dt: np.dtype, path: str) -> np.ndarray:
    """Data for a dataset of variable-length strings: an object array of bytes,
    each value a ``str`` (encoded) or ``bytes`` (as they are) that is valid
    text of the dataset's encoding. Anything else (numbers, None) is refused."""
    enc = _vlen_encoding(dt)
    if isinstance(data, np.ndarray):
        if data.dtype.kind not in "USO":
            raise DatatypeError(f"cannot write {data.dtype} data to dataset '{path}' of variable-length strings")
        arr = data.astype(object)
    else:
        try:
            arr = np.asarray(data, dtype=object)
        except (TypeError, ValueError) as e:
            raise DatatypeError(f"cannot write {reprlib.repr(data)} to dataset '{path}' of variable-length "
                                f"strings: {e}") from None
    out = np.empty(arr.shape, dtype=object)
    flat = out.reshape(-1)
    for i, v in enumerate(arr.ravel().tolist()):
        try:
            if isinstance(v, str):
                flat[i] = v.encode(enc)
            elif isinstance(v, bytes):
                v.decode(enc)  # must be text of the dataset's encoding
                flat[i] = v
            else:
                raise DatatypeError(f"{reprlib.repr(v)} is not a str or bytes")
        except UnicodeError as e:
            raise DatatypeError(f"cannot write {reprlib.repr(v)} to dataset '{path}' of variable-length {enc} "
                                f"strings: {e}") from None
        except DatatypeError as e:
            raise DatatypeError(f"cannot write {reprlib.repr(data)} to dataset '{path}' of variable-length "
                                f"strings: {e}") from None
    return out


def enum_dtype(values: Mapping[str, int], basetype: Any = "i1") -> np.dtype:
    """An enum dtype: integers of ``basetype`` with names (``{"red": 0, "green": 1}``),
    as h5py's ``enum_dtype``; datasets of it read back with the names in
    ``dtype.metadata["enum"]``."""
    return np.dtype(basetype, metadata={"enum": dict(values)})


class Empty:
    """A value with a dtype and no elements, not even a shape: HDF5's null
    dataspace, as h5py's ``Empty``. ``obj.attrs["flag"] = Empty("f4")`` makes
    such an attribute, ``g["e"] = Empty("f8")`` (or ``create_dataset(data=...)``)
    such a dataset; reading one gives an ``Empty`` back (``ds[()]``)."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: Any) -> None:
        self.dtype = np.dtype(dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Empty) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("Empty", self.dtype))

    def __repr__(self) -> str:
        return f"Empty(dtype={self.dtype!r})"


def _quoted(name: str) -> str:
    """A member or enum name in an h5loom datatype name (quoted if it needs to be)."""
    if name and not any(c in name for c in ':,{}[]<>@"\\') and name[0] != " " and name[-1] != " ":
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_plain_numeric(dt: np.dtype) -> bool:
    return dt.kind in _SUPPORTED_KINDS and dt.fields is None and not (dt.metadata and "enum" in dt.metadata)


def _type_name(dt: np.dtype, what: str) -> str:
    """The h5loom datatype name of a numpy dtype (numbers, structured, S<n>,
    variable-length strings, references, enums, sub-arrays)."""
    if dt.subdtype is not None:  # ('f8', (3,)): HDF5's array datatype
        base, dims = dt.subdtype
        if _is_vlen(base) or base.kind == "U":
            raise DatatypeError(f"{what}: an array of variable-length strings ({dt}) is not supported; "
                                "use fixed-length strings (string_dtype(length=N) or 'S<N>')")
        return f"array<{_type_name(base, what)}>[{', '.join(str(d) for d in dims)}]"
    if dt.fields is not None:
        if _has_parts(dt):
            return _record_with_parts_name(dt, what)
        members = []
        for name, field in dt.fields.items():
            sub, offset = field[0], field[1]
            if sub.kind == "U" or (sub.subdtype is not None and sub.base.kind == "U"):
                raise DatatypeError(f"{what}: field '{name}' is numpy text ({sub}), which has no HDF5 layout; "
                                    "use fixed-length strings (string_dtype(length=N) or 'S<N>') or "
                                    "variable-length ones (string_dtype())")
            members.append(f"{_quoted(name)}: {_type_name(sub, what)} @{offset}")
        return f"compound[{dt.itemsize}]{{{', '.join(members)}}}"
    if _is_sequence(dt):
        return f"vlen<{_type_name(np.dtype(dt.metadata['vlen']), what)}>"  # type: ignore
    if _is_vlen(dt):
        return "utf8" if _vlen_encoding(dt) == "utf-8" else "string"
    if _is_ref(dt):
        return "reference"
    if dt.kind == "U":  # numpy's text (fixed width in UTF-32): variable-length UTF-8 strings
        return "utf8"
    if dt.kind == "O":
        raise DatatypeError(f"{what}: object dtype without h5loom's metadata; use h5loom.string_dtype() "
                            "(variable-length strings) or h5loom.ref_dtype (references)")
    if dt.kind == "S":
        utf8 = (dt.metadata or {}).get("encoding", "ascii").replace("-", "") == "utf8"
        return f"{'utf8' if utf8 else 'string'}[{dt.itemsize}]"
    if dt.kind == "V":  # raw bytes: HDF5's opaque type, its tag from the metadata (h5py's 'V<n>' is untagged)
        tag = (dt.metadata or {}).get("opaque_tag", "")
        return f"opaque[{dt.itemsize}]" + (f"{{{_quoted(tag)}}}" if tag else "")
    if dt.kind in "Mm":  # datetime64, timedelta64: opaque with h5py's tag, which h5py reads back as this dtype
        return f"opaque[{dt.itemsize}]{{{_quoted('NUMPY:' + dt.newbyteorder('<').str)}}}"
    if dt.kind in _SUPPORTED_KINDS and dt.metadata and "enum" in dt.metadata:
        base = _type_name(np.dtype(dt.str), what)
        names = ", ".join(f"{_quoted(str(k))}: {int(v)}" for k, v in dt.metadata["enum"].items())
        return f"enum<{base}>{{{names}}}"
    if dt.kind not in _SUPPORTED_KINDS or dt.itemsize not in ((1, 2, 4, 8) if dt.kind != "f" else (2, 4, 8)):
        raise DatatypeError(f"{what}: dtype {dt} is not supported (int8..int64, uint8..uint64, float16..float64, "
                            "structured dtypes, S<n> strings, string_dtype(), ref_dtype, enum_dtype)")
    # '>f8': stored big-endian (the numbers in memory are the host's order all the same)
    big = "be" if dt.byteorder == ">" else ""
    return f"{'int' if dt.kind == 'i' else 'uint' if dt.kind == 'u' else 'float'}{dt.itemsize * 8}{big}"


def _dtype_name(dtype: Any, what: str) -> str:
    """h5loom datatype name of a numpy dtype-like (``str``: variable-length UTF-8 strings)."""
    if dtype is str:
        return "utf8"
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise DatatypeError(f"{what}: {dtype!r} is not a dtype ({e})") from None
    return _type_name(dt, what)


def _record_with_parts_name(dt: np.dtype, what: str) -> str:
    """A record with variable-length parts gets HDF5's C layout (a string a
    ``char*``, a sequence an ``hvl_t`` of 16 bytes), whatever numpy's offsets
    are: its values travel packed, field by field."""
    members, at, align = [], 0, 1
    for name, field in dt.fields.items():  # type: ignore
        sub = field[0]
        if sub.kind == "U":
            raise DatatypeError(f"{what}: field '{name}' is numpy text ({sub}); use string_dtype()")
        sub_name = _type_name(sub, what)
        size, a = _c_layout(sub_name)
        at = (at + a - 1) // a * a
        members.append(f"{_quoted(name)}: {sub_name} @{at}")
        at += size
        align = max(align, a)
    return f"compound[{(at + align - 1) // align * align}]{{{', '.join(members)}}}"


def _c_layout(name: str) -> Tuple[int, int]:
    """(size, alignment) of an h5loom type as a C struct member."""
    if name in ("string", "utf8"):
        return 8, 8  # a char*
    size = _core.datatype_size(name)
    if name.startswith(("string[", "utf8[", "opaque")):
        return size, 1  # bytes
    return size, size if size in (1, 2, 4, 8) else 8  # numbers, enums, references; hvl_t, records, arrays: 8


def _dtype_from_tree(tree: Tuple[Any, ...]) -> np.dtype:
    kind = tree[0]
    if kind == "scalar":
        return np.dtype(tree[1])
    if kind == "string":
        return np.dtype(f"S{tree[1]}", metadata={"encoding": "utf-8" if tree[2] == "utf8" else "ascii"})
    if kind == "vlen":
        return string_dtype("utf-8" if tree[1] == "utf8" else "ascii")
    if kind == "reference":
        return ref_dtype
    if kind == "enum":
        return np.dtype(tree[1], metadata={"enum": {name: value for name, value in tree[2]}})
    if kind == "array":
        return np.dtype((_dtype_from_tree(tree[2]), tuple(tree[1])))
    if kind == "opaque":
        return _opaque_dtype(tree[1], tree[2].decode("utf-8", "replace"))
    if kind == "sequence":  # h5py's vlen_dtype(base): each element a 1-D array of base
        return vlen_dtype(_dtype_from_tree(tree[1]))
    names, offsets, formats = zip(*[(name, offset, _dtype_from_tree(sub)) for name, offset, sub in tree[2]])
    return np.dtype({"names": list(names), "formats": list(formats), "offsets": list(offsets),
                     "itemsize": tree[1]})


def _opaque_dtype(size: int, tag: str) -> np.dtype:
    """The numpy dtype of HDF5's opaque type: h5py's tag "NUMPY:<dtype>" names
    a numpy dtype of that size (datetime64, timedelta64); any other is raw
    bytes, 'V<size>', with the tag kept in the metadata (``opaque_tag``)."""
    if tag.startswith("NUMPY:"):
        try:
            named = np.dtype(tag[6:])
        except TypeError:
            named = None
        if named is not None and named.itemsize == size and named.kind in "Mm":
            return named
    return opaque_dtype(size, tag)


def opaque_dtype(size: int, tag: str = "") -> np.dtype:
    """Raw bytes of ``size`` per element with a ``tag`` saying what they are:
    HDF5's opaque datatype (numpy's ``'V<size>'``, the tag in its metadata)."""
    return np.dtype(f"V{size}", metadata={"opaque_tag": tag}) if tag else np.dtype(f"V{size}")


def _np_dtype(name: str) -> np.dtype:
    """The numpy dtype of an h5loom datatype name."""
    if name.isalnum() and name not in ("utf8", "string", "reference") and not name.endswith("be"):
        return np.dtype(name)  # scalar names are numpy names (big-endian ones read in the host's order)
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


def _array_elements(data: Any, dt: np.dtype, target: Tuple[int, ...], path: str) -> Tuple[np.ndarray, bool]:
    """Data for a dataset of HDF5 array elements (dtype ``('f8', (3,))``): numpy
    keeps the array as trailing dimensions, so the data is of the base dtype
    and of shape ``target + (3,)`` (or broadcasts to it). Returns it C-contiguous,
    and whether it is a new array."""
    base, sub = dt.subdtype
    arr = np.asarray(data)
    if arr.dtype != base and not (arr.dtype.kind in _SUPPORTED_KINDS and base.kind in _SUPPORTED_KINDS and
                                  np.can_cast(arr.dtype, base, casting="safe")):
        raise DatatypeError(f"cannot write {arr.dtype} data to dataset '{path}' of type {_type_name(dt, path)} "
                            "without losing values; convert it first")
    want = tuple(target) + tuple(sub)
    try:
        # (a broadcast view is read-only: materialised)
        out = (np.ascontiguousarray(arr, dtype=base) if arr.shape == want else
               np.array(np.broadcast_to(arr, want), dtype=base, order="C"))
    except ValueError:
        raise SelectionError(f"cannot write data of shape {arr.shape} to a selection of shape {tuple(target)} "
                             f"of dataset '{path}' (elements of shape {tuple(sub)})") from None
    return out, not np.shares_memory(out, arr)


def _records(data: Any, dt: np.dtype, path: str) -> np.ndarray:
    """Data for a compound, string, enum or reference dataset: an array of
    exactly its dtype (a structured array with the same fields and offsets,
    bytes of the same length, integers of the enum's base, Reference objects),
    or values numpy turns into one. Variable-length strings: an object array
    of bytes (``_strings_for``)."""
    if _is_vlen(dt):
        return _strings_for(data, dt, path)
    if _is_ref(dt):
        arr = data if isinstance(data, np.ndarray) and data.dtype.kind == "O" else None
        if arr is None:
            try:
                arr = np.empty(np.shape(data) if isinstance(data, (list, tuple, np.ndarray)) else (), dtype=object)
                arr[...] = data
            except (TypeError, ValueError) as e:
                raise DatatypeError(f"cannot write {reprlib.repr(data)} to dataset '{path}' of references: "
                                    f"{e}") from None
        for v in arr.ravel().tolist():
            _token_of(v, path)
        return arr
    if isinstance(data, np.ndarray):
        same = data.dtype == dt and (dt.fields is None or data.dtype.fields == dt.fields)
        if same or (dt.fields is None and data.dtype.kind == dt.kind and dt.kind != "V" and  # opaque: same size only
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
