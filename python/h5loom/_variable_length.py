"""Elements with variable-length parts (h5py's ``vlen_dtype`` ragged arrays,
records with variable-length strings) between numpy objects and the core's
packed form (include/h5loom/variable_length.hpp): fixed-size leaves as their
bytes, compound members in order without padding, a sequence as a u64 length
and its elements, a string as a u64 byte count and its bytes (2**64-1: None).

Python side, a sequence is a 1-D numpy array of its element dtype (as h5py
reads them), a string a ``str`` (bytes that are not UTF-8 as lone surrogates,
as h5loom reads every string); writes take any array-like, ``str``, ``bytes``
or ``None``."""
import struct
from typing import Any, List, Tuple

import numpy as np

from ._errors import DatatypeError

_U64 = struct.Struct("<Q") if struct.pack("=Q", 1) == struct.pack("<Q", 1) else struct.Struct(">Q")  # host order
_NULL = (1 << 64) - 1


def has_parts(tree: Tuple[Any, ...]) -> bool:
    """Whether an element of this type tree holds variable-length parts."""
    kind = tree[0]
    if kind == "sequence":
        return True
    if kind == "array":
        return has_parts(tree[2])
    if kind == "compound":
        return any(sub[0] == "vlen" or has_parts(sub) for _, _, sub in tree[2])
    return False


def _packed_dtype(tree: Tuple[Any, ...], dtype_from_tree: Any) -> np.dtype:
    """The numpy dtype of a fixed-size type's packed bytes: members in their
    order without padding (the packed form has none)."""
    kind = tree[0]
    if kind == "compound":
        subs = [_packed_dtype(sub, dtype_from_tree) for _, _, sub in tree[2]]
        offsets, at = [], 0
        for sub in subs:
            offsets.append(at)
            at += sub.itemsize
        return np.dtype({"names": [name for name, _, _ in tree[2]], "formats": subs, "offsets": offsets,
                         "itemsize": at})
    if kind == "array":
        return np.dtype((_packed_dtype(tree[2], dtype_from_tree), tuple(tree[1])))
    if kind == "reference":
        raise DatatypeError("object references together with variable-length parts are not supported from Python")
    return dtype_from_tree(tree)


class _Packer:
    def __init__(self, dtype_from_tree: Any, what: str) -> None:
        self._dtype = dtype_from_tree
        self._what = what
        self.out = bytearray()

    def element(self, tree: Tuple[Any, ...], value: Any) -> None:
        kind = tree[0]
        if kind == "vlen":
            return self.string(value)
        if kind == "sequence":
            return self.sequence(tree[1], value)
        if kind == "compound" and has_parts(tree):
            for i, (name, _, sub) in enumerate(tree[2]):
                self.element(sub, value[i] if isinstance(value, tuple) else value[name])
            return None
        if kind == "array" and has_parts(tree):
            for v in np.asarray(value, dtype=object).reshape(-1):
                self.element(tree[2], v)
            return None
        self.fixed(tree, [value])
        return None

    def string(self, value: Any) -> None:
        if value is None:
            self.out += _U64.pack(_NULL)
            return
        if isinstance(value, str):
            b = value.encode("utf-8", "surrogateescape")
        elif isinstance(value, (bytes, np.bytes_)):
            b = bytes(value)
        else:
            raise DatatypeError(f"{self._what}: a variable-length string part needs str, bytes or None, "
                                f"not {type(value).__name__}")
        if b"\0" in b:
            raise DatatypeError(f"{self._what}: the string {value!r} holds a NUL byte, which variable-length "
                                "strings cannot hold")
        self.out += _U64.pack(len(b)) + b

    def sequence(self, base: Tuple[Any, ...], value: Any) -> None:
        if value is None:
            value = ()
        if has_parts(base) or base[0] == "vlen":
            items = list(value)
            self.out += _U64.pack(len(items))
            for v in items:
                self.element(base, v)
            return
        self.fixed(base, value, counted=True)

    def fixed(self, tree: Tuple[Any, ...], values: Any, counted: bool = False) -> None:
        """Packs fixed-size elements (a sequence's: with their count first)."""
        dt = self._dtype(tree)
        base, shape = (dt.base, dt.shape) if dt.subdtype is not None else (dt, ())
        packed = _packed_dtype(tree, self._dtype)
        packed_base = packed.base if packed.subdtype is not None else packed
        try:
            arr = np.asarray(values, dtype=base).reshape((-1,) + shape)
        except (TypeError, ValueError) as e:
            raise DatatypeError(f"{self._what}: {values!r} are not elements of {dt} ({e})") from None
        if base.fields is not None:  # records without padding, members in order
            arr = arr.astype(packed_base)
        if counted:
            self.out += _U64.pack(len(arr))
        self.out += np.ascontiguousarray(arr).tobytes()


