"""h5loom: parallel I/O for simulation data, in HDF5's data model.

Many MPI ranks write N-D arrays into one file through a storage engine chosen at
run time (``engine="hdf5"``, a JSON configuration, or ``$H5LOOM_ENGINE``).

    import h5loom
    from mpi4py import MPI

    with h5loom.File("a.h5", "w", comm=MPI.COMM_WORLD) as f:
        ds = f.create_dataset("fields/rho", shape=(N, M), dtype="f8", chunks="auto")
        ds[r0:r1, :] = local_rows           # each rank writes its rows
        ds.attrs["units"] = "kg/m^3"
    with h5loom.File("a.h5", "r") as f:
        print(f["fields/rho"][10:20, :].mean())

Collective contract (as in the C++ API, docs/object-model.md): every call is made
by all ranks of the file's communicator, in the same order, except writes
(``ds[...] = x``, ``ds.write``). Reads are collective; a rank that needs nothing
reads an empty slice (``ds[0:0]``) or ``ds.read(h5loom.Selection.none())``.
"""

from __future__ import annotations

import os
import posixpath
import sys
from collections.abc import Iterator, Mapping
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

# Error, NotFoundError, ...: one class per row of the error table (_errors.py).
from ._errors import *  # noqa: F401,F403
from ._errors import CLASSES as _ERROR_CLASSES, __all__ as _ERROR_NAMES
from . import _core
from ._dtypes import (_SUPPORTED_KINDS, _array_elements, _dtype_from_tree, _dtype_name, _has_parts, _has_refs,
                      _is_plain_numeric, _is_vlen, _np_dtype, _raw_dtype, _records, _refs_from_raw, _refs_to_raw,
                      Reference, enum_dtype, Empty, opaque_dtype, ref_dtype, string_dtype, vlen_dtype)
from . import _variable_length as _vl
from ._core import Selection
from ._attributes import AttributeManager
from ._values import _as_data_array, _checked_values, _selection_for

from .series import Field, ParticleArray, Particles, Series, Step  # noqa: E402
from . import pio  # noqa: E402,F401  (h5loom.pio: PIO decompositions and rearrangers)
from . import netcdf  # noqa: E402,F401  (h5loom.netcdf: netCDF-4 files)

__version__ = "0.1.0"
__all__ = [
    "File", "Group", "Dataset", "Datatype", "AttributeManager", "Selection", "Request", "engines", "engine_groups",
    "string_dtype", "vlen_dtype", "enum_dtype", "opaque_dtype", "ref_dtype", "Empty", "Reference", "SoftLink",
    "ExternalLink", "Series", "Step", "Particles", "ParticleArray", "Field",
    *_ERROR_NAMES,
]

UNLIMITED = None  # in ``maxshape``: the dimension can grow without bound (as in h5py)
_UNLIMITED_U64 = 2**64 - 1
_MODES = {"r": 0, "r+": 1, "w": 2, "w-": 3, "x": 3}


def engines() -> list[str]:
    """Names of the registered storage engines."""
    return list(_core.engine_names())


def engine_groups(engine: Union[None, str, Mapping[str, Any]] = None) -> list[str]:
    """The conformance groups an engine declares (sorted), e.g. whether it keeps
    references (``"references"``) or variable-length strings (``"vlen_strings"``).
    ``engine``: a name, JSON string or dict as for File; default ``$H5LOOM_ENGINE``, else hdf5."""
    return list(_core.engine_groups(_engine_config(engine)))


# ---- helpers ---------------------------------------------------------------------


def _comm_handle(comm: Any) -> Optional[int]:
    if comm is None:
        return None
    if hasattr(comm, "py2f"):  # an mpi4py communicator
        return int(comm.py2f())
    raise UsageError(f"comm must be an mpi4py communicator or None, not {type(comm).__name__}")


def _engine_config(engine: Union[None, str, Mapping[str, Any]]) -> str:
    if engine is None:
        return ""
    if isinstance(engine, str):
        return engine
    if isinstance(engine, Mapping):
        import json  # (here: a script that opens a file by engine name does not pay for it)

        return json.dumps(engine)
    raise ConfigError(f"engine must be a name, a JSON string or a dict, not {type(engine).__name__}")


