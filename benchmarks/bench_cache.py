"""Latency of the arcbatt cache: get/set, single and batched (100 keys), disk and Redis.

    python benchmarks/bench_cache.py [-C redis://host:port/db] [-n SINGLE_RUNS] [-b BATCH_RUNS]

Without -C a private redis-server is started on a free loopback port (no persistence) and stopped
at the end. Prints the median (and 90th percentile) latency of each operation in microseconds,
per call and per key. Cases:

- disk:      DiskCache (diskcache/SQLite) alone.
- layered:   LayeredCache (disk + Redis) as open_cache("redis://…") returns it; "local hit" reads
             stop at the disk, "remote hit" reads find the local folder cold and fetch from Redis
             (then copy to disk), as a second machine would.
- redis raw: RedisStore alone (GET/SET/MGET/pipeline), the network part of the layered numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import redis  # noqa: E402

from cache import open_cache  # noqa: E402
from cache.redis_backend import RedisStore  # noqa: E402

BATCH = 100
VALUE = {
    "program": "def solve(I):\n    x1 = rot90(I)\n    O = hconcat(I, x1)\n    return O\n",
    "train_fit": 1.0,
    "attempt": [[(r * c) % 10 for c in range(10)] for r in range(10)],
}


def measure(fn, runs: int) -> list[float]:
    """Call ``fn(i)`` for i in range(runs); return the latencies in microseconds."""
    times = []
    for i in range(runs):
        start = time.perf_counter_ns()
        fn(i)
        times.append((time.perf_counter_ns() - start) / 1000)
    return times


def row(name: str, times: list[float], keys: int = 1) -> str:
    """Format one result line: median and p90 per call, median per key."""
    med = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    per_key = f"{med / keys:9.1f}" if keys > 1 else " " * 9
    return f"  {name:<36} {med:9.1f} {p90:9.1f} {per_key}   (n={len(times)})"


def start_redis() -> tuple[subprocess.Popen, str]:
    """Start a private redis-server on a free loopback port; return (process, url)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    for _ in range(500):
        try:
            client.ping()
            return proc, f"redis://127.0.0.1:{port}/0"
        except redis.exceptions.ConnectionError:
            time.sleep(0.01)
    proc.kill()
    raise SystemExit("redis-server did not start")


def bench_disk(tmp: str, n: int, b: int) -> list[str]:
    """Rows for the disk-only cache."""
    cache = open_cache(f"disk:{tmp}/disk", "bench")
    out = ["disk (DiskCache)"]
    out.append(row("set", measure(lambda i: cache.set("task", f"s{i}", VALUE), n)))
    out.append(row("get (hit)", measure(lambda i: cache.get("task", f"s{i}"), n)))
    out.append(row("get (miss)", measure(lambda i: cache.get("task", f"x{i}"), n)))
    batches = [[f"m{j}_{k}" for k in range(BATCH)] for j in range(b)]
    out.append(row(f"set_many({BATCH})", measure(
        lambda j: cache.set_many("task", dict.fromkeys(batches[j], VALUE)), b), BATCH))
    out.append(row(f"get_many({BATCH}) (hits)", measure(
        lambda j: cache.get_many("task", batches[j]), b), BATCH))
    cache.close()
    return out


def bench_layered(tmp: str, url: str, n: int, b: int) -> list[str]:
    """Rows for the layered cache (disk + Redis)."""
    writer = open_cache(url, "bench", local_dir=f"{tmp}/writer")
    writer.clear()
    out = [f"layered (LayeredCache: disk + {url})"]
    out.append(row("set (disk + Redis)", measure(lambda i: writer.set("task", f"s{i}", VALUE), n)))
    out.append(row("get (local hit)", measure(lambda i: writer.get("task", f"s{i}"), n)))
    out.append(row("get (miss: disk + Redis)", measure(lambda i: writer.get("task", f"x{i}"), n)))
    reader = open_cache(url, "bench", local_dir=f"{tmp}/reader")  # a second machine, cold
    out.append(row("get (remote hit, copied to disk)",
                   measure(lambda i: reader.get("task", f"s{i}"), n)))
    batches = [[f"m{j}_{k}" for k in range(BATCH)] for j in range(b)]
    out.append(row(f"set_many({BATCH}) (disk + Redis)", measure(
        lambda j: writer.set_many("task", dict.fromkeys(batches[j], VALUE)), b), BATCH))
    out.append(row(f"get_many({BATCH}) (local hits)", measure(
        lambda j: writer.get_many("task", batches[j]), b), BATCH))
    out.append(row(f"get_many({BATCH}) (remote hits)", measure(
        lambda j: reader.get_many("task", batches[j]), b), BATCH))
    writer.clear()
    reader.close()
    writer.close()
    return out


def bench_redis_raw(url: str, n: int, b: int) -> list[str]:
    """Rows for RedisStore alone (envelope bytes, no disk)."""
    from cache import codec

    store = RedisStore(url)
    raw = codec.encode(VALUE)
    out = ["redis raw (RedisStore, no disk)"]
    out.append(row("SET", measure(lambda i: store.set_many({f"arcbatt:b:raw:{i}": raw}, None), n)))
    out.append(row("GET (MGET of 1)", measure(lambda i: store.get_many([f"arcbatt:b:raw:{i}"]), n)))
    batches = [[f"arcbatt:b:rawm:{j}:{k}" for k in range(BATCH)] for j in range(b)]
    out.append(row(f"SET x{BATCH} (one Lua call)", measure(
        lambda j: store.set_many(dict.fromkeys(batches[j], raw), None), b), BATCH))
    out.append(row(f"MGET x{BATCH}", measure(lambda j: store.get_many(batches[j]), b), BATCH))
    store.delete_where(None, prefix="arcbatt:b:")
    store.close()
    return out


def main() -> int:
    """Run every case and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-C", metavar="URL", help="Redis URL to use instead of a private server")
    parser.add_argument("-n", type=int, default=2000, help="single-key runs per case")
    parser.add_argument("-b", type=int, default=200, help="batched runs per case")
    args = parser.parse_args()

    server = None
    url = args.C
    if url is None:
        if shutil.which("redis-server") is None:
            print("redis-server not on PATH and no -C URL: Redis cases skipped")
        else:
            server, url = start_redis()
    tmp = tempfile.mkdtemp(prefix="bench_cache_")
    try:
        version = redis.Redis.from_url(url).info("server")["redis_version"] if url else "-"
        print(f"bench_cache: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
              f"Python {platform.python_version()}, Redis server {version}, "
              f"temp folder {tmp} ({time.strftime('%Y-%m-%d %H:%M')})")
        print(f"value: {len(__import__('msgpack').packb(VALUE))} bytes of msgpack; "
              f"latencies in microseconds")
        print(f"  {'operation':<36} {'median':>9} {'p90':>9} {'per key':>9}")
        lines = bench_disk(tmp, args.n, args.b)
        if url:
            lines += bench_layered(tmp, url, args.n, args.b)
            lines += bench_redis_raw(url, args.n, args.b)
        print("\n".join(lines))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if server is not None:
            server.kill()
            server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
