"""netCDF-4 files through h5loom's engines (docs/netcdf.md): netCDF's model -
dimensions, variables over them, attributes, fill values, a record dimension -
in files that ncdump, netCDF-C, netCDF4-python and xarray read::

    import h5loom.netcdf as nc
    with nc.File("out.nc", "w", comm=comm, engine="log") as f:     # define mode
        f.define_dimension("time", None)                            # None: unlimited
        f.define_dimension("lat", 4)
        t = f.define_variable("T", "f4", ("time", "lat"), fill_value=-999.0)
        t.attrs["units"] = "K"
        f.attrs["title"] = "run 1"
        f.end_define()                                              # data mode
        f.set_records(2)                                            # collective
        t[0, rank] = 280.0                                          # each rank its part
    with nc.File("out.nc") as f:
        f.variables["T"][:]                                         # collective read

Every call is collective except writes (``var[...] = x``, ``var.write``).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._attributes import AttributeManager
from ._dtypes import _dtype_name, _np_dtype
from ._errors import SelectionError, UsageError
from ._values import _selection_for

__all__ = ["File", "Variable", "Dimension", "UNLIMITED"]

UNLIMITED = None  # define_dimension(name, UNLIMITED): the record dimension


class Dimension(NamedTuple):
    name: str
    size: int  # the records so far, for the unlimited one
    unlimited: bool
    id: int


class Attributes(AttributeManager):
    """A file's or variable's attributes as a dict, in netCDF's order: numbers
    (a single one reads back as a numpy scalar), text, lists of strings."""

    def __getitem__(self, name: str) -> Any:
        value = super().__getitem__(name)
        if isinstance(value, np.ndarray) and value.shape == (1,):
            return value[0]
        return value

    def keys(self, order: str = "creation") -> list:  # type: ignore[override]
        return list(self._obj.attribute_names())


def _box(key: Any, shape: Tuple[int, ...], where: str) -> Tuple[list, list, Tuple[int, ...]]:
    """start, count and the result's shape for a basic index (steps of 1)."""
    sel, out_shape = _selection_for(key, shape, where)
    if sel.kind == "all":
        return [], [], tuple(shape)
    if sel.kind == "none":
        return [0] * len(shape), [0] * len(shape), tuple(out_shape)
    if any(s != 1 for s in sel.stride) or any(b != 1 for b in sel.block):
        raise SelectionError(f"{where}: netCDF variables are read and written in boxes (steps of 1), not {key!r}")
    return list(sel.start), list(sel.count), tuple(out_shape)


class Variable:
    """A netCDF variable: ``dtype``, ``dimensions`` (names), ``shape``, ``attrs``;
    ``var[...] = x`` writes this rank's box (copied at once), ``var[...]`` reads
    (collective: every rank indexes, each its own box)."""

    def __init__(self, core: Any, file: "File") -> None:
        self._core = core
        self._file = file

    @property
    def name(self) -> str:
        return self._core.name

    @property
    def dtype(self) -> np.dtype:
        return _np_dtype(self._core.dtype)

    @property
    def dimensions(self) -> Tuple[str, ...]:
        return tuple(self._core.dimensions)

    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._core.shape)

    @property
    def is_record(self) -> bool:
        return self._core.is_record

    @property
    def attrs(self) -> Attributes:
        return Attributes(self._core)

    @property
    def fill_value(self) -> Any:
        """_FillValue, or netCDF's default fill for the type."""
        return np.frombuffer(self._core.fill_value, dtype=self.dtype)[0]

    def write(self, data: Any, start: Sequence[int] = (), count: Sequence[int] = ()) -> None:
        """This rank's box [start, start+count) (both empty: the whole variable);
        numbers convert as netCDF converts them (out of range: DatatypeError)."""
        arr = np.asarray(data)
        if arr.dtype.kind not in "iuf":
            arr = arr.astype(self.dtype)
        self._core.write([int(s) for s in start], [int(c) for c in count], np.ascontiguousarray(arr).reshape(-1))

    def read(self, start: Sequence[int] = (), count: Sequence[int] = (), dtype: Any = None) -> np.ndarray:
        """Collective: this rank's box, as ``dtype`` (default: the variable's)."""
        shape = tuple(int(c) for c in count) if count else self.shape
        out = np.empty(shape, dtype=self.dtype if dtype is None else np.dtype(dtype))
        self._core.read([int(s) for s in start], [int(c) for c in count], out.reshape(-1))
        return out

    def __setitem__(self, key: Any, value: Any) -> None:
        start, count, out_shape = _box(key, self.shape, f"variable '{self.name}'")
        arr = np.asarray(value)
        n = int(np.prod(count)) if count else int(np.prod(self.shape))
        if arr.size != n:
            try:
                arr = np.broadcast_to(arr, out_shape)
            except ValueError:
                raise SelectionError(f"cannot write data of shape {arr.shape} to {key!r} of variable "
                                     f"'{self.name}' (shape {out_shape})") from None
        self.write(arr, start, count)

    def __getitem__(self, key: Any) -> np.ndarray:
        start, count, out_shape = _box(key, self.shape, f"variable '{self.name}'")
        result = self.read(start, count).reshape(out_shape)
        return result[()] if result.ndim == 0 else result

    def write_darray(self, rearrangement: Any, local: Any, frame: int = 0) -> None:
        """Collective (PIO's write_darray): this rank's values in its decomposition's
        map order (converted as netCDF converts), into record ``frame`` (the records
        grow to frame+1 if needed) or, for a variable without the record dimension,
        the whole variable. Written at the next flush point; one comes when the
        file's ``darray_buffer_limit`` bytes have been buffered."""
        data = np.asarray(local)
        if data.dtype.kind not in "iuf":
            data = data.astype(self.dtype)
        self._file._core.write_darray(self._core, rearrangement._core, int(frame), np.ascontiguousarray(data).reshape(-1))

    def read_darray(self, rearrangement: Any, frame: int = 0, dtype: Any = None) -> np.ndarray:
        """Collective: this rank's values of record ``frame`` (holes: the fill value)."""
        out = np.empty(rearrangement._core.local_size, dtype=self.dtype if dtype is None else np.dtype(dtype))
        self._file._core.read_darray(self._core, rearrangement._core, int(frame), out)
        return out

    def __repr__(self) -> str:
        dims = ", ".join(self.dimensions)
        return f"<h5loom.netcdf.Variable {self.dtype} {self.name}({dims}) shape {self.shape}>"