def _squeezed(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    return tuple(n for n in shape if n != 1)


# ---- the object model ------------------------------------------------------------


class _Node:
    def __init__(self, obj: "_core.Object", file: Optional["File"]) -> None:
        self._obj = obj
        self._file = file if file is not None else self  # the File this object belongs to

    @property
    def file(self) -> "File":
        """The file this object belongs to."""
        return self._file  # type: ignore[return-value]

    @property
    def path(self) -> str:
        """Absolute path in the file ('/' for the root)."""
        return self._obj.path

    @property
    def name(self) -> str:
        """Last component of the path."""
        return self._obj.name

    @property
    def attrs(self) -> AttributeManager:
        """The object's attributes, dict-like."""
        return AttributeManager(self._obj)

    @property
    def ref(self) -> Reference:
        """A reference to this group or dataset (as h5py's ``obj.ref``), to store in
        datasets or attributes; ``f[ref]`` opens the object again. Collective;
        engines with the "references" group."""
        return Reference(self.file._obj.reference(self.path))


class SoftLink:
    """A soft link to a path, as h5py's: ``g["latest"] = SoftLink("/steps/9")``;
    ``g.get(name, getlink=True)`` gives one back. Its target need not exist."""

    def __init__(self, path: str) -> None:
        self.path = str(path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SoftLink) and other.path == self.path

    def __repr__(self) -> str:
        return f"<h5loom.SoftLink to '{self.path}'>"


class ExternalLink:
    """A link to the object ``path`` of another file, as h5py's:
    ``g["other"] = ExternalLink("b.h5", "/data")``; ``g.get(name, getlink=True)``
    gives one back. h5loom does not follow it (``g[name]`` raises NotFoundError
    naming the file): open that file yourself. HDF5, h5py and h5dump follow it."""

    def __init__(self, filename: str, path: str) -> None:
        self.filename = str(filename)
        self.path = str(path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExternalLink) and (other.filename, other.path) == (self.filename, self.path)

    def __repr__(self) -> str:
        return f"<h5loom.ExternalLink to '{self.path}' in file '{self.filename}'>"


class Group(_Node):
    """A group: a container of groups and datasets, addressed by path (``g["a/b"]``)."""

    def create_group(self, path: str) -> "Group":
        """Create a group (and any missing parents). Collective."""
        return Group(self._obj.create_group(path), self._file)

    def require_group(self, path: str) -> "Group":
        """Open the group at ``path``, creating it if it does not exist. Collective."""
        kind = self._obj.kind(path)
        if kind is None:
            return self.create_group(path)
        return Group(self._obj.group(path), self._file)

    def create_dataset(
        self,
        path: str,
        shape: Optional[Sequence[int]] = None,
        dtype: Any = None,
        data: Any = None,
        maxshape: Optional[Sequence[Optional[int]]] = None,
        chunks: Union[None, bool, str, Sequence[int]] = None,
        layout: Optional[str] = None,
        fillvalue: Any = None,
        compression: Union[None, str, int] = None,
        compression_opts: Any = None,
        shuffle: bool = False,
        fletcher32: bool = False,
        dim_names: Optional[Sequence[Optional[str]]] = None,
    ) -> "Dataset":
        """Create an N-D dataset. Collective.

        shape/dtype: taken from ``data`` when not given (dtype defaults to float64).
        maxshape: per dimension a maximum or ``None`` (unlimited); makes the dataset extendable.
        chunks: ``None`` (the engine decides), ``"auto"``/``True`` (chunked, ~1 MiB chunks)
        or explicit chunk dimensions. layout: ``"contiguous"``/``"chunked"`` to force one.
        data: written to the whole dataset; every rank passes the same data (rank 0 writes it).
        fillvalue: the value of elements never written (engines with the "fill" group).
        data=Empty(dtype): a dataset without elements or shape (HDF5's null dataspace;
        engines with the "null_spaces" group).
        dtype=a named Datatype of this file (``f["particle"]``): the dataset shares it, as
        h5py shares a committed datatype (its reference count counts the dataset).
        compression, compression_opts, shuffle, fletcher32: HDF5 filters as h5py takes
        them - ``compression="gzip"`` (or a level 0-9; ``compression_opts`` the level,
        default 4), or a registered filter's id with ``compression_opts`` its parameters;
        ``shuffle`` and ``fletcher32`` as flags. They make the dataset chunked (engines with
        the "filters" group: the hdf5 engine applies them, the log engine records them
        for ``h5loom convert``, the zarr engine writes them as Zarr codecs).
        dim_names: a name for each dimension (``None`` or ``""`` leaves one unnamed), as
        xarray names dimensions (engines with the "dimension_names" group: the zarr engine
        writes Zarr's ``dimension_names``; other engines refuse them).
        """
        names = [] if dim_names is None else ["" if d is None else str(d) for d in dim_names]
        filters = _filters_for(path, compression, compression_opts, shuffle, fletcher32)
        named_type = ""
        if isinstance(dtype, Datatype):  # another file's is copied, as HDF5 copies it
            named_type = dtype.path if dtype.file is self.file else ""
            dtype = dtype.dtype
        if isinstance(data, Empty):
            if shape is not None or maxshape is not None or chunks not in (None, False):
                raise SelectionError(f"create_dataset('{path}'): an Empty dataset has no shape, maxshape or chunks")
            dt = _dtype_name(data.dtype if dtype is None else dtype, f"dataset '{path}'")
            if filters:
                raise UsageError(f"create_dataset('{path}'): an Empty dataset has no chunks to compress")
            if names:
                raise SelectionError(f"create_dataset('{path}'): an Empty dataset has no dimensions to name")
            return Dataset(self._obj.create_dataset(path, dt, [], [], None, layout or "", None, True, [], named_type,
                                                    []), self._file)
        arr = None if data is None else _as_data_array(data, dtype)
        if shape is None:
            if arr is None:
                raise UsageError(f"create_dataset('{path}'): give a shape or data (data=h5loom.Empty(dtype) for "
                                 "a dataset without elements)")
            shape = arr.shape
        shape = tuple(int(s) for s in shape)
        if dtype is None:
            dtype = arr.dtype if arr is not None else np.float64
        dt = _dtype_name(dtype, f"dataset '{path}'")
        max_shape: list[int] = []
        if maxshape is not None:
            if len(maxshape) != len(shape):
                raise SelectionError(f"create_dataset('{path}'): maxshape {tuple(maxshape)} and shape {shape} "
                                     "differ in rank")
            max_shape = [_UNLIMITED_U64 if m is None else int(m) for m in maxshape]
        chunk_dims = None
        if chunks is True or chunks == "auto":
            layout = layout or "chunked"
        elif chunks is not None and chunks is not False:
            chunk_dims = [int(c) for c in chunks]
        fill = None
        if fillvalue is not None:
            if _is_vlen(_np_dtype(dt)) or _has_refs(_np_dtype(dt)):
                raise DatatypeError(f"create_dataset('{path}'): a dataset of {dt} has no fill value (unwritten "
                                    "elements read as empty strings and null references)")
            fill = _records([fillvalue], _np_dtype(dt), path).tobytes()
        ds = Dataset(self._obj.create_dataset(path, dt, list(shape), max_shape, chunk_dims, layout or "", fill, False,
                                              filters, named_type, names), self._file)
        if arr is not None:
            if self.file.rank == 0:
                ds.write(arr)
            else:
                ds.write(np.empty((0,), dtype=_np_dtype(dt)), Selection.none())
        return ds

    def __getitem__(self, path: Union[str, Reference]) -> Union["Group", "Dataset", "Datatype"]:
        """The group, dataset or named datatype at ``path`` (relative or absolute),
        or the one a Reference names."""
        if isinstance(path, Reference):
            path = self.dereference(path)
        kind = self._obj.kind(path)
        if kind is None and (link := self._obj.external_link(path)) is not None:
            raise NotFoundError(f"'{path}' in group '{self.path}' of file '{self.file.filename}' is an external link "
                                f"to '{link[1]}' of file '{link[0]}', which h5loom does not follow: open that file")
        if kind == "dataset":
            return Dataset(self._obj.dataset(path), self._file)
        if kind == "group":
            return Group(self._obj.group(path), self._file)
        if kind == "datatype":
            return Datatype(self._obj.named_datatype(path), self._file)
        raise NotFoundError(f"no object '{path}' in group '{self.path}' of file '{self.file.filename}'")

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self._obj.kind(path) is not None

    def __setitem__(self, name: str, value: Any) -> None:
        """``g[name] = SoftLink("/target")`` makes a soft link, ``g[name] =
        ExternalLink("file.h5", "/target")`` an external link; ``g[name] = other_object``
        (a Group, Dataset or Datatype of this file) a hard link - a second name for it;
        ``g[name] = np.dtype(...)`` a named datatype (all as in h5py); an array-like makes
        a dataset of it. Collective."""
        if isinstance(value, SoftLink):
            self._obj.create_soft_link(name, value.path)
        elif isinstance(value, ExternalLink):
            self._obj.create_external_link(name, value.filename, value.path)
        elif isinstance(value, (Group, Dataset, Datatype)):
            if value.file.filename != self.file.filename:
                raise UsageError(f"cannot link '{name}' in file '{self.file.filename}' to '{value.path}' of "
                                 f"file '{value.file.filename}': a hard link stays in its file")
            self._obj.create_hard_link(name, value.path)
        elif isinstance(value, np.dtype):
            self.commit_datatype(name, value)
        else:
            self.create_dataset(name, data=value)

    def commit_datatype(self, path: str, dtype: Any) -> "Datatype":
        """Keep ``dtype`` in the file as the named datatype ``path`` (HDF5's committed
        datatypes; engines with the "named_types" group). Collective."""
        return Datatype(self._obj.commit_datatype(path, _dtype_name(dtype, f"named datatype '{path}'")), self._file)

    def __delitem__(self, name: str) -> None:
        """Delete the link ``name``: a soft link, a hard link, or an object's name; the
        object goes, a group with everything below it, with its last name. Collective."""
        self._obj.remove(name)

    def copy(self, source: Union[str, "Group", "Dataset", "Datatype"], dest: Union[str, "Group"],
             name: Optional[str] = None, shallow: bool = False, expand_soft: bool = False,
             without_attrs: bool = False) -> None:
        """Copy ``source`` (a path relative to this group, or an object) with everything
        below it to ``dest``: a path relative to this group, or a group - of this file or
        another - to copy into as ``name`` (default: the source's name), as h5py's
        ``Group.copy``. ``shallow``: a group's members, not what is below them;
        ``expand_soft``: soft links inside become copies of their targets;
        ``without_attrs``: no attributes. Collective over both files."""
        if isinstance(source, _Node):
            source_file, source_path = source.file, source.path
        else:
            source_file, source_path = self.file, posixpath.join(self.path, source)
        if isinstance(dest, Group):
            base = name if name is not None else posixpath.basename(source_path.rstrip("/"))
            if not base:
                raise UsageError("copy: the root group needs a name to be copied as")
            dest_file, dest_path = dest.file, posixpath.join(dest.path, base)
        elif isinstance(dest, str):
            dest_file, dest_path = self.file, posixpath.join(self.path, dest)
        else:
            raise UsageError(f"copy: dest must be a path or a Group, not {type(dest).__name__}")
        _core.copy_object(source_file._obj, source_path, dest_file._obj, dest_path, shallow, not without_attrs,
                          expand_soft)

    def link_count(self, path: str) -> int:
        """How many names (hard links) the object at ``path`` has: 1 unless ``g[name] = obj``
        gave it more (h5py: ``h5py.h5o.get_info(obj.id).rc``). Collective."""
        return self._obj.link_count(path)

    def change_reference_count(self, path: str, delta: int) -> int:
        """Holds (``delta=+1``) or releases (``-1``) a reference on the object at ``path``
        besides its names, kept in the file: HDF5's ``H5Oincr_refcount`` /
        ``H5Odecr_refcount`` (h5py: ``h5py.h5o.incref``). Returns the new
        ``link_count``. Releasing a reference the object does not hold raises
        ``UsageError``. Engines with "reference_counts" (hdf5, log). Collective."""
        return self._obj.change_reference_count(path, delta)

    def dereference(self, ref: Reference) -> str:
        """The absolute path of the object ``ref`` names (``self[ref]`` opens it).
        NotFoundError for a null reference, a removed object, or a reference of
        another file. Collective."""
        if not isinstance(ref, Reference):
            raise DatatypeError(f"dereference: {ref!r} is not an h5loom.Reference")
        return self._obj.dereference(ref.token)

    def move(self, source: str, dest: str) -> None:
        """Rename ``source`` to ``dest`` (missing parents of ``dest`` are created). Collective."""
        self._obj.move(source, dest)

    def get(self, name: str, default: Any = None, getlink: bool = False) -> Any:
        """The member ``name`` (``default`` if there is none); with ``getlink=True``
        a soft link comes back as a SoftLink instead of what it points to, an external
        link as an ExternalLink (without it: ``default``, h5loom does not follow them)."""
        if self._obj.kind(name) is None and (link := self._obj.external_link(name)) is not None:
            return ExternalLink(*link) if getlink else default
        target = self._obj.soft_link(name)
        if target is not None and (getlink or self._obj.kind(name) is None):
            return SoftLink(target) if getlink else default
        return self[name] if self._obj.kind(name) is not None else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._obj.list())

    def __len__(self) -> int:
        return len(self._obj.list())

    def keys(self, order: str = "name") -> list[str]:
        """Member names, sorted; ``order="creation"``: in the order they were created
        (engines with the "order" group)."""
        if order == "creation":
            return list(self._obj.list_in_creation_order())
        if order != "name":
            raise UsageError(f"keys(order={order!r}): order is 'name' or 'creation'")
        return list(self._obj.list())

    def items(self) -> list[Tuple[str, Any]]:
        """(name, member); a soft link whose target does not exist gives its SoftLink,
        an external link its ExternalLink."""
        out = []
        for name in self.keys():
            value = self.get(name)
            out.append((name, value if value is not None else self.get(name, getlink=True)))
        return out

    def values(self) -> list[Any]:
        return [value for _, value in self.items()]

    def visit(self, func: Any) -> Any:
        """Call ``func(path, obj)`` for every object below this group, depth first, members by
        name; stop at a non-None result. Soft links are not followed, and an object with
        several names is met once, by the first. Collective."""
        for path, _ in self._obj.visit():
            result = func(path, self[path])
            if result is not None:
                return result
        return None

    def __repr__(self) -> str:
        return f"<h5loom.Group '{self.path}' ({len(self)} members)>"


