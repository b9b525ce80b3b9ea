#!/usr/bin/env python3
"""The dashboard at scale (docs/benchmarks.md, "Dashboard"): a `flotilla
server` holding 100 Clusters and 1,000 federated ReplicaSets spread over
them (written directly, with the federation's controllers off, so that the
figures are the page's own), `flotilla dashboard`, and headless Chromium
driven by Selenium. Prints one JSON object:

- load: seconds from opening the page until the Clusters view has its 100
  cards (the browser's first page, then again), and until the Workloads
  view counts its 1,000 workloads, all six kinds listed and watched;
- clusters_redraw_ms: the median time to redraw the Clusters view with its
  layout, with the cards of unchanged Clusters kept (a Cluster's status
  write redraws at most once a frame);
- rows_in_dom: how many workload rows the page keeps in the DOM (the list
  is virtualised: a screenful plus overscan, not 1,000);
- scroll: milliseconds to draw a screenful, scrolling the list top to bottom;
- update: seconds from a scale written to the federation until the page
  shows it (20 writes; p50, p99), the watch in between;
- heap: the page's JS heap after all that, in MiB;
- terminal: seconds `flotilla status -A` takes over the same objects, the
  same run's terminal twin (no dashboard of another federation runs here).

Usage: bench/dashboard_bench.py [--binary build/flotilla] [--clusters 100]
[--workloads 1000]"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "e2e"))

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

RS_STATUS = "federation.kubernetes.io/replica-set-status"
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--window-size=1400,1000", "--enable-precise-memory-info"]


def cluster(i):
    name = f"cluster-{i:03d}"
    return name, {
        "apiVersion": "federation/v1beta1", "kind": "Cluster", "metadata": {"name": name},
        "spec": {"secretRef": {"name": name}, "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": f"https://127.0.0.1:{20000 + i}"}]}}


def cluster_status(obj, i):
    obj["status"] = {
        "conditions": [{"type": "Ready", "status": "True", "reason": "ClusterReady",
                        "message": "/readyz responded with ok"},
                       {"type": "Offline", "status": "False", "reason": "ClusterReachable",
                        "message": "cluster is reachable"}],
        "region": f"region-{i % 5}", "zones": [f"region-{i % 5}-{z}" for z in "abc"],
        "kubernetesVersion": "v1.32.0", "federatedObjects": 30,
        "nodeSummary": {"totalNum": 3, "readyNum": 3},
        "resourceSummary": {"allocatable": {"cpu": "24", "memory": "96Gi", "pods": "330"},
                            "allocated": {"cpu": f"{i % 24}", "memory": "8Gi", "pods": "30"}}}
    return obj


def replicaset(i, clusters, replicas):
    names = [clusters[(i + k) % len(clusters)] for k in range(3)]
    share = {n: replicas // 3 + (1 if k < replicas % 3 else 0) for k, n in enumerate(names)}
    breakdown = {"clusters": {n: {"planned": p, "current": p, "ready": p, "unschedulable": 0}
                              for n, p in share.items()}}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": f"web-{i:04d}", "namespace": "default",
                         "annotations": {RS_STATUS: json.dumps(breakdown)}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": f"web-{i}"}},
                     "template": {"metadata": {"labels": {"app": f"web-{i}"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(HERE, "..", "build", "flotilla"))
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--workloads", type=int, default=1000)
    args = parser.parse_args()
    os.environ["FLOTILLA_BINARY"] = os.path.abspath(args.binary)
    from conftest import FlotillaServer, LineReader

    root = tempfile.mkdtemp(prefix="flotilla-dashboard-bench-")
    server = FlotillaServer(os.path.join(root, "federation"),
                            ["--storage", "memory", "--controllers",
                             "-cluster,-sync,-replicaset,-deployment,-statefulset"])
    server.start()
    api = server.raw()
    names = []
    for i in range(args.clusters):
        name, obj = cluster(i)
        created = api.post("/apis/federation/v1beta1/clusters", json=obj, timeout=30)
        assert created.status_code == 201, created.text
        put = api.put(f"/apis/federation/v1beta1/clusters/{name}/status",
                      json=cluster_status(created.json(), i), timeout=30)
        assert put.status_code == 200, put.text
        names.append(name)
    for i in range(args.workloads):
        r = api.post("/apis/apps/v1/namespaces/default/replicasets",
                     json=replicaset(i, names, 3 + i % 7), timeout=30)
        assert r.status_code == 201, r.text

    env = dict(os.environ, KUBECONFIG=server.kubeconfig)
    dashboard = subprocess.Popen([args.binary, "dashboard", "--port", "0"], env=env,
                                 stdout=subprocess.PIPE, text=True)
    url = LineReader(dashboard.stdout).wait_for_line(
        lambda l: "http://127.0.0.1:" in l, "the dashboard's address").split("at ")[1].split()[0]
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={os.path.join(root, 'chromium')}"]:
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    out = {"clusters": args.clusters, "workloads": args.workloads}
    try:
        until = lambda script, timeout=120: WebDriverWait(browser, timeout, 0.01).until(
            lambda d: d.execute_script(script))
        start = time.monotonic()
        browser.get(url + "#clusters")
        until(f"return document.querySelectorAll('.card').length === {args.clusters}")
        clusters_s = time.monotonic() - start
        browser.get("about:blank")
        start = time.monotonic()
        browser.get(url + "#workloads")
        until("const c = document.querySelector('.summary');"
              f"return c && c.textContent === '{args.workloads} federated workloads' && "
              "document.querySelectorAll('.row').length > 0")
        workloads_s = time.monotonic() - start
        browser.get("about:blank")
        start = time.monotonic()
        browser.get(url + "#clusters")
        until(f"return document.querySelectorAll('.card').length === {args.clusters}")
        out["load"] = {"clusters_view_first_s": round(clusters_s, 3),
                       "clusters_view_s": round(time.monotonic() - start, 3),
                       "workloads_view_s": round(workloads_s, 3)}
        # A redraw of 100 cards, as each Cluster status write causes (at
        # most one a frame).
        redraws = []
        for k in range(20):
            name = names[k]
            c = api.get(f"/apis/federation/v1beta1/clusters/{name}", timeout=30).json()
            c["status"]["federatedObjects"] = 1000 + k
            assert api.put(f"/apis/federation/v1beta1/clusters/{name}/status", json=c,
                           timeout=30).status_code == 200
            until(f"const e = document.querySelector('.card[data-cluster=\"{name}\"] "
                  f"[data-role=objects]'); return e && e.textContent === '{1000 + k}'")
            redraws.append(browser.execute_script("""
                const t = performance.now();
                window.dispatchEvent(new HashChangeEvent('hashchange'));
                document.body.offsetHeight;
                return performance.now() - t;"""))
        out["clusters_redraw_ms"] = round(statistics.median(redraws), 2)
        browser.get(url + "#workloads")
        until("return document.querySelectorAll('.row').length > 0")
        out["rows_in_dom"] = browser.execute_script("return document.querySelectorAll('.row').length")
        out["scroll"] = browser.execute_script("""
            const v = document.querySelector('.vlist');
            const times = [];
            for (let y = 0; y < v.scrollHeight; y += v.clientHeight) {
              const t = performance.now();
              v.scrollTop = y;
              v.dispatchEvent(new Event('scroll'));
              document.body.offsetHeight;  // layout now
              times.push(performance.now() - t);
            }
            v.scrollTop = 0;
            v.dispatchEvent(new Event('scroll'));
            times.sort((a, b) => a - b);
            return {screens: times.length, p50_ms: +times[Math.floor(times.length / 2)].toFixed(2),
                    max_ms: +times[times.length - 1].toFixed(2)};""")
        latencies = []
        for k in range(20):
            rs = api.get("/apis/apps/v1/namespaces/default/replicasets/web-0000", timeout=30).json()
            planned = 100 + k
            rs["metadata"]["annotations"][RS_STATUS] = json.dumps(
                {"clusters": {names[0]: {"planned": planned, "ready": planned}}})
            start = time.monotonic()
            put = api.put("/apis/apps/v1/namespaces/default/replicasets/web-0000", json=rs,
                          timeout=30)
            assert put.status_code == 200, put.text
            until("const s = document.querySelector('[data-workload=\"default/replicaset/web-0000\"] .segment');"
                  f"return s && s.dataset.planned === '{planned}'")
            latencies.append(time.monotonic() - start)
        out["update"] = {"writes": len(latencies),
                         "p50_s": round(statistics.median(latencies), 3),
                         "p99_s": round(percentile(latencies, 99), 3)}
        heap = browser.execute_script("return performance.memory && performance.memory.usedJSHeapSize")
        out["heap_mib"] = round(heap / 2 ** 20, 1) if heap else None
    finally:
        browser.quit()
        dashboard.terminate()
        dashboard.wait(timeout=30)
    start = time.monotonic()
    status = subprocess.run([args.binary, "status", "-A"], env=env, capture_output=True, text=True)
    assert status.returncode == 0, status.stderr
    out["terminal"] = {"status_all_s": round(time.monotonic() - start, 3),
                       "lines": len(status.stdout.splitlines())}
    server.stop()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
