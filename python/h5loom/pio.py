"""PIO's distributed arrays (docs/pio.md): a decomposition says which global
elements each rank holds; a rearrangement moves them to a few I/O tasks, which
write them into an h5loom dataset (and back)::

    d = h5loom.pio.Decomposition.from_file("piodecomp.dat", comm=comm)   # or from_map(shape, map)
    r = h5loom.pio.Rearrangement(d, num_iotasks=4, stride=2, rearranger="box")
    r.write(f["T"], local, frame=3)        # local: this rank's values, in map order
    back = r.read(f["T"], frame=3)         # a numpy array of the dataset's dtype
"""
from typing import Any, Sequence

import numpy as np

from . import _core

__all__ = ["Decomposition", "Rearrangement"]


class Decomposition:
    """The global shape (C order) and this rank's global offsets (0-based,
    -1 for a hole). Collective to make."""

    def __init__(self, core: Any) -> None:
        self._core = core

    @classmethod
    def from_map(cls, shape: Sequence[int], map: Any, base: int = 0, comm: Any = None) -> "Decomposition":
        """``map``: this rank's offsets counted from ``base`` - 0 (holes -1) or 1 as
        PIO's Fortran maps (holes 0)."""
        from . import _comm_handle

        offsets = np.ascontiguousarray(map, dtype=np.int64).reshape(-1)
        return cls(_core.Decomposition.from_map([int(n) for n in shape], offsets, int(base), _comm_handle(comm)))

    @classmethod
    def from_file(cls, path: Any, comm: Any = None) -> "Decomposition":
        """A PIO "version 2001" map file; task t goes to rank t % size."""
        from . import _comm_handle

        return cls(_core.Decomposition.from_file(str(path), _comm_handle(comm)))

    @property
    def shape(self) -> tuple:
        return tuple(self._core.shape)

    @property
    def map(self) -> np.ndarray:
        """This rank's offsets, 0-based, -1 for holes."""
        return np.asarray(self._core.map, dtype=np.int64)

    def __len__(self) -> int:
        return self._core.local_size

    def __repr__(self) -> str:
        return f"<h5loom.pio.Decomposition {self.shape}, {len(self)} elements here>"


class Rearrangement:
    """How a decomposition's elements reach the I/O tasks: ``rearranger`` "box"
    (one slab of whole rows per I/O task) or "subset" (ranks in contiguous groups
    per I/O task); ``num_iotasks`` I/O tasks ``stride`` ranks apart from ``base``.
    Collective to make."""

    def __init__(self, decomposition: Decomposition, num_iotasks: int = 1, stride: int = 1, base: int = 0,
                 rearranger: str = "box") -> None:
        self._core = _core.Rearrangement(decomposition._core, int(num_iotasks), int(stride), int(base), str(rearranger))

    @property
    def is_io_task(self) -> bool:
        return self._core.is_io_task

    def write(self, dataset: Any, local: Any, frame: int = 0) -> None:
        """Collective: this rank's values (in map order; converted to the dataset's
        dtype) into ``dataset`` - of the decomposition's shape, or with one more
        leading dimension whose index ``frame`` is written."""
        data = np.ascontiguousarray(local, dtype=dataset.dtype).reshape(-1)
        self._core.write(dataset._obj, data, int(frame))

    def read(self, dataset: Any, frame: int = 0) -> np.ndarray:
        """Collective: this rank's values from ``dataset`` (holes: its fill value),
        a new array of the dataset's dtype."""
        out = np.empty(self._core.local_size, dtype=dataset.dtype)
        self._core.read(dataset._obj, out, int(frame))
        return out