class Datatype(_Node):
    """A named (committed) datatype, as h5py's: ``f["particle"] = np.dtype(...)``
    makes one, ``f["particle"].dtype`` is its numpy dtype; it has attributes."""

    @property
    def dtype(self) -> np.dtype:
        return _np_dtype(self._obj.dtype)

    def __repr__(self) -> str:
        return f"<h5loom.Datatype '{self.path}' {self.dtype}>"


_DEFLATE, _SHUFFLE, _FLETCHER32 = 1, 2, 3


def _filters_for(path: str, compression: Any, opts: Any, shuffle: bool,
                 fletcher32: bool) -> list[tuple[int, list[int], bool]]:
    """h5py's filter arguments as (id, params, optional) in the order HDF5 applies
    them: shuffle, then the compression, then the checksum (h5py's order)."""
    out: list[tuple[int, list[int], bool]] = []
    if shuffle:
        out.append((_SHUFFLE, [], False))
    if compression is not None:
        if compression == "gzip" or (isinstance(compression, int) and not isinstance(compression, bool)
                                      and 0 <= compression <= 9):
            level = compression if isinstance(compression, int) else (4 if opts is None else opts)
            if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= int(level) <= 9:
                raise UsageError(f"create_dataset('{path}'): the gzip level is 0 to 9, not {level!r}")
            out.append((_DEFLATE, [int(level)], False))
        elif isinstance(compression, int) and not isinstance(compression, bool) and 256 <= compression <= 65535:
            params = [] if opts is None else [int(v) for v in (opts if isinstance(opts, (tuple, list)) else (opts,))]
            out.append((compression, params, False))
        else:
            raise UsageError(f"create_dataset('{path}'): compression {compression!r} is not supported; use 'gzip' "
                             "(a level 0-9), or a registered HDF5 filter's id (256-65535) with compression_opts")
    elif opts is not None:
        raise UsageError(f"create_dataset('{path}'): compression_opts without compression")
    if fletcher32:
        out.append((_FLETCHER32, [], False))
    return out


