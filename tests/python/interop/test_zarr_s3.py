"""The zarr engine on an S3 endpoint (issue 18): a local S3 server (moto's
server mode, started here on 127.0.0.1) holds stores written by h5loom at 1, 2
and 4 ranks; tensorstore's S3 driver and zarr-python (through s3fs) read them
value for value; h5loom reads
them back, lists them with the h5loom command, and writes an object larger
than a part as a multipart upload.
"""
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

pytest.importorskip("moto")
ts = pytest.importorskip("tensorstore")

from test_zarr_readers import TYPES, WRITER, expected, run_h5loom, BUILD  # noqa: E402

BUCKET = "h5loom-tests"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(endpoint, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
               "AWS_ENDPOINT_URL": endpoint}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        import boto3
        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=BUCKET)
        yield endpoint
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module", params=[1, 2, 4])
def s3_store(request, s3, tmp_path_factory):
    n = request.param
    url = f"s3://{BUCKET}/np{n}/run.zarr"
    d = tmp_path_factory.mktemp(f"s3-{n}")
    run_h5loom(f"ENGINE = 'zarr'\nTYPES = {TYPES!r}\n" + WRITER.replace('"out.zarr"', repr(url)), n, d)
    return url, n, d


def test_tensorstore_reads_every_array_from_s3(s3, s3_store):
    url, n, _ = s3_store
    prefix = url[len(f"s3://{BUCKET}/"):]
    for name, want in expected(n).items():
        spec = {"driver": "zarr3", "kvstore": {"driver": "s3", "bucket": BUCKET, "path": f"{prefix}/{name}/",
                                               "endpoint": s3, "aws_region": "us-east-1"}}
        arr = ts.open(spec, open=True, read=True).result()
        np.testing.assert_array_equal(arr.read().result(), want, err_msg=name)


def test_zarr_python_reads_every_array_from_s3(s3, s3_store):
    zarr = pytest.importorskip("zarr")
    pytest.importorskip("s3fs")
    url, n, _ = s3_store
    g = zarr.open_group(url, mode="r", storage_options={"endpoint_url": s3, "key": "testing", "secret": "testing"})
    for name, want in expected(n).items():
        np.testing.assert_array_equal(g[name][...], want, err_msg=name)
    assert g.attrs["title"] == "zarr readers" and g.attrs["ranks"] == n


def test_h5loom_reads_back_and_lists_an_s3_store(s3_store):
    url, n, d = s3_store
    run_h5loom(f"URL = {url!r}\nTYPES = {TYPES!r}\n" + r'''
f = h5loom.File(URL, "r", engine="zarr")
assert f.attrs["title"] == "zarr readers"
n = f.attrs["ranks"]
np.testing.assert_array_equal(f["x"][...], np.arange(n * 1000) * 0.5)
np.testing.assert_array_equal(f["grid/t"][3, :5], [300, 301, 302, 303, 304])
assert f["steps"].shape == (12,)
''', n, d)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    listing = subprocess.run([str(BUILD / "h5loom"), "ls", url], capture_output=True, text=True, env=env,
                             timeout=120)
    assert listing.returncode == 0, listing.stderr
    assert "/grid/t" in listing.stdout and "int32" in listing.stdout, listing.stdout
    for args, want in ((["info", url], "engine: zarr"), (["verify", url], ""), (["dump", url, "/grid/t"], "301"),
                       (["convert", url, str(d / "from-s3.h5")], "")):
        done = subprocess.run([str(BUILD / "h5loom"), *args], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0 and want in done.stdout, (args, done.stdout, done.stderr)
    run_h5loom(r'''
f = h5loom.File("from-s3.h5", "r")
np.testing.assert_array_equal(f["grid/t"][3, :5], [300, 301, 302, 303, 304])
''', 1, d)


def test_large_objects_go_up_in_parts(s3, tmp_path):
    url = f"s3://{BUCKET}/multipart.zarr"
    run_h5loom(f"URL = {url!r}\n" + r'''
cfg = {"engine": "zarr", "zarr": {"s3_part_bytes": 5 << 20, "chunk_target_bytes": 24 << 20}}
with h5loom.File(URL, "w", engine=cfg) as f:
    f.create_dataset("big", shape=(3 << 20,), dtype="f8")[...] = np.arange(3 << 20, dtype="f8")   # one 24 MiB chunk: 5 parts
f = h5loom.File(URL, "r", engine="zarr")
np.testing.assert_array_equal(f["big"][...], np.arange(3 << 20, dtype="f8"))
''', 1, tmp_path)
    import boto3
    head = boto3.client("s3", endpoint_url=s3).head_object(Bucket=BUCKET, Key="multipart.zarr/big/c/0")
    assert head["ContentLength"] == (3 << 20) * 8 + 4
    assert head["ETag"].strip('"').endswith("-5"), head["ETag"]  # a multipart object's ETag counts its parts


def test_missing_credentials_are_a_clear_error(s3, tmp_path):
    code = r'''
import os
for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
    os.environ.pop(k, None)
try:
    h5loom.File("s3://h5loom-tests/nocreds.zarr", "w", engine="zarr")
except h5loom.ConfigError as e:
    assert "AWS_ACCESS_KEY_ID" in str(e) and "nocreds.zarr" in str(e), str(e)
else:
    raise AssertionError("a store was opened without credentials")
'''
    run_h5loom(code, 1, tmp_path)


def test_bench_runs_the_zarr_engine_on_s3(s3, tmp_path):
    """`h5loom bench ... --store s3://...`: the engine's files in the store (and
    removed after), the POSIX baseline and the CSV in --dir, values verified."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}
    csv = tmp_path / "vpic.csv"
    done = subprocess.run([os.environ.get("H5LOOM_MPIEXEC", "mpirun"), "--oversubscribe", "--allow-run-as-root", "-n",
                           "2", str(BUILD / "h5loom"), "bench", "vpic", "--engine", "zarr", "--particles", "1000",
                           "--steps", "2", "--repeat", "1", "--store", f"s3://{BUCKET}/bench", "--dir", str(tmp_path),
                           "--csv", str(csv), "--no-progress"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = csv.read_text().splitlines()
    assert len(rows) == 2 and ',"zarr",2,' in rows[1] and ",yes," in rows[1], rows
    import boto3
    left = boto3.client("s3", endpoint_url=s3).list_objects_v2(Bucket=BUCKET, Prefix="bench/")
    assert left.get("KeyCount", 0) == 0, left.get("Contents")
    assert not list(tmp_path.glob("*.zarr"))
