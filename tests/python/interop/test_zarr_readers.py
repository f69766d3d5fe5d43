"""Zarr stores and readers no one here wrote (issue 18):

* stores written by h5loom's zarr engine at 1, 2 and 4 ranks (chunks shared by
  several ranks' writes, strided writes, grown arrays, fill values, every
  number type, attributes) read value for value by zarr-python and tensorstore;
* arrays written by zarr-python (zstd, gzip, blosc) read by h5loom, and a
  codec h5loom does not read refused by name, never read as wrong values.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

MPIEXEC = os.environ.get("H5LOOM_MPIEXEC", "mpirun")
TYPES = ["u1", "i1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8"]


def run_h5loom(code: str, ranks: int, cwd: pathlib.Path) -> None:
    script = cwd / f"script_{abs(hash(code))}.py"
    script.write_text("import numpy as np\nimport h5loom\n" + code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    done = subprocess.run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-n", str(ranks), sys.executable,
                           str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"h5loom script failed:\n{done.stdout}\n{done.stderr}"


WRITER = r'''
f = h5loom.File("out.zarr", "w", engine=ENGINE)
r, n = f.rank, f.size
f.attrs["title"] = "zarr readers"
f.attrs["ranks"] = np.int16(n)
f.attrs["dt"] = 0.25
f.attrs["vec"] = np.array([1.0, 2.5, -3.0])
f.attrs["labels"] = ["x", "y", "z"]
x = f.create_dataset("x", shape=(n * 1000,), dtype="f8")
x[r * 1000:(r + 1) * 1000] = np.arange(r * 1000, (r + 1) * 1000) * 0.5
x.attrs["units"] = "m"
t = f.create_dataset("grid/t", shape=(8 * n, 33), dtype="i4", chunks=(5, 7))   # chunks shared by two ranks
t[8 * r:8 * r + 8, :] = (np.arange(8 * r, 8 * r + 8)[:, None] * 100 + np.arange(33)[None, :]).astype("i4")
v = f.create_dataset("grid/v", shape=(4, 6, 5 * n), dtype="f4", chunks=(3, 4, 2))
v[:, ::2, 5 * r:5 * r + 5] = np.full((4, 3, 5), r + 0.5, dtype="f4")             # odd rows never written: 0
s = f.create_dataset("steps", shape=(0,), maxshape=(None,), dtype="i8", chunks=(3,))
for step in range(3):
    s.resize((4 * (step + 1),))
    if r == step % n:
        s[4 * step:4 * step + 4] = np.arange(4) + 10 * step
p = f.create_dataset("partly", shape=(10 * n,), dtype="f8", fillvalue=-1.5)
p[10 * r + 1] = float(r)
# HDF5 filters as h5py takes them, written as Zarr codecs: gzip; shuffle + gzip is blosc (zlib).
g = f.create_dataset("filtered/gzip", shape=(40 * n,), dtype="f8", chunks=(16,), compression="gzip", compression_opts=5)
g[40 * r:40 * r + 40] = np.arange(40 * r, 40 * r + 40) / 8
b = f.create_dataset("filtered/shuffle_gzip", shape=(6, 10 * n), dtype="i4", chunks=(4, 7), compression="gzip",
                     shuffle=True, fletcher32=True)
b[:, 10 * r:10 * r + 10] = (np.arange(6)[:, None] * 1000 + np.arange(10 * r, 10 * r + 10)[None, :]).astype("i4")
for code in TYPES:
    a = f.create_dataset("types/" + code, shape=(4,), dtype=code)
    if r == 0:
        info = np.iinfo(code) if np.dtype(code).kind in "iu" else np.finfo(code)
        a[:] = np.array([info.min, info.max, 0, 1], dtype=code)
f.close()
'''


def expected(n):
    out = {"x": np.arange(n * 1000) * 0.5,
           "grid/t": (np.arange(8 * n)[:, None] * 100 + np.arange(33)[None, :]).astype("i4")}
    v = np.zeros((4, 6, 5 * n), dtype="f4")
    for r in range(n):
        v[:, ::2, 5 * r:5 * r + 5] = r + 0.5
    out["grid/v"] = v
    out["steps"] = np.concatenate([np.arange(4) + 10 * step for step in range(3)]).astype("i8")
    p = np.full(10 * n, -1.5)
    p[1::10] = np.arange(n)
    out["partly"] = p
    out["filtered/gzip"] = np.arange(40 * n) / 8
    out["filtered/shuffle_gzip"] = (np.arange(6)[:, None] * 1000 + np.arange(10 * n)[None, :]).astype("i4")
    for code in TYPES:
        info = np.iinfo(code) if np.dtype(code).kind in "iu" else np.finfo(code)
        out["types/" + code] = np.array([info.min, info.max, 0, 1], dtype=code)
    return out


@pytest.fixture(scope="module", params=[(1, "zarr"), (2, "zarr"), (4, "zarr"),
                                        (2, '{"engine": "zarr", "zarr": {"compressor": "zstd", "chunk_target_bytes": 256, '
                                            '"shard_target_bytes": 0}}'),
                                        (4, '{"engine": "zarr", "zarr": {"compressor": "zstd", "chunk_target_bytes": 256, '
                                            '"shard_target_bytes": 4096}}'),
                                        (2, '{"engine": "zarr", "zarr": {"compressor": "blosc", "blosc_cname": "zstd", '
                                            '"blosc_shuffle": "bitshuffle", "chunk_target_bytes": 512}}'),
                                        (1, '{"engine": "zarr", "zarr": {"compressor": "gzip", "gzip_level": 1}}')],
                ids=["np1", "np2", "np4", "np2-zstd-small-chunks", "np4-zstd-shards", "np2-blosc", "np1-gzip"])
def store(request, tmp_path_factory):
    n, engine = request.param
    d = tmp_path_factory.mktemp(f"zarr{n}" + ("-shards" if '"shard_target_bytes": 4096' in engine else ""))
    run_h5loom(f"ENGINE = {engine!r}\nTYPES = {TYPES!r}\n" + WRITER, n, d)
    return d / "out.zarr", n


def test_zarr_python_reads_every_array_and_attribute(store):
    path, n = store
    g = zarr.open_group(str(path), mode="r")
    for name, want in expected(n).items():
        a = g[name]
        assert a.dtype == want.dtype, name
        np.testing.assert_array_equal(a[...], want, err_msg=name)
    assert g.attrs["title"] == "zarr readers"
    assert g.attrs["ranks"] == n
    assert g.attrs["dt"] == 0.25
    assert list(g.attrs["vec"]) == [1.0, 2.5, -3.0]
    assert list(g.attrs["labels"]) == ["x", "y", "z"]
    assert g["x"].attrs["units"] == "m"
    assert g["partly"].fill_value == -1.5
    assert sorted(g["grid"].array_keys()) == ["t", "v"]


def test_tensorstore_reads_every_array(store):
    path, n = store
    for name, want in expected(n).items():
        arr = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path / name)}},
                      open=True, read=True).result()
        np.testing.assert_array_equal(arr.read().result(), want, err_msg=name)


def test_h5loom_reads_zarr_python_arrays(tmp_path):
    path = tmp_path / "theirs.zarr"
    root = zarr.open_group(str(path), mode="w")
    root.attrs["source"] = "zarr-python"
    root.attrs["nested"] = {"a": 1}
    want = {"f8": np.linspace(0, 1, 7 * 9).reshape(7, 9),
            "i2": np.arange(-50, 50, dtype="i2"),
            "flags": np.array([True, False, True]),
            "sub/u4": np.arange(24, dtype="u4").reshape(2, 3, 4)}
    root.create_array("f8", data=want["f8"], chunks=(3, 4))                              # zarr-python's defaults: zstd
    root.create_array("i2", data=want["i2"], chunks=(16,), compressors=[zarr.codecs.Crc32cCodec()])
    root.create_array("flags", data=want["flags"])
    root.create_group("sub").create_array("u4", data=want["sub/u4"], chunks=(1, 2, 4), fill_value=7)
    want["gz"] = np.arange(5)
    root.create_array("gz", data=want["gz"], compressors=[zarr.codecs.GzipCodec()])
    want["bl"] = np.linspace(-1, 1, 300).astype("f4")
    root.create_array("bl", data=want["bl"], chunks=(64,),
                      compressors=[zarr.codecs.BloscCodec(cname="lz4", shuffle="bitshuffle")])
    root.create_array("transposed", data=np.arange(6).reshape(2, 3), filters=[zarr.codecs.TransposeCodec(order=(1, 0))])
    for k, v in want.items():
        np.save(tmp_path / (k.replace("/", "_") + ".npy"), v)
    run_h5loom(r'''
import json
f = h5loom.File("theirs.zarr", "r", engine="zarr")
assert f.attrs["source"] == "zarr-python"
assert json.loads(f.attrs["nested"]) == {"a": 1}, f.attrs["nested"]     # kept as its JSON text
for k in ["f8", "i2", "flags", "sub/u4", "gz", "bl"]:
    want = np.load(k.replace("/", "_") + ".npy")
    got = f[k][...]
    np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=k)
assert f["sub/u4"].fillvalue == 7
try:
    f["transposed"][...]
except h5loom.Error as e:
    assert "transpose" in str(e) and "transposed" in str(e), str(e)
else:
    raise AssertionError("an array of a codec h5loom does not read was read")
''', 1, tmp_path)


def test_store_layout_is_plain_zarr_v3(store):
    path, n = store
    if "shards" in str(path.parent):  # the same, in shards: one object holds many chunks
        x = json.loads((path / "x" / "zarr.json").read_text())
        assert x["codecs"][0]["name"] == "sharding_indexed", x["codecs"]
        assert x["codecs"][0]["configuration"]["index_codecs"][-1]["name"] == "crc32c"
        return
    root = json.loads((path / "zarr.json").read_text())
    assert root["zarr_format"] == 3 and root["node_type"] == "group"
    assert root["attributes"]["_h5loom"]["engine"] == "zarr"
    t = json.loads((path / "grid" / "t" / "zarr.json").read_text())
    files = sorted(p.relative_to(path / "grid" / "t").as_posix() for p in (path / "grid" / "t" / "c").rglob("*")
                   if p.is_file())
    if t["codecs"][0]["name"] == "sharding_indexed":  # its 140-byte chunks in shards (1 MiB): one object here
        assert t["codecs"][0]["configuration"]["chunk_shape"] == [5, 7]
        assert [c["name"] for c in t["codecs"][0]["configuration"]["codecs"]][-1] == "crc32c"
        assert files == ["c/0/0"]
    else:  # shard_target_bytes 0: a chunk per object
        assert t["chunk_grid"]["configuration"]["chunk_shape"] == [5, 7]
        assert [c["name"] for c in t["codecs"]][-1] == "crc32c"
        assert "c/0/0" in files and len(files) == ((8 * n + 4) // 5) * 5
    x = json.loads((path / "x" / "zarr.json").read_text())  # 1 MiB chunks: no shards (unless chunks are small)
    codecs = x["codecs"][0]["configuration"]["codecs"] if x["codecs"][0]["name"] == "sharding_indexed" else x["codecs"]
    names = [c["name"] for c in codecs]
    assert names[0] == "bytes" and names[-1] == "crc32c" and len(names) <= 3, names
    assert len(names) == 2 or names[1] in ("zstd", "blosc", "gzip"), names
    filtered = path / "filtered"
    if "sharding_indexed" not in (filtered / "gzip" / "zarr.json").read_text():  # each dataset's filters, as codecs
        gz = json.loads((filtered / "gzip" / "zarr.json").read_text())["codecs"]
        assert gz[1] == {"name": "gzip", "configuration": {"level": 5}}, gz
        bl = json.loads((filtered / "shuffle_gzip" / "zarr.json").read_text())["codecs"]
        assert bl[1]["name"] == "blosc" and bl[1]["configuration"]["cname"] == "zlib", bl
        assert bl[1]["configuration"]["shuffle"] == "shuffle" and bl[1]["configuration"]["typesize"] == 4, bl
    assert not list(path.rglob("*.tmp-*"))  # no temporary object left behind


BUILD = pathlib.Path(os.environ.get("H5LOOM_BUILD_DIR", "build")).resolve()


def h5loom_cli(*args, check=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    return subprocess.run([str(BUILD / "h5loom"), *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=env, check=check)


def test_the_h5loom_command_lists_verifies_and_converts_both_ways(store, tmp_path):
    h5py = pytest.importorskip("h5py")
    path, n = store
    listing = h5loom_cli("ls", path).stdout
    assert "/grid/t" in listing and "Dataset [%d, 33] int32" % (8 * n) in listing, listing
    assert "engine: zarr" in h5loom_cli("info", path).stdout
    h5loom_cli("verify", path)
    h5loom_cli("convert", path, tmp_path / "native.h5")
    h5loom_cli("convert", tmp_path / "native.h5", tmp_path / "again.zarr", "--to", "zarr")
    with h5py.File(tmp_path / "native.h5", "r") as f:
        again = zarr.open_group(str(tmp_path / "again.zarr"), mode="r")
        for name, want in expected(n).items():
            np.testing.assert_array_equal(f[name][...], want, err_msg=name)
            np.testing.assert_array_equal(again[name][...], want, err_msg=name)
        title = f.attrs["title"]
        assert (title.decode() if isinstance(title, bytes) else title) == "zarr readers"
        assert again.attrs["labels"] == ["x", "y", "z"]


def test_a_damaged_chunk_is_an_error_never_wrong_values(tmp_path):
    run_h5loom(r'''
with h5loom.File("d.zarr", "w", engine={"engine": "zarr", "zarr": {"shard_target_bytes": 0}}) as f:
    f.create_dataset("v", shape=(1000,), dtype="f8", chunks=(250,))[...] = np.arange(1000.0)
with h5loom.File("s.zarr", "w", engine="zarr") as f:   # the same chunks, in one shard
    f.create_dataset("v", shape=(1000,), dtype="f8", chunks=(250,))[...] = np.arange(1000.0)
''', 1, tmp_path)
    shard = tmp_path / "s.zarr" / "v" / "c" / "0"
    damaged = bytearray(shard.read_bytes())
    damaged[2 * 2000 + 100] ^= 0x40  # in the third inner chunk
    shard.write_bytes(bytes(damaged))
    run_h5loom(r'''
f = h5loom.File("s.zarr", "r", engine="zarr")
try:
    f["v"][...]
except h5loom.CorruptionError as e:
    assert "inner chunk 2" in str(e) and "CRC32C" in str(e), str(e)
else:
    raise AssertionError("a damaged inner chunk was read")
''', 1, tmp_path)
    chunk = tmp_path / "d.zarr" / "v" / "c" / "2"
    damaged = bytearray(chunk.read_bytes())
    damaged[100] ^= 0x40
    chunk.write_bytes(bytes(damaged))
    done = h5loom_cli("verify", tmp_path / "d.zarr", check=False)
    assert done.returncode != 0 and "c/2" in done.stdout + done.stderr, done.stdout + done.stderr
    run_h5loom(r'''
f = h5loom.File("d.zarr", "r", engine="zarr")
np.testing.assert_array_equal(f["v"][:500], np.arange(500.0))    # the intact chunks still read
try:
    f["v"][...]
except h5loom.CorruptionError as e:
    assert "c/2" in str(e) and "CRC32C" in str(e), str(e)
else:
    raise AssertionError("a damaged chunk was read")
''', 1, tmp_path)


@pytest.mark.parametrize("codec", ["blosc", "gzip", "zstd"])
def test_a_cut_compressed_chunk_without_checksum_is_an_error(tmp_path, codec):
    """zarr-python's chunks carry no CRC32C: a chunk cut short must still fail
    to decompress, never read as wrong values."""
    compressor = {"blosc": zarr.codecs.BloscCodec(cname="lz4", shuffle="shuffle"), "gzip": zarr.codecs.GzipCodec(),
                  "zstd": zarr.codecs.ZstdCodec()}[codec]
    root = zarr.open_group(str(tmp_path / "theirs.zarr"), mode="w")
    root.create_array("v", data=np.random.default_rng(1).random(500), chunks=(250,), compressors=[compressor])
    chunk = tmp_path / "theirs.zarr" / "v" / "c" / "1"
    chunk.write_bytes(chunk.read_bytes()[:-9])
    run_h5loom(r'''
f = h5loom.File("theirs.zarr", "r", engine="zarr")
assert f["v"][:250].shape == (250,)    # the intact chunk still reads
try:
    f["v"][...]
except h5loom.CorruptionError as e:
    assert "c/1" in str(e), str(e)
else:
    raise AssertionError("a cut chunk was read")
''', 1, tmp_path)


def test_a_failed_flush_puts_nothing_in_place(tmp_path):
    """A flush that fails on one rank leaves none of its objects behind - not
    even those of the ranks that succeeded, which a later flush would else put
    over newer ones."""
    run_h5loom(r'''
with h5loom.File("f.zarr", "w", engine={"engine": "zarr", "zarr": {"shard_target_bytes": 0}}) as f:
    f.create_dataset("v", shape=(1000,), dtype="f8", chunks=(250,))[...] = np.zeros(1000)
''', 1, tmp_path)
    chunk = tmp_path / "f.zarr" / "v" / "c" / "1"
    damaged = bytearray(chunk.read_bytes())
    damaged[10] ^= 0x01
    chunk.write_bytes(bytes(damaged))
    run_h5loom(r'''
import os
f = h5loom.File("f.zarr", "r+", engine="zarr")
v = f["v"]
if f.rank == 0:
    v[0:250] = np.full(250, 1.0)   # all of chunk 0: this rank owns it in this flush
else:
    v[300] = 5.0                   # part of the damaged chunk 1: read first, which fails
try:
    f.flush()
except h5loom.CorruptionError as e:
    assert "c/1" in str(e), str(e)
else:
    raise AssertionError("the flush over a damaged chunk succeeded")
if f.rank == 1:
    v[0:250] = np.full(250, 2.0)   # chunk 0 again, now owned by rank 1
f.flush()
got = v[0:250]
assert (got == 2.0).all(), got[:4]  # never the failed flush's 1.0
f.close()
leftovers = [os.path.join(r, n) for r, _, ns in os.walk("f.zarr") for n in ns if ".tmp-" in n]
assert not leftovers, leftovers
''', 2, tmp_path)


def test_other_writers_nodes_stay_theirs_when_h5loom_adds_attributes(tmp_path):
    path = tmp_path / "theirs.zarr"
    root = zarr.open_group(str(path), mode="w")
    root.create_array("flags", data=np.array([True, False, True]), dimension_names=["x"])
    for session in range(2):  # the second session must still see another writer's node
        run_h5loom(f"SESSION = {session}\n" + r'''
f = h5loom.File("theirs.zarr", "r+", engine="zarr")
f["flags"].attrs[f"n{SESSION}"] = np.int16(7 + SESSION)
f.attrs[f"r{SESSION}"] = "x"
f.close()
''', 1, tmp_path)
    meta = json.loads((path / "flags" / "zarr.json").read_text())
    assert meta["data_type"] == "bool" and meta["dimension_names"] == ["x"], meta
    assert "version" not in meta["attributes"]["_h5loom"], meta["attributes"]
    g = zarr.open_group(str(path), mode="r")
    np.testing.assert_array_equal(g["flags"][...], [True, False, True])
    assert g["flags"].attrs["n0"] == 7 and g["flags"].attrs["n1"] == 8
    assert "engine" not in json.loads((path / "zarr.json").read_text())["attributes"].get("_h5loom", {})


def test_attributes_json_cannot_hold_are_kept_exactly(tmp_path):
    """Compounds, enums, fixed strings, opaque and big-endian values, variable-length
    sequences and values without elements: kept in _h5loom (typed_attributes),
    read back exactly by h5loom at 2 ranks."""
    run_h5loom(r'''
point = np.dtype([("x", "<f4"), ("y", "<f4"), ("tag", "S4")])
color = h5loom.enum_dtype({"red": 0, "green": 1}, basetype="i1")
with h5loom.File("typed.zarr", "w", engine="zarr") as f:
    a = f.create_dataset("a", shape=(3,), dtype="f8")
    a.attrs["points"] = np.array([(1.0, 2.0, b"ab"), (3.5, -1.0, b"cdef")], dtype=point)
    a.attrs["origin"] = np.array((0.5, 0.25, b"o"), dtype=point)[()]
    a.attrs["color"] = np.array([1, 0, 1], dtype=color)
    a.attrs["blob"] = np.frombuffer(b"\x00\x01\xfe\xff", dtype=h5loom.opaque_dtype(4, "raw"))
    a.attrs["be"] = np.array([1, 256], dtype=">i4")
    a.attrs["ragged"] = np.array([np.arange(3, dtype="i4"), np.arange(1, dtype="i4")], dtype=h5loom.vlen_dtype("i4"))
    a.attrs["nothing"] = h5loom.Empty("f4")
    f.attrs["plain"] = 7
with h5loom.File("typed.zarr", "r", engine="zarr") as f:
    at = f["a"].attrs
    assert at["points"].tolist() == [(1.0, 2.0, b"ab"), (3.5, -1.0, b"cdef")], at["points"]
    assert at["origin"].tolist() == (0.5, 0.25, b"o"), at["origin"]
    assert at["color"].tolist() == [1, 0, 1] and at["color"].dtype.kind == "i"
    assert bytes(at["blob"].tobytes()) == b"\x00\x01\xfe\xff"
    assert at["be"].tolist() == [1, 256] and at["be"].dtype.byteorder in (">", "=", "<")
    assert [list(x) for x in at["ragged"]] == [[0, 1, 2], [0]]
    assert isinstance(at["nothing"], h5loom.Empty)
    assert f.attrs["plain"] == 7
''', 2, tmp_path)
    g = zarr.open_group(str(tmp_path / "typed.zarr"), mode="r")
    records = g["a"].attrs["_h5loom"]["typed_attributes"]
    assert set(records) == {"points", "origin", "color", "blob", "be", "ragged", "nothing"}, records
    assert records["nothing"] == {"kind": "empty", "type": "float32"}, records["nothing"]
    assert "points" not in g["a"].attrs   # only in _h5loom
    meta = tmp_path / "typed.zarr" / "a" / "zarr.json"
    node = json.loads(meta.read_text())
    node["attributes"]["_h5loom"]["typed_attributes"]["points"]["base64"] = "not base64!"
    meta.write_text(json.dumps(node))
    run_h5loom(r'''
try:
    h5loom.File("typed.zarr", "r", engine="zarr")["a"].attrs["points"]
except h5loom.CorruptionError as e:
    assert "'points'" in str(e) and "base64" in str(e), str(e)
else:
    raise AssertionError("a damaged attribute record was read")
''', 1, tmp_path)
