"""Series of steps with particles and block fields, in the openPMD or H5Part layout.

    with h5loom.Series("run.h5", "w", comm=comm, layout="openpmd") as s:
        for n in range(steps):
            with s.write_step(n, time=n * dt) as st:
                st.particles("electrons").write(x=x, y=y, z=z, px=px, id=ids)   # this rank's particles
                st.field("rho", global_shape=(nz, ny, nx), offset=my_offset).write(rho_local, ghost=1)
    with h5loom.Series("run.h5", "r", comm=comm) as s:
        for st in s.steps():
            x = st.particles("electrons")["x"].read()        # or .read_my_share()
            rho = st.field("rho").read(box=(lo, hi), halo=1)

Every call is collective except the writes of particle arrays and field boxes.
A step ends (a flush point) when its ``with`` block ends, at the next
``write_step``, or when the series closes; arrays given to ``write`` are kept
alive by h5loom until then.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._errors import DatatypeError, NotFoundError, SelectionError, UsageError

__all__ = ["Series", "Step", "Particles", "ParticleArray", "Field"]


def _numeric_array(data: Any, what: str, dtype: Any = None) -> np.ndarray:
    """``data`` as a C-contiguous native-endian numeric array (converted to ``dtype``
    only by numpy's safe casts)."""
    arr = np.asarray(data)
    if dtype is not None and arr.dtype != np.dtype(dtype):
        if not np.can_cast(arr.dtype, np.dtype(dtype), casting="safe"):
            raise DatatypeError(f"{what}: cannot store {arr.dtype} data as {np.dtype(dtype)} without losing values")
        arr = arr.astype(dtype)
    if arr.dtype.kind not in "iuf" or arr.dtype.itemsize not in (1, 2, 4, 8) or arr.dtype == np.float16:
        raise DatatypeError(f"{what}: dtype {arr.dtype} is not supported (int8..int64, uint8..uint64, float32, float64)")
    return np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("="), copy=False))


class Series:
    """A file of steps. mode ``"w"`` creates (truncates), ``"a"`` appends (creates if
    missing), ``"r"`` reads; layout (``"openpmd"`` or ``"h5part"``) applies to new files,
    existing files are detected."""

    def __init__(self, name: Any, mode: str = "r", *, comm: Any = None, layout: str = "openpmd",
                 engine: Any = None) -> None:
        from . import _comm_handle, _engine_config  # the same conversions as File

        name = str(name)
        comm_f, config = _comm_handle(comm), _engine_config(engine)
        if mode == "w":
            self._core = _core.Series.create(name, layout, comm_f, config)
        elif mode == "a":
            try:
                self._core = _core.Series.append(name, comm_f, config)
            except NotFoundError:
                self._core = _core.Series.create(name, layout, comm_f, config)
        elif mode == "r":
            self._core = _core.Series.open(name, comm_f, config)
        else:
            raise UsageError(f"invalid mode {mode!r} for series '{name}' (use 'r', 'w' or 'a')")

    @property
    def layout(self) -> str:
        """``"openpmd"`` or ``"h5part"``."""
        return self._core.layout

    @property
    def file(self):
        """The underlying :class:`h5loom.File` (for plain datasets and groups beside the series)."""
        from . import File

        return File._from_core(self._core.file())

    @property
    def attrs(self):
        """File attributes (the layout's own attributes are written for you)."""
        return self.file.attrs

    def write_step(self, n: int, time: float = 0.0, dt: float = 0.0) -> "Step":
        """Start step ``n`` (ending any open step). Use it as a context manager."""
        return Step(self._core.write_step(int(n), float(time), float(dt)))

    def step_numbers(self) -> list[int]:
        """The step numbers in the file, sorted."""
        return list(self._core.steps())

    def steps(self) -> Iterator["Step"]:
        """Iterate over the steps of the file, in order."""
        for n in self.step_numbers():
            yield self.step(n)

    def step(self, n: int) -> "Step":
        return Step(self._core.step(int(n)))

    __getitem__ = step

    def __len__(self) -> int:
        return len(self.step_numbers())

    def close(self) -> None:
        """End any open step and close the file (collective)."""
        self._core.close()

    def __enter__(self) -> "Series":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<h5loom.Series layout {self.layout}>"


