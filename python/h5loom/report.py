"""`h5loom report DIR -o report.html`: one self-contained HTML page from a
profile (H5LOOM_PROFILE=DIR): job summary, counters per layer, access-size
histograms, the access pattern, the aggregate rates, per-rank time bars, the
top operations and conflicting accesses. Inline SVG, no external resources:
it opens offline. `--trace-json out.json` writes the trace in Chrome's
trace-event format (Perfetto, chrome://tracing).

    python -m h5loom.report prof/ -o report.html [--trace-json trace.json]
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections import defaultdict
from typing import Dict, List, Sequence, Tuple

import numpy as np

from .profile import BUCKETS, LAYERS, Profile, load

COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf"]


def _esc(x) -> str:
    return html.escape(str(x))


def _mib(b) -> str:
    return f"{b / 1048576:.2f} MiB"


# ---- conflicts ------------------------------------------------------------------

def conflicts(prof: Profile, layer: str = "posix", limit: int = 50) -> Tuple[Dict[str, int], List[dict]]:
    """Overlapping byte ranges of one file accessed by different ranks, at least
    one a write. Classified by time order: write then write (WAW), write then
    read (RAW), read then write (WAR)."""
    t = prof.trace
    sel = t[(t["layer"] == layer) & (t["kind"] != "meta") & (t["size"] > 0)]
    # Accesses conflict only within one session: between a collective create or
    # open of a file and the next one (a file created again is a new file).
    opens = t[(t["layer"] == "api") & ((t["name"] == "create") | (t["name"] == "open"))]
    lead = opens[opens["rank"] == opens["rank"].min()] if len(opens) else opens
    boundaries = np.sort(lead["start"])
    session = np.searchsorted(boundaries, sel["start"], side="right")
    counts = {"write-after-write": 0, "read-after-write": 0, "write-after-read": 0}
    found: List[dict] = []
    keys = sorted({(str(f), int(k)) for f, k in zip(sel["file"], session)})
    for file, sid in keys:
        acc = sel[(sel["file"] == file) & (session == sid)]
        acc = acc[np.argsort(acc["offset"], kind="stable")]
        active: List[int] = []  # indices into acc whose ranges may still overlap
        for i in range(len(acc)):
            a = acc[i]
            active = [j for j in active if acc[j]["offset"] + acc[j]["size"] > a["offset"]]
            for j in active:
                b = acc[j]
                if b["rank"] == a["rank"] or (a["kind"] == "read" and b["kind"] == "read"):
                    continue
                first, second = (a, b) if a["start"] <= b["start"] else (b, a)
                kind = {("write", "write"): "write-after-write", ("write", "read"): "read-after-write",
                        ("read", "write"): "write-after-read"}[(str(first["kind"]), str(second["kind"]))]
                counts[kind] += 1
                if len(found) < limit:
                    lo = max(a["offset"], b["offset"])
                    hi = min(a["offset"] + a["size"], b["offset"] + b["size"])
                    found.append({"kind": kind, "file": str(file), "from": int(lo), "to": int(hi),
                                  "first": f"rank {first['rank']} {first['name']}",
                                  "second": f"rank {second['rank']} {second['name']}"})
            active.append(i)
    return counts, found


# ---- SVG plots -------------------------------------------------------------------

def _svg(width, height, body, title) -> str:
    return (f'<svg class="plot" data-plot="{_esc(title)}" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg" role="img">'
            f'<title>{_esc(title)}</title>{body}</svg>')


def _axes(w, h, m, xlabel, ylabel, xmax, ymax, xfmt=lambda v: f"{v:.3g}", yfmt=lambda v: f"{v:.3g}") -> str:
    out = [f'<line x1="{m}" y1="{h - m}" x2="{w - 10}" y2="{h - m}" stroke="#333"/>',
           f'<line x1="{m}" y1="10" x2="{m}" y2="{h - m}" stroke="#333"/>']
    for k in range(5):
        x = m + (w - 10 - m) * k / 4
        y = h - m - (h - m - 10) * k / 4
        out.append(f'<text x="{x:.1f}" y="{h - m + 14}" font-size="10" text-anchor="middle">{xfmt(xmax * k / 4)}</text>')
        out.append(f'<text x="{m - 4}" y="{y + 3:.1f}" font-size="10" text-anchor="end">{yfmt(ymax * k / 4)}</text>')
    out.append(f'<text x="{(w + m) / 2:.0f}" y="{h - 4}" font-size="11" text-anchor="middle">{_esc(xlabel)}</text>')
    out.append(f'<text x="12" y="{(h - m) / 2:.0f}" font-size="11" text-anchor="middle" '
               f'transform="rotate(-90 12 {(h - m) / 2:.0f})">{_esc(ylabel)}</text>')
    return "".join(out)


def histogram_svg(reads: Sequence[int], writes: Sequence[int], title: str) -> str:
    w, h, m = 560, 240, 48
    top = max(max(reads), max(writes), 1)
    bw = (w - 10 - m) / len(BUCKETS)
    body = [_axes(w, h, m, "access size", "accesses", len(BUCKETS), top, xfmt=lambda v: "", yfmt=lambda v: f"{v:.0f}")]
    for i, name in enumerate(BUCKETS):
        for j, (vals, colour) in enumerate(((reads, COLOURS[0]), (writes, COLOURS[1]))):
            bh = (h - m - 10) * vals[i] / top
            x = m + i * bw + 2 + j * (bw - 4) / 2
            body.append(f'<rect x="{x:.1f}" y="{h - m - bh:.1f}" width="{(bw - 4) / 2:.1f}" height="{bh:.1f}" '
                        f'fill="{colour}"><title>{"read" if j == 0 else "write"} {name}: {vals[i]}</title></rect>')
        body.append(f'<text x="{m + (i + 0.5) * bw:.1f}" y="{h - m + 12}" font-size="9" text-anchor="middle">'
                    f'{name}</text>')
    body.append(f'<text x="{w - 120}" y="20" font-size="11" fill="{COLOURS[0]}">■ reads</text>'
                f'<text x="{w - 60}" y="20" font-size="11" fill="{COLOURS[1]}">■ writes</text>')
    body.append(f'<text x="{m}" y="14" font-size="12" font-weight="bold">{_esc(title)}</text>')
    return _svg(w, h, "".join(body), title)


def pattern_svg(prof: Profile, layer: str, title: str, max_points: int = 20000) -> str:
    t = prof.trace
    acc = t[(t["layer"] == layer) & (t["kind"] != "meta") & (t["size"] > 0)]
    w, h, m = 900, 320, 60
    t0 = t["start"].min() if len(t) else 0
    if len(acc) > max_points:
        acc = acc[np.linspace(0, len(acc) - 1, max_points).astype(int)]
    tmax = max(float((t["end"].max() - t0) * 1e-9) if len(t) else 1.0, 1e-9)
    omax = float(max((acc["offset"] + acc["size"]).max(), 1)) if len(acc) else 1.0
    body = [_axes(w, h, m, "time [s]", "file offset [MiB]", tmax, omax / 1048576)]
    for a in acc:
        x = m + (w - 10 - m) * float(a["start"] - t0) * 1e-9 / tmax
        y0 = h - m - (h - m - 10) * float(a["offset"]) / omax
        y1 = h - m - (h - m - 10) * float(a["offset"] + a["size"]) / omax
        colour = COLOURS[int(a["rank"]) % len(COLOURS)]
        shape = "circle" if a["kind"] == "read" else "rect"
        if shape == "rect":
            body.append(f'<rect x="{x - 1.5:.1f}" y="{y1:.1f}" width="3" height="{max(y0 - y1, 1.5):.1f}" '
                        f'fill="{colour}"><title>rank {a["rank"]} {a["name"]} {a["file"]} @{a["offset"]} '
                        f'+{a["size"]}</title></rect>')
        else:
            body.append(f'<circle cx="{x:.1f}" cy="{(y0 + y1) / 2:.1f}" r="2" fill="none" stroke="{colour}">'
                        f'<title>rank {a["rank"]} {a["name"]} {a["file"]} @{a["offset"]} +{a["size"]}</title></circle>')
    for r in prof.ranks[:10]:
        body.append(f'<text x="{w - 80}" y="{20 + 12 * r}" font-size="10" fill="{COLOURS[r % len(COLOURS)]}">'
                    f'■ rank {r}</text>')
    return _svg(w, h, "".join(body), title)


def rate_svg(prof: Profile, layer: str, title: str, bins: int = 100) -> str:
    t = prof.trace
    acc = t[(t["layer"] == layer) & (t["kind"] != "meta")]
    w, h, m = 900, 260, 60
    t0 = t["start"].min() if len(t) else 0
    span = max(float((t["end"].max() - t0) * 1e-9) if len(t) else 1.0, 1e-9)
    width = span / bins
    rates = {}
    for kind in ("write", "read"):
        r = np.zeros(bins)
        sel = acc[acc["kind"] == kind]
        for a in sel:  # spread each call's bytes over the bins it spans
            s, e = float(a["start"] - t0) * 1e-9, max(float(a["end"] - t0) * 1e-9, float(a["start"] - t0) * 1e-9 + 1e-9)
            b0, b1 = min(int(s / width), bins - 1), min(int(e / width), bins - 1)
            r[b0:b1 + 1] += float(a["size"]) / (b1 - b0 + 1)
        rates[kind] = r / width / 1048576
    top = max(max(rates["write"].max(), rates["read"].max()), 1e-9)
    body = [_axes(w, h, m, "time [s]", "MiB/s", span, top)]
    for kind, colour in (("write", COLOURS[1]), ("read", COLOURS[0])):
        pts = " ".join(f"{m + (w - 10 - m) * (i + 0.5) / bins:.1f},{h - m - (h - m - 10) * v / top:.1f}"
                       for i, v in enumerate(rates[kind]))
        body.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5">'
                    f'<title>{kind} rate</title></polyline>')
    body.append(f'<text x="{w - 120}" y="20" font-size="11" fill="{COLOURS[1]}">— write</text>'
                f'<text x="{w - 60}" y="20" font-size="11" fill="{COLOURS[0]}">— read</text>')
    return _svg(w, h, "".join(body), title)


def rank_bars_svg(prof: Profile, layer: str, title: str) -> str:
    t = prof.trace
    sel = t[t["layer"] == layer]
    per = {r: [0.0, 0.0, 0.0] for r in prof.ranks}  # read, write, meta seconds
    for a in sel:
        per[int(a["rank"])][("read", "write", "meta").index(str(a["kind"]))] += float(a["end"] - a["start"]) * 1e-9
    w, m, bh = 900, 70, 18
    h = 40 + bh * len(per) + 30
    top = max(max(sum(v) for v in per.values()) if per else 0, 1e-9)
    body = []
    for i, (r, v) in enumerate(sorted(per.items())):
        x, y = m, 20 + i * bh
        body.append(f'<text x="{m - 6}" y="{y + bh - 5}" font-size="11" text-anchor="end">rank {r}</text>')
        for part, colour, label in zip(v, (COLOURS[0], COLOURS[1], COLOURS[7]), ("read", "write", "metadata")):
            wd = (w - 20 - m) * part / top
            body.append(f'<rect x="{x:.1f}" y="{y}" width="{wd:.1f}" height="{bh - 4}" fill="{colour}">'
                        f'<title>rank {r} {label}: {part:.4f} s</title></rect>')
            x += wd
    body.append(f'<text x="{m}" y="{h - 8}" font-size="11">seconds in {layer} calls (read, write, metadata); '
                f'longest bar: {top:.4f} s</text>')
    return _svg(w, h, "".join(body), title)


# ---- the page ---------------------------------------------------------------------

def _table(headers: Sequence[str], rows: Sequence[Sequence], cls: str = "") -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


SECTIONS = ["summary", "counters", "histograms", "pattern", "rates", "ranks", "top", "conflicts"]

SELF_CHECK = """
<script>
// Checks that every section and plot made it into the page, and records any
// script error; headless tests read the result from #self-check.
(function () {
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message)); });
  function check() {
    var want = %(sections)s, missing = [];
    want.forEach(function (id) { if (!document.getElementById(id)) missing.push(id); });
    var plots = document.querySelectorAll('svg.plot').length;
    var out = document.getElementById('self-check');
    out.textContent = (missing.length || errors.length ? 'FAILED' : 'OK') + ': ' + (want.length - missing.length) +
      ' sections, ' + plots + ' plots' + (missing.length ? ', missing ' + missing.join(' ') : '') +
      (errors.length ? ', errors: ' + errors.join('; ') : '');
    out.setAttribute('data-plots', plots);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', check); else check();
})();
</script>
"""


def render(prof: Profile) -> str:
    t = prof.trace
    layers_present = [l for l in LAYERS if (t["layer"] == l).any()] if len(t) else []
    data_layer = "posix" if "posix" in layers_present else ("engine" if "engine" in layers_present else "api")
    # summary
    by_layer = defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0])
    for c in prof.counters:
        v = by_layer[c["layer"]]
        v[0] += c["reads"]; v[1] += c["writes"]; v[2] += c["bytes_read"]; v[3] += c["bytes_written"]
        v[4] += c["data_time_s"]; v[5] += c["meta_time_s"]
    files = sorted({str(c["file"]) for c in prof.counters if c["layer"] in ("posix", "api") and ":" not in str(c["file"])})
    parts = [f"<h1>h5loom I/O report</h1><p class='sub'>{_esc(prof.directory)}</p>"]
    parts.append('<section id="summary"><h2>Job summary</h2>' + _table(
        ["ranks", "duration", "calls traced", "files", "written (api)", "read (api)"],
        [[len(prof.ranks), f"{prof.duration_s:.4f} s", len(t), len(files),
          _mib(by_layer["api"][3]), _mib(by_layer["api"][2])]]) +
        ("<p>Files: " + ", ".join(_esc(f) for f in files[:20]) + "</p>" if files else "") + "</section>")
    parts.append('<section id="counters"><h2>Counters per layer</h2>' + _table(
        ["layer", "reads", "writes", "bytes read", "bytes written", "time in data ops [s]", "time in metadata ops [s]",
         "sequential writes", "consecutive writes", "unaligned"],
        [[l, v[0], v[1], v[2], v[3], f"{v[4]:.4f}", f"{v[5]:.4f}",
          sum(c["sequential_writes"] for c in prof.counters if c["layer"] == l),
          sum(c["consecutive_writes"] for c in prof.counters if c["layer"] == l),
          sum(c["unaligned"] for c in prof.counters if c["layer"] == l)]
         for l, v in sorted(by_layer.items(), key=lambda kv: LAYERS.index(kv[0]))]) +
        "<p>Sequential: an access starting at or after the end of the previous one on the same file; consecutive: "
        "exactly there. Unaligned: offset not a multiple of the profile's alignment.</p></section>")
    hist = "".join(histogram_svg(prof.histogram("read", layer=l), prof.histogram("write", layer=l),
                                 f"access sizes, {l} layer") for l in layers_present)
    parts.append(f'<section id="histograms"><h2>Access sizes</h2><p>Darshan\'s buckets (upper bounds inclusive).</p>'
                 f'{hist}</section>')
    parts.append(f'<section id="pattern"><h2>Access pattern ({data_layer} layer)</h2><p>File offset against time, '
                 f'one colour per rank; bars are writes, circles reads.</p>'
                 f'{pattern_svg(prof, data_layer, f"access pattern, {data_layer} layer")}</section>')
    parts.append(f'<section id="rates"><h2>Aggregate rates ({data_layer} layer)</h2>'
                 f'{rate_svg(prof, data_layer, f"write and read rate, {data_layer} layer")}</section>')
    parts.append(f'<section id="ranks"><h2>Time per rank (api layer)</h2><p>Who was slow: each rank\'s time in '
                 f'h5loom calls.</p>{rank_bars_svg(prof, "api", "time per rank, api layer")}</section>')
    top = defaultdict(lambda: [0, 0.0, 0])
    for a in t:
        k = (str(a["layer"]), str(a["name"]))
        top[k][0] += 1
        top[k][1] += float(a["end"] - a["start"]) * 1e-9
        top[k][2] += int(a["size"])
    rows = sorted(top.items(), key=lambda kv: -kv[1][1])[:25]
    parts.append('<section id="top"><h2>Top operations</h2>' + _table(
        ["layer", "operation", "calls", "total time [s]", "mean [ms]", "bytes"],
        [[k[0], k[1], v[0], f"{v[1]:.4f}", f"{1e3 * v[1] / v[0]:.3f}", v[2]] for k, v in rows]) + "</section>")
    blocks = []
    for layer in dict.fromkeys([data_layer, "api"]):
        counts, found = conflicts(prof, layer)
        total = sum(counts.values())
        blocks.append(f"<h3>{layer} layer: {total}</h3><p>" + ", ".join(f"{k}: {v}" for k, v in counts.items()) + "</p>" +
                      (_table(["kind", "file", "bytes", "first", "then"],
                              [[c["kind"], c["file"], f"{c['from']}..{c['to']}", c["first"], c["second"]]
                               for c in found], "conflicts") if found else "<p>None.</p>"))
    parts.append('<section id="conflicts"><h2>Conflicts</h2><p>Overlapping byte ranges of one file (or dataset, in '
                 'the api layer) accessed by different ranks, at least one a write; classified by which came first.</p>'
                 + "".join(blocks) + "</section>")
    style = """
      body { font-family: sans-serif; margin: 24px; color: #222; max-width: 1000px; }
      h1 { margin-bottom: 0; } .sub { color: #666; margin-top: 4px; }
      section { margin: 24px 0; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 4px; }
      table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ddd; padding: 3px 8px; }
      th { background: #f3f3f3; } svg.plot { display: block; margin: 8px 0; background: #fcfcfc; }
      #self-check { color: #888; font-size: 11px; }
    """
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>h5loom I/O report</title>"
            f"<style>{style}</style></head><body>" + "".join(parts) +
            '<p id="self-check">not checked</p>' + SELF_CHECK % {"sections": json.dumps(SECTIONS)} +
            "</body></html>")


def trace_events(prof: Profile) -> dict:
    """Chrome's trace-event JSON: one complete event per call; pid = rank, tid = layer."""
    t = prof.trace
    t0 = int(t["start"].min()) if len(t) else 0
    events = [{"name": str(a["name"]), "cat": str(a["layer"]), "ph": "X", "pid": int(a["rank"]),
               "tid": LAYERS.index(str(a["layer"])), "ts": (int(a["start"]) - t0) / 1000.0,
               "dur": (int(a["end"]) - int(a["start"])) / 1000.0,
               "args": {"file": str(a["file"]), "offset": int(a["offset"]), "size": int(a["size"]),
                        "kind": str(a["kind"])}} for a in t]
    for r in prof.ranks:
        events.append({"name": "process_name", "ph": "M", "pid": r, "args": {"name": f"rank {r}"}})
        for i, l in enumerate(LAYERS):
            events.append({"name": "thread_name", "ph": "M", "pid": r, "tid": i, "args": {"name": l}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="h5loom report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("directory", help="the profile directory (H5LOOM_PROFILE)")
    ap.add_argument("-o", "--output", default="report.html", help="the HTML page to write (default report.html)")
    ap.add_argument("--trace-json", help="also write the trace as Chrome trace-event JSON (Perfetto opens it)")
    args = ap.parse_args(argv)
    try:
        prof = load(args.directory)
    except (FileNotFoundError, ValueError) as e:
        print(f"h5loom report: {e}", file=sys.stderr)
        return 1
    with open(args.output, "w") as f:
        f.write(render(prof))
    print(f"wrote {args.output} ({len(prof.trace)} calls of {len(prof.ranks)} ranks)")
    if args.trace_json:
        with open(args.trace_json, "w") as f:
            json.dump(trace_events(prof), f)
        print(f"wrote {args.trace_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
