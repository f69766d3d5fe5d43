"""`h5loom report` (issue 7): conflicts found in a deliberately overlapping
pattern, the Chrome trace export, and the HTML page checked in headless
Chromium (every section and plot present, no script error) with a screenshot."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

import h5loom.profile
from h5loom.report import conflicts, render

MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}

OVERLAP = textwrap.dedent("""
    import sys
    import numpy as np
    from mpi4py import MPI
    import h5loom
    comm = MPI.COMM_WORLD
    overlap = sys.argv[2] == "overlap"
    with h5loom.File(sys.argv[1], "w", comm=comm, engine=sys.argv[3]) as f:
        d = f.create_dataset("d", shape=(100,), dtype="f8")
        lo = 0 if overlap else 50 * comm.rank
        d[lo:lo + 50] = np.full(50, float(comm.rank))   # overlapping: both ranks write [0, 50)
        f.flush()
        mine = (1 - comm.rank) if overlap else comm.rank  # overlapping: rank 1 reads what rank 0 wrote
        d[50 * mine:50 * mine + 50]
""")


def profile_of(tmp_path, pattern, engine="log"):
    script = tmp_path / "overlap.py"
    script.write_text(OVERLAP)
    prof = tmp_path / f"prof-{pattern}"
    env = dict(CLEAN_ENV, H5LOOM_PROFILE=str(prof))
    res = subprocess.run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-x", "H5LOOM_PROFILE", "-n", "2",
                          sys.executable, str(script), str(tmp_path / f"{pattern}.h5"), pattern, engine],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return h5loom.profile.load(prof)


def test_overlapping_writes_are_conflicts(tmp_path):
    prof = profile_of(tmp_path, "overlap")
    counts, found = conflicts(prof, "api")
    # both ranks wrote bytes [0, 400) of d; rank 1 then read bytes rank 0 had written
    assert counts["write-after-write"] == 1 and counts["read-after-write"] == 1, counts
    assert counts["write-after-read"] == 0
    assert {c["kind"] for c in found} == {"write-after-write", "read-after-write"}
    assert all(c["file"].endswith(":/d") and c["from"] == 0 and c["to"] == 400 for c in found)


def test_disjoint_writes_are_not_conflicts(tmp_path):
    prof = profile_of(tmp_path, "disjoint")
    counts, _ = conflicts(prof, "api")
    assert sum(counts.values()) == 0, counts


def test_trace_json_for_perfetto(tmp_path):
    profile_of(tmp_path, "overlap")
    out = subprocess.run([sys.executable, "-m", "h5loom.report", str(tmp_path / "prof-overlap"), "-o",
                          str(tmp_path / "r.html"), "--trace-json", str(tmp_path / "t.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    events = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    calls = [e for e in events if e["ph"] == "X"]
    prof = h5loom.profile.load(tmp_path / "prof-overlap")
    assert len(calls) == len(prof.trace)
    assert {e["pid"] for e in calls} == {0, 1} and all(e["dur"] >= 0 for e in calls)
    assert any(e["name"] == "write" and e["cat"] == "api" and e["args"]["size"] == 400 for e in calls)


def test_report_renders_in_headless_chromium(tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (make installs the Debian package)")
    prof = profile_of(tmp_path, "overlap")
    page = tmp_path / "report.html"
    page.write_text(render(prof))
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html  # offline
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'chrome'}"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    # the page's own check: 8 sections; plots: a histogram per layer (api, engine, posix),
    # the access pattern, the rates, the per-rank bars
    assert 'id="self-check" data-plots="6">OK: 8 sections, 6 plots<' in dom, dom[-600:]
    shot = tmp_path / "report.png"
    subprocess.run([chromium, *flags, "--window-size=1100,3000", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000
