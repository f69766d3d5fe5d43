"""Load an h5loom profile (the directory named by ``H5LOOM_PROFILE``).

    prof = h5loom.profile.load("prof/")
    prof.trace                      # numpy structured array, one row per call, sorted by start
    prof.trace[prof.trace["layer"] == "posix"]
    prof.counters                   # list of dicts: rank, layer, file, reads, writes, ... write_sizes
    prof.counters_for(layer="api")  # the same, filtered
    prof.histogram("write", layer="engine")   # Darshan's 10 access-size buckets, summed over ranks

The format is specified in docs/formats/profile.md.
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

__all__ = ["Profile", "load", "RECORD_DTYPE", "BUCKETS"]

# One trace record on disk: 40 bytes, little-endian.
RECORD_DTYPE = np.dtype([("start", "<i8"), ("end", "<i8"), ("layer", "u1"), ("kind", "u1"), ("name", "<u2"),
                         ("file", "<u4"), ("offset", "<u8"), ("size", "<u8")])
LAYERS = ("api", "engine", "posix", "mpiio")
KINDS = ("read", "write", "meta")
BUCKETS = ("0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M", "100M-1G", "1G+")


@dataclass
class Profile:
    directory: pathlib.Path
    ranks: List[int]
    trace: np.ndarray                      # fields: start, end (unix ns), rank, layer, kind, name, file, offset, size
    counters: List[Dict[str, Any]]
    meta: Dict[int, Dict[str, Any]] = field(default_factory=dict)

    def counters_for(self, layer: Optional[str] = None, file: Optional[str] = None,
                     rank: Optional[int] = None) -> List[Dict[str, Any]]:
        return [c for c in self.counters if (layer is None or c["layer"] == layer)
                and (file is None or c["file"] == file) and (rank is None or c["rank"] == rank)]

    def histogram(self, kind: str, layer: str, file: Optional[str] = None) -> np.ndarray:
        """Access sizes of ``kind`` ("read" or "write") in Darshan's buckets, summed over ranks (and files)."""
        key = {"read": "read_sizes", "write": "write_sizes"}[kind]
        total = np.zeros(len(BUCKETS), dtype=np.int64)
        for c in self.counters_for(layer=layer, file=file):
            total += np.asarray(c[key], dtype=np.int64)
        return total

    @property
    def duration_s(self) -> float:
        if len(self.trace) == 0:
            return 0.0
        return float(self.trace["end"].max() - self.trace["start"].min()) * 1e-9


def load(directory: Any) -> Profile:
    """Reads every rank's files of a profile directory."""
    d = pathlib.Path(directory)
    metas = sorted(d.glob("rank-*.json"))
    if not metas:
        raise FileNotFoundError(f"no h5loom profile in '{d}' (no rank-*.json files)")
    parts, counters, meta, ranks = [], [], {}, []
    out_dtype = np.dtype([("start", "<i8"), ("end", "<i8"), ("rank", "<i4"), ("layer", "U6"), ("kind", "U5"),
                          ("name", "U32"), ("file", "U256"), ("offset", "<u8"), ("size", "<u8")])
    for path in metas:
        m = json.loads(path.read_text())
        if m.get("format") != "h5loom-profile" or m.get("version") != 1:
            raise ValueError(f"{path}: not an h5loom profile of version 1")
        rank = int(m["rank"])
        ranks.append(rank)
        meta[rank] = m
        for c in m["counters"]:
            counters.append(dict(c, rank=rank))
        raw = np.fromfile(path.with_suffix(".trace"), dtype=RECORD_DTYPE) if path.with_suffix(".trace").exists() \
            else np.zeros(0, dtype=RECORD_DTYPE)
        if len(raw) < m["events"]:
            raise ValueError(f"{path.with_suffix('.trace')}: {len(raw)} records, the counters say {m['events']}")
        raw = raw[:m["events"]]  # records appended after the counters were last written are not counted yet
        t = np.zeros(len(raw), dtype=out_dtype)
        for name in ("start", "end", "offset", "size"):
            t[name] = raw[name]
        t["rank"] = rank
        names, files = np.asarray(m["names"] or [""]), np.asarray(m["files"] or [""])
        t["layer"] = np.asarray(LAYERS)[raw["layer"]]
        t["kind"] = np.asarray(KINDS)[raw["kind"]]
        t["name"] = names[raw["name"]]
        t["file"] = files[raw["file"]]
        parts.append(t)
    trace = np.concatenate(parts) if parts else np.zeros(0, dtype=out_dtype)
    trace = trace[np.argsort(trace["start"], kind="stable")]
    return Profile(directory=d, ranks=sorted(ranks), trace=trace, counters=counters, meta=meta)
