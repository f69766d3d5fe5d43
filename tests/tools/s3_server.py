"""A local S3 server for the tests (moto's server mode, from the project's .venv):

    python s3_server.py start PORT STATEFILE BUCKET...   # serves 127.0.0.1:PORT, makes the buckets
    python s3_server.py stop STATEFILE                   # ends it

ctest runs these as the setup and cleanup of the fixture `s3-server`
(tests/CMakeLists.txt); the conformance suite then runs the zarr engine on
s3:// stores there.
"""
import os
import signal
import subprocess
import sys
import time
import urllib.request


def start(port: str, state: str, buckets) -> None:
    log = open(state + ".log", "w")
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", port],
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(300):
        if server.poll() is not None:
            sys.exit(f"s3_server: moto ended at once (is port {port} taken?); see {state}.log")
        try:
            urllib.request.urlopen(endpoint, timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    else:
        server.kill()
        sys.exit(f"s3_server: moto did not answer on {endpoint} within 30 s")
    import boto3
    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                      region_name="us-east-1")
    for b in buckets:
        s3.create_bucket(Bucket=b)
    with open(state, "w") as f:
        f.write(str(server.pid))
    print(f"s3_server: moto on {endpoint}, pid {server.pid}, buckets {' '.join(buckets)}")


def stop(state: str) -> None:
    try:
        pid = int(open(state).read())
    except OSError:
        return
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    os.remove(state)


if __name__ == "__main__":
    if sys.argv[1] == "start":
        start(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        stop(sys.argv[2])
