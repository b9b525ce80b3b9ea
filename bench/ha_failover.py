#!/usr/bin/env python3
"""Failover of the federation controllers (docs/benchmarks.md, "High
availability"): one etcd member and two `flotilla server --storage etcd`
processes (the second on a copy of the first's credentials), with the lease
flags given (client-go's defaults: 15 s, 10 s, 2 s). Each trial kill -9's the
leading server and measures, from the kill, how long until the other reports
itself leading in /metrics (polled every 20 ms), then restarts the killed one,
which must come back as a follower. Prints one JSON object.

Usage: FLOTILLA_BINARY=build/flotilla bench/ha_failover.py [--trials 5]
       [--lease-duration 15s --renew-deadline 10s --retry-period 2s]
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "e2e"))

from conftest import Etcd, FlotillaServer  # noqa: E402


def leading(server):
    """The server's own view, through one kept-alive connection per server."""
    if getattr(server, "metrics_client", None) is None or server.metrics_client not in \
            server._clients:
        server.metrics_client = server.raw()
    text = server.metrics_client.get("/metrics", timeout=60).text
    for line in text.splitlines():
        if line.startswith("flotilla_leader_election_master_status"):
            return line.rsplit(" ", 1)[1] == "1"
    return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--lease-duration", default="15s")
    parser.add_argument("--renew-deadline", default="10s")
    parser.add_argument("--retry-period", default="2s")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="flotilla-ha-bench.")
    etcd = Etcd(os.path.join(root, "etcd"))
    flags = ["--controllers=cluster", "--log-level", "warn", *etcd.server_args(),
             "--leader-elect-lease-duration", args.lease_duration,
             "--leader-elect-renew-deadline", args.renew_deadline,
             "--leader-elect-retry-period", args.retry_period]
    servers = [FlotillaServer(os.path.join(root, "one"), flags).start()]
    shutil.copytree(os.path.join(root, "one", "pki"), os.path.join(root, "two", "pki"))
    servers.append(FlotillaServer(os.path.join(root, "two"), flags).start())
    times = []
    try:
        deadline = time.monotonic() + 60
        while not any(leading(s) for s in servers):
            assert time.monotonic() < deadline, "nobody leads"
            time.sleep(0.05)
        for trial in range(args.trials):
            leader = 0 if leading(servers[0]) else 1
            other = servers[1 - leader]
            servers[leader].kill9()
            killed = time.monotonic()
            while not leading(other):
                assert time.monotonic() - killed < 120, "no takeover"
                time.sleep(0.02)
            took = time.monotonic() - killed
            times.append(took)
            print(f"trial {trial + 1}: the other server leads {took:.2f} s after kill -9",
                  file=sys.stderr)
            servers[leader].start()
            assert not leading(servers[leader]), "a restarted server took the lease back"
        print(json.dumps({
            "lease_duration": args.lease_duration, "renew_deadline": args.renew_deadline,
            "retry_period": args.retry_period, "trials": len(times),
            "failover_s": {"min": round(min(times), 2), "median": round(statistics.median(times), 2),
                           "max": round(max(times), 2)},
            "load": open("/proc/loadavg").read().split()[:3],
        }, indent=2))
    finally:
        for s in servers:
            if s.running():
                s.stop()
        etcd.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