class _StepAttributes(Mapping):
    """Step attributes; the layout's own (time, dt, TimeValue, ...) are read-only and hidden."""

    def __init__(self, step: "_core.Step") -> None:
        from . import AttributeManager

        self._step = step
        self._attrs = AttributeManager(step.group())

    def __getitem__(self, name: str) -> Any:
        return self._attrs[name]

    def __setitem__(self, name: str, value: Any) -> None:
        if self._step.is_layout_attribute(name):
            raise UsageError(f"step attribute '{name}' belongs to the layout; set time and dt through write_step")
        self._attrs[name] = value

    def __iter__(self) -> Iterator[str]:
        return iter(self._step.attribute_names())

    def __len__(self) -> int:
        return len(self._step.attribute_names())


class Step:
    """One step: particle species and fields. A context manager that ends the step."""

    def __init__(self, core: "_core.Step") -> None:
        self._core = core

    @property
    def index(self) -> int:
        return self._core.index

    @property
    def time(self) -> float:
        return self._core.time

    @property
    def dt(self) -> float:
        return self._core.dt

    @property
    def attrs(self) -> _StepAttributes:
        return _StepAttributes(self._core)

    def particles(self, species: str) -> "Particles":
        """A particle species (h5part files hold one, under any name)."""
        return Particles(self._core.particles(species))

    def particle_species(self) -> list[str]:
        return list(self._core.particle_species())

    def fields(self) -> list[str]:
        return list(self._core.fields())

    def field(self, name: str, global_shape: Optional[Sequence[int]] = None, offset: Optional[Sequence[int]] = None,
              dtype: Any = "f8", components: int = 1, origin: Optional[Sequence[float]] = None,
              spacing: Optional[Sequence[float]] = None, axis_labels: Optional[Sequence[str]] = None,
              unit_si: float = 1.0) -> "Field":
        """With ``global_shape``: create a field (collective) — arrays are C-ordered,
        a 3-D field is [z][y][x]; origin, spacing and axis_labels follow that order.
        ``offset`` is this rank's box start, used by ``write``. Without: open one for reading."""
        if global_shape is None:
            return Field(self._core.open_field(name), offset)
        from . import _dtype_name

        core = self._core.create_field(name, [int(n) for n in global_shape], int(components),
                                       _dtype_name(dtype, f"field '{name}'"), [float(v) for v in origin or []],
                                       [float(v) for v in spacing or []], list(axis_labels or []), float(unit_si))
        return Field(core, offset)

    def close(self) -> None:
        """End the step (collective flush point)."""
        self._core.close()

    def __enter__(self) -> "Step":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<h5loom.Step {self.index} time {self.time}>"


class Particles:
    """One particle species of a step."""

    def __init__(self, core: "_core.ParticleSpecies") -> None:
        self._core = core

    @property
    def name(self) -> str:
        return self._core.name

    @property
    def offset(self) -> int:
        """This rank's first global index (after a write)."""
        return self._core.offset

    @property
    def local_count(self) -> int:
        return self._core.local_count

    @property
    def global_count(self) -> int:
        return self._core.global_count

    def write(self, **arrays: Any) -> None:
        """Write this rank's particles: 1-D arrays of equal length, any numeric type
        (a rank with none passes empty arrays). Global size and offsets are computed
        for you. Collective; every rank names the same arrays in the same order.
        ``x, y, z`` and ``px, py, pz`` become openPMD's position and momentum."""
        self.write_arrays(arrays)

    def write_arrays(self, arrays: Mapping[str, Any]) -> None:
        """Like :meth:`write`, for names that are not Python identifiers ("E/x")."""
        prepared = {name: _numeric_array(a, f"particle array '{name}'").reshape(-1) if np.ndim(a) <= 1 else None
                    for name, a in arrays.items()}
        for name, a in prepared.items():
            if a is None:
                raise SelectionError(f"particle array '{name}' must be 1-D, not of shape {np.shape(arrays[name])}")
        sizes = {len(a) for a in prepared.values()}
        if len(sizes) > 1:
            raise SelectionError(f"particle arrays of species '{self.name}' differ in length: "
                                 + ", ".join(f"{n}={len(a)}" for n, a in prepared.items()))
        self._core.set_local_count(sizes.pop() if sizes else 0)
        for name, a in prepared.items():
            self._core.write(name, a)

    def arrays(self) -> list[str]:
        """Names of the particle arrays (x, px, id, ...)."""
        return list(self._core.arrays())

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays())

    def __contains__(self, name: object) -> bool:
        return name in self.arrays()

    def __getitem__(self, name: str) -> "ParticleArray":
        return ParticleArray(self._core, name)

    def my_share(self) -> Tuple[int, int]:
        """[begin, end) of an even split of the particles over the reading ranks."""
        return tuple(self._core.my_share())