class Dataset(_Node):
    """An N-D array in a file. Index it like numpy (``ds[2:8, ::2]``) to read and write.
    A dataset with HDF5's null dataspace (made from ``Empty(dtype)``) has no shape:
    ``shape``, ``size`` and ``maxshape`` are None and ``ds[()]`` is ``Empty(dtype)``, as in h5py."""

    @property
    def shape(self) -> Optional[Tuple[int, ...]]:
        return None if self._obj.null_space else tuple(self._obj.shape)

    @property
    def dtype(self) -> np.dtype:
        return _np_dtype(self._obj.dtype)

    @property
    def fillvalue(self) -> Any:
        """The value of elements never written (zero unless one was set; an empty
        string or a null Reference for those types, which have no fill value)."""
        dt = self.dtype
        if _is_vlen(dt):
            return ""
        if _has_parts(dt):  # empty sequences and strings (None)
            return np.array([], dtype=dt.metadata["vlen"]) if dt.fields is None else np.empty((), dtype=dt)[()]
        raw = self._obj.fill_value
        if _has_refs(dt):
            zero = np.zeros((), dtype=_raw_dtype(dt))
            return _refs_from_raw(zero, dt)[()]
        return np.frombuffer(raw, dtype=dt)[0] if raw else np.zeros((), dtype=dt)[()]

    @property
    def ndim(self) -> int:
        return 0 if self._obj.null_space else len(self._obj.shape)

    @property
    def size(self) -> Optional[int]:
        return None if self._obj.null_space else int(np.prod(self.shape, dtype=np.int64))

    @property
    def maxshape(self) -> Optional[Tuple[Optional[int], ...]]:
        """Maximum shape; ``None`` marks an unlimited dimension (None for an Empty dataset)."""
        if self._obj.null_space:
            return None
        return tuple(None if m == _UNLIMITED_U64 else m for m in self._obj.max_shape)

    @property
    def chunks(self) -> Optional[Tuple[int, ...]]:
        """Chunk dimensions, or ``None`` for a contiguous dataset."""
        c = self._obj.chunks
        return tuple(c) if c else None

    @property
    def layout(self) -> str:
        return self._obj.layout

    @property
    def dim_names(self) -> Optional[Tuple[str, ...]]:
        """The dimensions' names (``""`` for an unnamed one), or ``None`` if it has none."""
        names = self._obj.dim_names
        return tuple(names) if names else None

    @property
    def filters(self) -> list[tuple[int, tuple[int, ...], bool, str]]:
        """HDF5 filters as (id, parameters, optional, name), in the order they apply on writing."""
        return [(i, tuple(p), o, n) for i, p, o, n in self._obj.filters]

    @property
    def compression(self) -> Optional[str]:
        """``"gzip"`` if deflated, else None (h5py's)."""
        return "gzip" if any(f[0] == _DEFLATE for f in self._obj.filters) else None

    @property
    def compression_opts(self) -> Optional[int]:
        """The gzip level, or None (h5py's)."""
        return next((f[1][0] for f in self._obj.filters if f[0] == _DEFLATE and f[1]), None)

    @property
    def shuffle(self) -> bool:
        return any(f[0] == _SHUFFLE for f in self._obj.filters)

    @property
    def fletcher32(self) -> bool:
        return any(f[0] == _FLETCHER32 for f in self._obj.filters)

    def __len__(self) -> int:
        if self._obj.null_space:
            raise TypeError(f"dataset '{self.path}' is Empty (a null dataspace): it has no length")
        return self.shape[0]

    def extend(self, shape: Sequence[int]) -> None:
        """Grow the dataset to ``shape`` (no dimension may shrink or pass maxshape). Collective."""
        self._obj.extend([int(s) for s in shape])

    def resize(self, size: Any, axis: Optional[int] = None) -> None:
        """h5py's resize: to ``size`` (a shape), or ``size`` along ``axis``. Shrinking
        needs an engine with "shrink" (the elements outside are gone). Collective."""
        if axis is not None:
            shape = list(self.shape)
            shape[axis] = int(size)
        else:
            shape = [int(s) for s in size]
        self._obj.resize(shape)

    def read(self, selection: Any = None, out: Optional[np.ndarray] = None, *,
             independent: bool = False) -> np.ndarray:
        """Read a selection (default: everything) into a new array, or into ``out``
        (C-contiguous, the dataset's dtype, as many elements as selected). Collective;
        ``independent=True``: this rank alone, seeing what the last flush point made
        visible (engines with "independent_read"; this rank must have no unflushed writes).
        ``selection`` is a Selection or any index ``ds[...]`` takes (slices, integers,
        an ellipsis); the result has the selection's shape, integer indices included."""
        sel = self._selection(selection)
        shape = tuple(sel.selected_shape(list(self.shape)))
        if sel.kind == "none":
            shape = (0,)
        dt = self.dtype
        if out is None:
            out = np.empty(shape, dtype=dt)
        elif (out.dtype != (dt.subdtype[0] if dt.subdtype else dt) or not out.flags.c_contiguous or
              not out.flags.writeable):
            raise DatatypeError(f"read of dataset '{self.path}': out must be a writeable C-contiguous "
                                f"{dt} array, not {out.dtype}"
                                f"{'' if out.flags.c_contiguous else ' (not contiguous)'}")
        if _is_plain_numeric(dt):
            self._obj.read(sel, out, independent)
        elif _has_parts(dt):  # sequences, strings in records: packed by the core, unpacked here
            _vl.unpack(_core.type_tree(self._obj.dtype), self._obj.read_packed(sel, out.size, independent), out,
                       _dtype_from_tree)
        elif _is_vlen(dt):  # str objects, whatever the encoding
            out.reshape(-1)[:] = self._obj.read_strings(sel, out.size, independent)
        elif _has_refs(dt):  # the tokens, then Reference objects
            raw = np.empty(out.shape, dtype=_raw_dtype(dt))
            self._obj.read_bytes(sel, raw.reshape(-1).view(np.uint8), independent)
            _refs_from_raw(raw, dt, out)
        else:
            self._obj.read_bytes(sel, out.reshape(-1).view(np.uint8), independent)
        return out

    def write(self, data: Any, selection: Any = None, copy: bool = True) -> None:
        """Write ``data`` to a selection (default: everything).

        copy=True: the data is copied now (value semantics). copy=False: zero-copy; a
        C-contiguous array of the dataset's dtype is kept alive and read at the next
        flush point (``flush``, ``close``, a read or an extend), so it must not be
        modified until then. Data of another dtype or layout is converted first either way.
        ``selection`` is a Selection or any index ``ds[...]`` takes.
        """
        sel = self._selection(selection)
        target = tuple(sel.selected_shape(list(self.shape))) if sel.kind != "none" else (0,)
        dt = self.dtype
        if _has_parts(dt):  # packed here, copied by the core at once
            arr = _vl.objects_for(data, dt, target, self.path)
            tree = _core.type_tree(self._obj.dtype)
            self._obj.write_packed(sel, _vl.pack(tree, arr, _dtype_from_tree, f"a write to dataset '{self.path}'"),
                                   arr.size)
            return
        arr, fresh = self._prepare(data, target)
        if _is_plain_numeric(dt):
            self._obj.write(sel, arr, copy and not fresh)
        elif _is_vlen(dt):  # bytes objects, copied by the core at once
            self._obj.write_strings(sel, arr.reshape(-1).tolist())
        elif _has_refs(dt):  # Reference objects as their tokens: a new array
            raw = _refs_to_raw(arr, dt, self.path)
            self._obj.write_bytes(sel, raw.reshape(-1).view(np.uint8), False)
        else:  # compound, string, enum: the elements' bytes (a view: the array stays alive through it)
            self._obj.write_bytes(sel, arr.reshape(-1).view(np.uint8), copy and not fresh)

    def _prepare(self, data: Any, target: Tuple[int, ...]) -> Tuple[np.ndarray, bool]:
        """The data as a C-contiguous array of the dataset's dtype and of the target shape.
        ``fresh`` tells whether it is a new array (no copy needed to protect the caller's)."""
        dt = self.dtype
        if dt.subdtype is not None:
            return _array_elements(data, dt, target, self.path)
        if not _is_plain_numeric(dt):
            arr = _records(data, dt, self.path)
        elif isinstance(data, np.ndarray):
            arr = data
            # numpy's "safe" casts only (int32 -> int64, int -> float64, float32 -> float64):
            # never silently lose values.
            if arr.dtype != dt:
                if arr.dtype.kind not in _SUPPORTED_KINDS or not np.can_cast(arr.dtype, dt, casting="safe"):
                    raise DatatypeError(f"cannot write {arr.dtype} data to dataset '{self.path}' of type "
                                        f"{_dtype_name(dt, self.path)} without losing values; convert it first")
        else:
            arr = _checked_values(data, dt, self.path)
        if arr.shape != target:
            if arr.size == int(np.prod(target, dtype=np.int64)) and (arr.ndim == 1 or
                                                                      _squeezed(arr.shape) == _squeezed(target)):
                arr = np.ascontiguousarray(arr).reshape(target)
            else:
                try:  # numpy broadcasting, materialised (the core needs real strides)
                    arr = np.array(np.broadcast_to(arr, target), dtype=dt, order="C")
                except ValueError:
                    raise SelectionError(f"cannot write data of shape {arr.shape} to a selection of shape "
                                         f"{target} of dataset '{self.path}'") from None
        out = np.ascontiguousarray(arr, dtype=dt)
        fresh = not (out is data or (isinstance(data, np.ndarray) and np.shares_memory(out, data)))
        return out, fresh

    def _selection(self, selection: Any) -> Selection:
        """The Selection that read() and write() take: everything, a Selection, or a numpy-style index."""
        if selection is None:
            return Selection.all()
        if isinstance(selection, Selection):
            return selection
        self._refuse_if_empty(selection)
        return _selection_for(selection, self.shape, self.path)[0]

    def _refuse_if_empty(self, key: Any) -> None:
        if self._obj.null_space:
            raise SelectionError(f"dataset '{self.path}' is Empty (a null dataspace, no elements): index it with "
                                 f"() to get Empty({self.dtype}), not {key!r}")

    def __getitem__(self, key: Any) -> Any:
        if self._obj.null_space and ((isinstance(key, tuple) and key == ()) or key is Ellipsis):
            return Empty(self.dtype)
        self._refuse_if_empty(key)
        sel, out_shape = _selection_for(key, self.shape, self.path)
        if self.dtype.subdtype is not None:  # array elements: numpy shows them as trailing dimensions
            out_shape = tuple(out_shape) + self.dtype.subdtype[1]
        full = tuple(sel.selected_shape(list(self.shape)))
        result = self.read(sel, np.empty(full, dtype=self.dtype)).reshape(out_shape)
        return result[()] if result.ndim == 0 else result

    def __setitem__(self, key: Any, value: Any) -> None:
        # The common case in one call: a basic index and an array of the dataset's
        # numeric type and the selection's shape (the core checks, and says no otherwise).
        if type(value) is np.ndarray and self._obj.write_basic(key, value):
            return
        self._refuse_if_empty(key)
        sel, _ = _selection_for(key, self.shape, self.path)
        self.write(value, sel, copy=True)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self._refuse_if_empty("np.asarray")
        arr = self.read()
        return arr if dtype is None else arr.astype(dtype)

    def __repr__(self) -> str:
        return f"<h5loom.Dataset '{self.path}' shape {self.shape} {self.dtype}>"


