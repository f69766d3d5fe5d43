"""h5loom.pio from Python (docs/pio.md): the F-case map and a 1-based map with
holes through both rearrangers, numpy in and out, at 1 rank (package suite),
2 (python-package-np2) and 4 ranks (python-series-np4)."""
import pathlib

import numpy as np
import pytest

import h5loom

SOURCE = pathlib.Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("rearranger", ["box", "subset"])
def test_fcase_map_round_trips(shared_path, comm, rearranger):
    d = h5loom.pio.Decomposition.from_file(SOURCE / "bench/e3sm/f_case_866x72_16p.dat", comm=comm)
    assert d.shape == (72, 866)
    held = d.map >= 0
    r = h5loom.pio.Rearrangement(d, num_iotasks=max(1, comm.size // 2), stride=2 if comm.size > 1 else 1,
                                 rearranger=rearranger)
    path = shared_path / f"pio-{rearranger}.h5"
    with h5loom.File(path, "w", comm=comm) as f:
        t = f.create_dataset("T", shape=(2, 72, 866), dtype="f4", fillvalue=-1)
        for frame in range(2):
            r.write(t, np.where(held, d.map * 0.5 + frame, 0), frame=frame)   # float64 in, converted
    with h5loom.File(path, "r", comm=comm) as f:
        for frame in range(2):
            back = r.read(f["T"], frame=frame)
            assert back.dtype == np.float32 and back.shape == (len(d),)
            np.testing.assert_array_equal(back, np.where(held, (d.map * 0.5 + frame).astype("f4"), -1))
        whole = f["T"][1].reshape(-1)
        np.testing.assert_array_equal(whole, (np.arange(72 * 866) * 0.5 + 1).astype("f4"))  # the F case holds all


def test_one_based_maps_with_holes_and_errors(shared_path, comm):
    n = comm.size
    mine = np.array([0, comm.rank + 1, 0, n + comm.rank + 1])   # 1-based; 0: holes
    d = h5loom.pio.Decomposition.from_map((2 * n + 1,), mine, base=1, comm=comm)
    np.testing.assert_array_equal(d.map, [-1, comm.rank, -1, n + comm.rank])
    r = h5loom.pio.Rearrangement(d, num_iotasks=comm.size, rearranger="subset")
    with h5loom.File(shared_path / "pio-small.h5", "w", comm=comm) as f:
        v = f.create_dataset("v", shape=(2 * n + 1,), dtype="i4", fillvalue=-9)
        r.write(v, [7, 10 * comm.rank, 7, 10 * comm.rank + 1])
        with pytest.raises(h5loom.SelectionError, match="elements given"):
            r.write(v, [1, 2, 3])
        with pytest.raises(h5loom.SelectionError):
            r.write(v, [1, 2, 3, 4], frame=1)     # no frame dimension
    with h5loom.File(shared_path / "pio-small.h5", "r", comm=comm) as f:
        np.testing.assert_array_equal(f["v"][...], list(range(0, 10 * n, 10)) + list(range(1, 10 * n, 10)) + [-9])
        np.testing.assert_array_equal(r.read(f["v"]), [-9, 10 * comm.rank, -9, 10 * comm.rank + 1])
    with pytest.raises(h5loom.SelectionError, match="outside"):
        h5loom.pio.Decomposition.from_map((4,), [5], comm=comm)
    with pytest.raises(h5loom.UsageError, match="neither 'box' nor 'subset'"):
        h5loom.pio.Rearrangement(d, rearranger="fancy")