class ParticleArray:
    """One particle array (e.g. ``x``) of a species; every read is collective."""

    def __init__(self, species: "_core.ParticleSpecies", name: str) -> None:
        self._species = species
        self.name = name

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._species.dtype(self.name))

    def __len__(self) -> int:
        return self._species.global_count

    def read(self) -> np.ndarray:
        """The whole array."""
        return self.read_range(0, len(self))

    def read_range(self, begin: int, end: int) -> np.ndarray:
        out = np.empty(max(0, end - begin), dtype=self.dtype)
        self._species.read_range(self.name, int(begin), int(end), out)
        return out

    def read_indices(self, indices: Sequence[int]) -> np.ndarray:
        """Elements at any indices (any order, repeats allowed)."""
        idx = [int(i) for i in np.asarray(indices, dtype=np.int64).reshape(-1)]
        if any(i < 0 for i in idx):
            raise SelectionError(f"negative index in a read of particle array '{self.name}'")
        out = np.empty(len(idx), dtype=self.dtype)
        self._species.read_indices(self.name, idx, out)
        return out

    def read_my_share(self) -> np.ndarray:
        """An even split over the reading ranks, whatever the number of writers was."""
        b, e = self._species.my_share()
        return self.read_range(b, e)

    def __getitem__(self, key: Union[slice, Sequence[int]]) -> np.ndarray:
        if isinstance(key, slice):
            b, e, s = key.indices(len(self))
            if s != 1:
                return self.read_indices(range(b, e, s))
            return self.read_range(b, max(b, e))
        return self.read_indices(key)


class Field:
    """A block field of a step (scalar, or 3 components)."""

    def __init__(self, core: "_core.Field", offset: Optional[Sequence[int]] = None) -> None:
        self._core = core
        self._offset = None if offset is None else [int(o) for o in offset]

    name = property(lambda self: self._core.name)
    shape = property(lambda self: tuple(self._core.shape), doc="The global shape.")
    components = property(lambda self: self._core.components)
    dtype = property(lambda self: np.dtype(self._core.dtype))
    origin = property(lambda self: tuple(self._core.origin))
    spacing = property(lambda self: tuple(self._core.spacing))

    def write(self, local: Any, ghost: int = 0, offset: Optional[Sequence[int]] = None, component: int = 0) -> None:
        """Write this rank's box: ``local`` is the box plus ``ghost`` cells on every side
        (dropped); ``offset`` (or the one given to ``field()``) is where the box starts.
        For a vector field pass ``component``, or a tuple of 3 arrays."""
        if isinstance(local, (tuple, list)) and self.components == 3 and len(local) == 3:
            for c, part in enumerate(local):
                self.write(part, ghost, offset, c)
            return
        at = offset if offset is not None else self._offset
        if at is None:
            raise UsageError(f"field '{self.name}': give the box offset to field() or write()")
        arr = _numeric_array(local, f"field '{self.name}'", dtype=self.dtype)
        if arr.ndim != len(self.shape):
            raise SelectionError(f"field '{self.name}' has {len(self.shape)} dimensions, the local array {arr.ndim}")
        self._core.write(arr, [int(o) for o in at], int(ghost), int(component))

    def read(self, box: Optional[Tuple[Sequence[int], Sequence[int]]] = None, halo: int = 0, fill: Any = 0,
             component: int = 0) -> np.ndarray:
        """Read the box ``(lo, hi)`` (hi exclusive; default: the whole field) plus ``halo``
        cells on every side, ``fill`` outside the domain. Collective; a rank that needs
        nothing passes an empty box such as ``((0, 0, 0), (0, 0, 0))``."""
        lo, hi = (tuple(0 for _ in self.shape), self.shape) if box is None else box
        count = [int(h) - int(l) for l, h in zip(lo, hi)]
        if len(count) != len(self.shape) or any(c < 0 for c in count):
            raise SelectionError(f"field '{self.name}': invalid box {box!r} for shape {self.shape}")
        empty = any(c == 0 for c in count)
        out = np.empty((0,) if empty else tuple(c + 2 * halo for c in count), dtype=self.dtype)
        self._core.read(out, [int(l) for l in lo], count, int(halo), np.array([fill], dtype=self.dtype),
                        int(component))
        return out

    def __repr__(self) -> str:
        return f"<h5loom.Field '{self.name}' shape {self.shape} {self.dtype} components {self.components}>"