class Request:
    """A flush or close that completes later (``File.flush_async``, ``File.close_async``).

    ``done()`` asks without blocking; ``wait()`` is collective (every rank
    waits, in the order of its other collective calls) and raises the
    operation's error on every rank. As a context manager it waits when the
    block ends. Dropping it does not cancel the operation: a flush completes
    at the next collective call on the file, which raises its error; a close
    completes when the request and the file's last handle are gone.
    """

    def __init__(self, request: Any, close_on_error: Any = None) -> None:
        self._request = request
        self._close_on_error = close_on_error  # a close's: for a block left by an exception

    def done(self) -> bool:
        return self._request.test()

    def wait(self) -> None:
        self._request.wait()

    def __enter__(self) -> "Request":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.wait()
        elif self._close_on_error is not None:  # a close, while an exception leaves perhaps this rank alone
            _leave(self.wait, self._close_on_error, exc_type, exc, tb)


class File(Group):
    """An h5loom file, shared by the ranks of ``comm`` (default: all of MPI_COMM_WORLD).

    mode: ``"r"`` read, ``"r+"`` read-write, ``"w"`` create (truncate), ``"w-"``/``"x"``
    create and fail if it exists, ``"a"`` read-write, created if missing.
    engine: a name (``"hdf5"``), a JSON string or a dict; default ``$H5LOOM_ENGINE``, else hdf5.
    """

    def __init__(self, name: Union[str, "os.PathLike[str]"], mode: str = "r", *, comm: Any = None,
                 engine: Union[None, str, Mapping[str, Any]] = None) -> None:
        name = str(name)
        comm_f, config = _comm_handle(comm), _engine_config(engine)
        if mode == "a":
            try:
                core = _core.File.open(name, _MODES["r+"], comm_f, config)
            except NotFoundError:
                # Exclusive: whatever made the open fail, an existing file is never truncated.
                core = _core.File.open(name, _MODES["w-"], comm_f, config)
        elif mode in _MODES:
            core = _core.File.open(name, _MODES[mode], comm_f, config)
        else:
            raise UsageError(f"invalid mode {mode!r} for file '{name}' (use 'r', 'r+', 'w', 'w-', 'x' or 'a')")
        super().__init__(core, None)

    @classmethod
    def _from_core(cls, core: "_core.File") -> "File":
        """Wraps an already open core file (e.g. a Series' file)."""
        f = cls.__new__(cls)
        _Node.__init__(f, core, None)
        return f

    @property
    def filename(self) -> str:
        return self._obj.filename

    @property
    def mode(self) -> str:
        return "r" if self._obj.mode == 0 else "r+"

    @property
    def engine(self) -> str:
        """The engine stack in use, e.g. ``"hdf5"`` or ``"collcheck>hdf5"``."""
        return self._obj.engine

    @property
    def userblock(self) -> int:
        """The size of the user block: bytes at the start of the file that are the
        application's, kept by the engines (as h5py's ``File.userblock_size``); made with
        the engine knob ``userblock``, e.g. ``engine={"engine": "log", "log": {"userblock": 512}}``."""
        return self._obj.userblock

    @property
    def rank(self) -> int:
        return self._obj.rank

    @property
    def size(self) -> int:
        """Number of ranks sharing the file."""
        return self._obj.size

    @property
    def is_open(self) -> bool:
        return self._obj.is_open

    @property
    def pending_writes(self) -> int:
        """Writes this rank made since the last flush point."""
        return self._obj.pending_writes

    def describe(self) -> str:
        """Engine, layout and knobs in effect."""
        return self._obj.describe()

    def flush(self, durable: bool = True) -> None:
        """Collective flush point: every write so far reaches the file.

        ``durable=True`` (the default) also makes it survive a crash (as far as
        the engine's ``sync`` setting goes); ``durable=False`` only makes it
        visible to later reads, which is cheaper for engines that sync.
        """
        self._obj.flush(durable)

    def flush_async(self, durable: bool = True) -> "Request":
        """Collective flush point that returns at once (docs/async.md).

        With the ``async`` wrapper (``engine="async+log"``) the data moves on a
        background thread while the program goes on, and the flush completes at
        ``wait()`` or at the next collective call on the file; with other
        engines it is complete on return. Arrays written with ``copy=False``
        must stay unchanged until it completes.
        """
        return Request(self._obj.flush_async(durable))

    def close(self) -> None:
        """Collective: flush and close. Closing twice is harmless; a close begun
        with ``close_async`` completes here."""
        self._obj.close()

    def close_async(self) -> "Request":
        """Collective close that returns at once (docs/async.md).

        With the ``async`` wrapper the file's data moves on a background
        thread while the program goes on; the close completes, on every rank,
        at the request's ``wait()`` (or at ``close()``), which raises its
        error. Until then the file is closing: any other use raises
        ``UsageError``. With other engines the data moves at ``wait()``.
        """
        return Request(self._obj.close_async(), self._obj.close_on_error)

    def __enter__(self) -> "File":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _leave(self.close, self._obj.close_on_error, exc_type, exc, tb)

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"<h5loom.File '{self.filename}' ({state}, engine {self.engine})>"