class File:
    """A netCDF-4 file: ``mode`` "w" (new, in define mode), "r" or "a" (existing,
    in data mode; "a" may redefine). ``comm``: an mpi4py communicator (default:
    every rank); ``engine``: any engine that yields HDF5 files (hdf5, log, async+...)."""

    def __init__(self, path: Any, mode: str = "r", comm: Any = None, engine: Any = None) -> None:
        if mode not in ("r", "a", "w"):
            raise UsageError(f"netCDF file '{path}': mode {mode!r} is not 'r', 'a' or 'w'")
        from . import _comm_handle, _engine_config  # (defined after h5loom imports this module)

        handle, config = _comm_handle(comm), _engine_config(engine)
        if mode == "w":
            self._core = _core.NcFile.create(str(path), handle, config)
        else:
            self._core = _core.NcFile.open(str(path), mode == "a", handle, config)

    # ---- define mode ----
    def define_dimension(self, name: str, size: Optional[int]) -> Dimension:
        """``size`` None (UNLIMITED): the record dimension."""
        return Dimension(*self._core.define_dimension(name, 0 if size is None else int(size)))

    def define_variable(self, name: str, dtype: Any, dimensions: Sequence[str] = (), fill_value: Any = None,
                        chunks: Optional[Sequence[int]] = None, deflate: int = 0, shuffle: bool = False) -> Variable:
        """A variable of a numeric ``dtype`` over ``dimensions`` (slowest first);
        ``fill_value``: _FillValue (default: netCDF's for the type); ``deflate`` 1-9
        and ``shuffle`` compress it."""
        where = f"variable '{name}'"
        canonical = _dtype_name(np.dtype(dtype), where)
        core = self._core.define_variable(name, canonical, list(dimensions), [int(c) for c in (chunks or ())],
                                          int(deflate), bool(shuffle))
        var = Variable(core, self)
        if fill_value is not None:
            core.set_fill_value(np.array([fill_value], dtype=var.dtype))
        return var

    def end_define(self) -> None:
        """Collective: writes the definitions; data mode."""
        self._core.end_define()

    def redefine(self) -> None:
        self._core.redefine()

    @property
    def in_define_mode(self) -> bool:
        return self._core.in_define_mode

    # ---- what the file holds ----
    @property
    def attrs(self) -> Attributes:
        return Attributes(self._core)

    @property
    def dimensions(self) -> Dict[str, Dimension]:
        return {d[0]: Dimension(*d) for d in self._core.dimensions()}

    @property
    def variables(self) -> Dict[str, Variable]:
        """In definition order."""
        return {v.name: Variable(v, self) for v in self._core.variables()}

    def __getitem__(self, name: str) -> Variable:
        for v in self._core.variables():
            if v.name == name:
                return Variable(v, self)
        raise KeyError(f"no variable '{name}' in netCDF file '{self._core.filename}'")

    # ---- data mode ----
    @property
    def records(self) -> int:
        return self._core.records

    @property
    def darray_buffer_limit(self) -> int:
        """Bytes of darray data (whole records, over all ranks) written between flush points."""
        return self._core.darray_buffer_limit

    @darray_buffer_limit.setter
    def darray_buffer_limit(self, n: int) -> None:
        self._core.darray_buffer_limit = int(n)

    def set_records(self, n: int) -> None:
        """Collective: grows every record variable to ``n`` records."""
        self._core.set_records(int(n))

    def sync(self) -> None:
        self._core.sync()

    def close(self) -> None:
        """Collective: leaves define mode if in it, then closes."""
        self._core.close()

    def __enter__(self) -> "File":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        from . import _leave

        _leave(self.close, self._core.close_on_error, exc_type, exc, tb)

    def __repr__(self) -> str:
        state = "open" if self._core.is_open else "closed"
        return f"<h5loom.netcdf.File '{self._core.filename}' ({state}, engine {self._core.engine})>"
