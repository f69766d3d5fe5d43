#!/usr/bin/env python3
"""What an S3 endpoint does with nothing in the way: PROCS processes each PUT
COUNT objects of SIZE bytes (one HTTP request each, as the zarr engine writes
a chunk), then GET them back, with boto3. The baseline the zarr engine's S3
runs are compared with (docs/benchmarks.md, "The zarr engine on S3"): the same
bytes in the same number of objects.

    AWS_ENDPOINT_URL=http://127.0.0.1:45200 python3 tools/s3_baseline.py \
        --bucket h5loom-bench --procs 2 --count 32 --size 1048576 --repeat 3
"""
import argparse
import multiprocessing
import os
import time


def _worker(args):
    bucket, prefix, rank, count, size, phase = args
    import boto3

    s3 = boto3.client("s3")
    body = os.urandom(size)
    t0 = time.perf_counter()
    for i in range(count):
        key = f"{prefix}/r{rank}/o{i}"
        if phase == "put":
            s3.put_object(Bucket=bucket, Key=key, Body=body)
        else:
            got = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            assert len(got) == size, key
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="s3-baseline")
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--count", type=int, default=32, help="objects per process")
    p.add_argument("--size", type=int, default=1 << 20, help="bytes per object")
    p.add_argument("--repeat", type=int, default=3, help="best of")
    a = p.parse_args()
    mib = a.procs * a.count * a.size / 2**20
    best = {"put": float("inf"), "get": float("inf")}
    with multiprocessing.Pool(a.procs) as pool:
        for _ in range(a.repeat):
            for phase in ("put", "get"):
                t0 = time.perf_counter()
                pool.map(_worker, [(a.bucket, a.prefix, r, a.count, a.size, phase) for r in range(a.procs)])
                best[phase] = min(best[phase], time.perf_counter() - t0)
    print(f"S3 baseline: {a.procs} processes x {a.count} objects of {a.size} bytes ({mib:.1f} MiB), best of {a.repeat}")
    print(f"PUT {best['put']:.3f} s ({mib / best['put']:.1f} MiB/s), GET {best['get']:.3f} s ({mib / best['get']:.1f} MiB/s)")


if __name__ == "__main__":
    main()