def _leave(close: Any, close_on_error: Any, exc_type: Any, exc: Any, tb: Any) -> None:
    """A context manager's exit for a file shared by the ranks: close it - or, while
    an exception leaves this rank (perhaps alone: a collective close would wait
    forever), close_on_error, which closes only if every rank is leaving too."""
    if exc_type is None:
        close()
    else:
        import traceback  # the error is printed if the job must end here
        close_on_error("".join(traceback.format_exception(exc_type, exc, tb)))


# ---- an uncaught exception ends the whole MPI job -----------------------------------


def _abort_job_on_uncaught(exc_type: Any, exc: BaseException, tb: Any) -> None:
    """sys.excepthook: under mpirun with more than one rank, an exception that
    nobody catches ends the job (as ``python -m mpi4py`` does). Without this, the
    rank that raised exits and every other rank waits for it forever in its next
    collective call. The traceback is printed first, by the hook that was there
    before; H5LOOM_ABORT_ON_ERROR=0 leaves only that."""
    _previous_excepthook(exc_type, exc, tb)
    if os.environ.get("H5LOOM_ABORT_ON_ERROR", "1").strip() == "0":
        return
    size = _core.running_world_size()  # 0 when MPI never started: nobody can be waiting
    if size <= 1:
        return
    rank = _core.world_rank_size()[0]
    try:
        sys.stdout.flush()
    except Exception:  # a closed stdout must not stop the abort
        pass
    sys.stderr.write(f"h5loom: uncaught {exc_type.__name__} on rank {rank} of {size}: ending the MPI job "
                     "(MPI_Abort) so that no rank waits for this one forever (H5LOOM_ABORT_ON_ERROR=0 turns "
                     "this off)\n")
    sys.stderr.flush()
    _core.abort_world(1)


if getattr(sys.excepthook, "__name__", "") != _abort_job_on_uncaught.__name__:  # once, even if re-imported
    _previous_excepthook = sys.excepthook
    sys.excepthook = _abort_job_on_uncaught


def __getattr__(name: str) -> Any:
    """``h5loom.profile`` is imported on first use (it needs json and dataclasses,
    which a script that only writes data does not)."""
    if name == "profile":
        import importlib

        return importlib.import_module(".profile", __name__)
    raise AttributeError(f"module 'h5loom' has no attribute '{name}'")