def objects_for(data: Any, dt: np.dtype, target: Tuple[int, ...], path: str) -> np.ndarray:
    """The values to write to a selection of shape ``target``: a structured
    array for records, an object array of sequences (``data`` may be a list of
    arrays of different lengths, or one sequence for a single element)."""
    if dt.fields is not None:
        if isinstance(data, np.ndarray) and data.dtype.names != dt.names:  # (numpy casts records by position)
            raise DatatypeError(f"cannot write records with fields {data.dtype.names} to dataset '{path}' with "
                                f"fields {dt.names}")
        try:
            arr = np.asarray(data, dtype=dt) if not isinstance(data, np.ndarray) else data.astype(dt, copy=False)
        except (TypeError, ValueError) as e:
            raise DatatypeError(f"cannot write {type(data).__name__} data to dataset '{path}' of records with "
                                f"variable-length parts ({e})") from None
    elif isinstance(data, np.ndarray) and data.dtype == object:
        arr = data
    elif int(np.prod(target, dtype=np.int64)) == 1:  # one element: ds[3] = [1, 2] (or [[1, 2]])
        arr = np.empty(1, dtype=object)
        nested = isinstance(data, (list, tuple)) and len(data) == 1 and isinstance(data[0], (list, tuple, np.ndarray))
        arr[0] = data[0] if nested else data
    else:
        items = _leading(data, len(target))
        arr = np.empty(len(items), dtype=object)
        for i, v in enumerate(items):
            arr[i] = v
    size = int(np.prod(target, dtype=np.int64))
    if arr.size != size:
        raise DatatypeError(f"cannot write {arr.size} elements to a selection of {size} elements {target} of "
                            f"dataset '{path}'")
    return arr.reshape(target)


def _leading(data: Any, depth: int) -> List[Any]:
    """The elements of nested lists ``depth`` levels down, row-major."""
    items = list(data)
    for _ in range(depth - 1):
        items = [v for row in items for v in row]
    return items


def _has_references(tree: Tuple[Any, ...]) -> bool:
    kind = tree[0]
    if kind == "reference":
        return True
    if kind in ("sequence",):
        return _has_references(tree[1])
    if kind == "array":
        return _has_references(tree[2])
    if kind == "compound":
        return any(_has_references(sub) for _, _, sub in tree[2])
    return False


def pack(tree: Tuple[Any, ...], values: np.ndarray, dtype_from_tree: Any, what: str) -> bytes:
    """The packed form of the elements of ``values`` (any shape, row-major)."""
    if _has_references(tree):
        raise DatatypeError(f"{what}: object references together with variable-length parts are not held")
    p = _Packer(dtype_from_tree, what)
    if tree[0] == "compound":
        for record in values.reshape(-1):
            p.element(tree, record)
    else:
        for v in values.reshape(-1):
            p.element(tree, v)
    return bytes(p.out)


class _Unpacker:
    def __init__(self, data: bytes, dtype_from_tree: Any) -> None:
        self._data = memoryview(data)
        self._at = 0
        self._dtype = dtype_from_tree

    def u64(self) -> int:
        (v,) = _U64.unpack_from(self._data, self._at)
        self._at += 8
        return int(v)

    def element(self, tree: Tuple[Any, ...]) -> Any:
        kind = tree[0]
        if kind == "vlen":
            n = self.u64()
            if n == _NULL:
                return None
            b = bytes(self._data[self._at:self._at + n])
            self._at += n
            return b.decode("utf-8", "surrogateescape")
        if kind == "sequence":
            return self.sequence(tree[1])
        if kind == "compound" and has_parts(tree):
            return tuple(self.element(sub) for _, _, sub in tree[2])
        if kind == "array" and has_parts(tree):
            out = np.empty(tuple(tree[1]), dtype=object)
            for i in range(out.size):
                out.reshape(-1)[i] = self.element(tree[2])
            return out
        return self.fixed(tree, 1)[0]

    def sequence(self, base: Tuple[Any, ...]) -> np.ndarray:
        n = self.u64()
        if has_parts(base) or base[0] == "vlen":
            # records of a compound base in a structured array, the rest in an object array
            out = np.empty(n, dtype=self._dtype(base) if base[0] == "compound" else object)
            for i in range(n):
                out[i] = self.element(base)
            return out
        return self.fixed(base, n)

    def fixed(self, tree: Tuple[Any, ...], n: int) -> np.ndarray:
        dt = self._dtype(tree)
        packed = _packed_dtype(tree, self._dtype)
        arr = np.frombuffer(self._data, dtype=packed, count=n, offset=self._at)  # (n,) or (n, *shape)
        self._at += n * packed.itemsize
        base = dt.base if dt.subdtype is not None else dt
        return arr.astype(base)  # a copy: records get their padding back, numbers their metadata


def unpack_all(tree: Tuple[Any, ...], data: bytes, dt: np.dtype, dtype_from_tree: Any) -> np.ndarray:
    """Every packed element of ``data`` as a 1-D array of ``dt`` (an attribute's value)."""
    u = _Unpacker(data, dtype_from_tree)
    items: List[Any] = []
    while u._at < len(data):
        items.append(u.element(tree))
    out = np.empty(len(items), dtype=dt)
    for i, v in enumerate(items):
        out[i] = v
    return out


def unpack(tree: Tuple[Any, ...], data: bytes, out: np.ndarray, dtype_from_tree: Any) -> None:
    """Fills ``out`` (C-contiguous, the dataset's numpy dtype) from packed elements."""
    u = _Unpacker(data, dtype_from_tree)
    flat: List[Any] = [u.element(tree) for _ in range(out.size)]
    target = out.reshape(-1)
    for i, v in enumerate(flat):
        target[i] = v
