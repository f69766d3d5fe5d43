"""Series written by h5loom (tests/tools/write_series.cpp, 1, 2 and 4 ranks) read
by independent readers: openPMD-api for the openpmd layout (in its own process:
its wheel bundles its own HDF5), h5py for the H5hut conventions of the h5part layout."""
import json
import os
import pathlib
import subprocess
import sys

import h5py
import numpy as np
import pytest

BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()
MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")


def write_series(path, layout, ranks):
    subprocess.run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks),
                    str(BUILD / "tests" / "write_series"), str(path), layout], check=True, timeout=300)


def expected(ranks, step):
    counts = [r + 2 for r in range(ranks)]
    n = sum(counts)
    ids = np.arange(n)
    nx = 2 * ranks
    z, y, x = np.meshgrid(np.arange(2), np.arange(3), np.arange(nx), indexing="ij")
    rho = 100.0 * z + 10 * y + x
    return ids, ids + 0.5 * step, rho


OPENPMD_READER = r"""
import json, sys
import openpmd_api as io
s = io.Series(sys.argv[1], io.Access.read_only)
out = {"openPMD": s.openPMD, "iterations": [int(i) for i in s.iterations], "steps": {}}
for i in s.iterations:
    it = s.iterations[i]
    e = it.particles["electrons"]
    x = e["position"]["x"].load_chunk()
    px = e["momentum"]["x"].load_chunk()
    ids = e["id"][io.Mesh_Record_Component.SCALAR].load_chunk()
    rho = it.meshes["rho"][io.Mesh_Record_Component.SCALAR].load_chunk()
    Ez = it.meshes["E"]["z"].load_chunk()
    s.flush()
    out["steps"][str(i)] = {
        "time": it.time, "dt": it.dt, "x": x.tolist(), "px": px.tolist(), "id": ids.tolist(),
        "rho": rho.tolist(), "Ez": Ez.tolist(),
        "spacing": list(it.meshes["rho"].grid_spacing), "offset": list(it.meshes["rho"].grid_global_offset),
        "labels": list(it.meshes["rho"].axis_labels), "geometry": str(it.meshes["rho"].geometry),
        "position_unit_dimension": [float(v) for v in e["position"].unit_dimension],
    }
print(json.dumps(out))
"""


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_openpmd_api_reads_the_openpmd_layout(tmp_path, ranks):
    path = tmp_path / "series.h5"
    write_series(path, "openpmd", ranks)
    res = subprocess.run([sys.executable, "-c", OPENPMD_READER, str(path)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["openPMD"] == "1.1.0" and got["iterations"] == [0, 1]
    for step in (0, 1):
        s = got["steps"][str(step)]
        ids, x, rho = expected(ranks, step)
        assert s["time"] == 0.5 * step and s["dt"] == 0.5
        np.testing.assert_array_equal(s["id"], ids)
        np.testing.assert_array_equal(s["x"], x)
        np.testing.assert_array_equal(s["px"], -np.ones(len(ids)))
        np.testing.assert_array_equal(s["rho"], rho)
        np.testing.assert_array_equal(s["Ez"], rho + 2000)
        assert s["spacing"] == [1.0, 2.0, 3.0] and s["offset"] == [0.0, 0.0, 10.0]
        assert s["labels"] == ["z", "y", "x"] and "cartesian" in s["geometry"]
        assert s["position_unit_dimension"][0] == 1.0


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_h5part_layout_follows_h5hut_conventions(tmp_path, ranks):
    path = tmp_path / "series.h5"
    write_series(path, "h5part", ranks)
    with h5py.File(path, "r") as f:
        steps = sorted(k for k in f if k.startswith("Step#"))
        assert steps == ["Step#0", "Step#1"]  # numbered from 0, no gaps
        for step in (0, 1):
            g = f[f"Step#{step}"]
            ids, x, rho = expected(ranks, step)
            assert g.attrs["TimeValue"] == 0.5 * step
            np.testing.assert_array_equal(g["x"][...], x)   # particle arrays directly in the step group
            np.testing.assert_array_equal(g["id"][...], ids)
            np.testing.assert_array_equal(g["px"][...], -np.ones(len(ids)))
            np.testing.assert_array_equal(g["Block/rho/0"][...], rho)  # stored (k, j, i)
            for c in range(3):
                np.testing.assert_array_equal(g[f"Block/E/{c}"][...], rho + 1000 * c)
            np.testing.assert_array_equal(g["Block/rho"].attrs["__Spacing__"], [3.0, 2.0, 1.0])  # (x, y, z)
            np.testing.assert_array_equal(g["Block/rho"].attrs["__Origin__"], [10.0, 0.0, 0.0])
