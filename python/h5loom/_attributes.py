"""The attributes of an object as a dict (``obj.attrs``)."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np

from . import _core
from . import _variable_length as _vl
from ._dtypes import (_dtype_from_tree, _dtype_name, _has_parts, _has_refs, _is_plain_numeric, _is_ref, _np_dtype,
                      _raw_dtype, _records, _refs_from_raw, _refs_to_raw, Empty, Reference, ref_dtype)
from ._errors import DatatypeError, UsageError


class AttributeManager(MutableMapping):
    """The attributes of a file, group or dataset, as a dict: ``obj.attrs["units"] = "m"``.

    Values are strings, lists of strings, scalars (returned as numpy scalars) or 1-D
    arrays of int8..int64, uint8..uint64, float16, float32, float64; references (a Reference,
    or a list of them: read back as a Reference or an object array of them); and
    scalars or 1-D arrays of structured, enum or fixed-string dtypes (netCDF's
    REFERENCE_LIST: records with a ``ref_dtype`` field); ``Empty(dtype)``: a type and no value
    (HDF5's null dataspace, as h5py's). Setting replaces any old value.
    Iteration is by name; ``keys(order="creation")`` lists them as they were made. Deleting
    (``del obj.attrs["units"]``) and ``rename`` need an engine with "attribute_edit".
    """

    def __init__(self, obj: "_core.Object") -> None:
        self._obj = obj

    def __getitem__(self, name: str) -> Any:
        kind, dtype, payload = self._obj.attribute(name)
        if kind == "empty":
            return Empty(_np_dtype(dtype))
        if kind in ("string", "strings"):
            return payload if kind == "string" else list(payload)
        dt = _np_dtype(dtype)
        if _has_parts(dt):  # ragged arrays, records with strings: packed by the core
            values = _vl.unpack_all(_core.type_tree(dtype), payload, dt, _dtype_from_tree)
        elif _has_refs(dt):
            values = _refs_from_raw(np.frombuffer(payload, dtype=_raw_dtype(dt)), dt)
        else:
            values = np.frombuffer(payload, dtype=dt).copy()
        return values[0] if kind == "scalar" else values

    def __setitem__(self, name: str, value: Any) -> None:
        where = f"attribute '{name}' on '{self._obj.path}'"
        if isinstance(value, Empty):
            self._obj.set_attribute_empty(name, _dtype_name(value.dtype, where))
            return
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if isinstance(value, str):
            self._obj.set_attribute_string(name, value)
            return
        if isinstance(value, Reference):
            self._set_raw(name, np.array(value.token, dtype="<u8"), "reference", scalar=True)
            return
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
            self._obj.set_attribute_strings(name, list(value))
            return
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, Reference) for v in value):
            self._set_raw(name, np.array([v.token for v in value], dtype="<u8"), "reference", scalar=False)
            return
        arr = np.asarray(value)
        if arr.ndim > 1:
            raise DatatypeError(f"{where}: attributes hold a scalar, a 1-D array or a string, "
                                f"not an array of shape {arr.shape}")
        if arr.dtype.kind in "US" and arr.ndim == 0:
            self._obj.set_attribute_string(name, str(arr) if arr.dtype.kind == "U" else arr.item().decode("utf-8"))
            return
        if arr.dtype.kind in "US" and arr.dtype.fields is None and not (arr.dtype.metadata or {}).get("encoding"):
            self._obj.set_attribute_strings(name, [v if isinstance(v, str) else v.decode("utf-8")
                                                   for v in arr.tolist()])
            return
        if arr.dtype.kind == "b":
            raise DatatypeError(f"{where}: booleans are not supported; store 0/1 as an integer type")
        given = arr.dtype
        if _has_parts(given):  # ragged arrays, records with strings: packed here
            canonical = _dtype_name(given, where)
            dt = _np_dtype(canonical)
            flat = _vl.objects_for(arr.reshape(-1), dt, (arr.size,), where)
            packed = _vl.pack(_core.type_tree(canonical), flat, _dtype_from_tree, where)
            self._obj.set_attribute_packed(name, canonical, packed, flat.size, arr.ndim == 0)
            return
        if given.kind == "O" and given.fields is None and not _is_ref(given):  # of strings, or of references
            items = arr.ravel().tolist()
            if items and all(isinstance(v, str) for v in items):
                self._obj.set_attribute_strings(name, items)
                return
            if not (any(isinstance(v, Reference) for v in items) and
                    all(isinstance(v, Reference) or v is None for v in items)):
                raise DatatypeError(f"{where}: an object array of {sorted({type(v).__name__ for v in items})} "
                                    "values; attributes hold numbers, strings, references and records")
            given = ref_dtype
        canonical = _dtype_name(given, where)
        dt = _np_dtype(canonical)
        if _is_plain_numeric(dt) and not canonical.endswith("be"):
            flat = np.ascontiguousarray(arr.reshape(-1), dtype=dt)
            self._obj.set_attribute_numeric(name, flat, arr.ndim == 0)
            return
        # compounds, enums, references, fixed strings: the elements' bytes
        flat = _records(arr.reshape(-1), dt, where)
        raw = _refs_to_raw(flat, dt, where) if _has_refs(dt) else np.ascontiguousarray(flat, dtype=dt)
        self._set_raw(name, raw, canonical, scalar=arr.ndim == 0)

    def _set_raw(self, name: str, raw: np.ndarray, dtype_name: str, scalar: bool) -> None:
        self._obj.set_attribute_raw(name, dtype_name, np.ascontiguousarray(raw).tobytes(), scalar)

    def __delitem__(self, name: str) -> None:
        self._obj.remove_attribute(name)

    def rename(self, old: str, new: str) -> None:
        """Renames attribute ``old`` to ``new``; its value and place in creation order stay."""
        self._obj.rename_attribute(old, new)

    def keys(self, order: str = "name") -> list[str]:  # type: ignore[override]
        """Names, sorted; ``order="creation"``: in the order the attributes were created
        (setting one again makes it the newest; engines with "attribute_edit")."""
        if order == "creation":
            return list(self._obj.attribute_names_in_creation_order())
        if order != "name":
            raise UsageError(f"attrs.keys(order={order!r}): order is 'name' or 'creation'")
        return list(self._obj.attribute_names())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._obj.has_attribute(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._obj.attribute_names())

    def __len__(self) -> int:
        return len(self._obj.attribute_names())

    def __repr__(self) -> str:
        return f"<h5loom attributes of '{self._obj.path}': {list(self)}>"
