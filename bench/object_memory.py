#!/usr/bin/python3
"""Memory per stored object, by kind (docs/benchmarks.md, "Memory per object").

Starts `flotilla server` (sqlite, its defaults) and, for each kind, creates
--count objects through the official Python client, then reads the server's
RSS: (RSS after - RSS before) / count is what one object of that kind costs
the server, everything that holds it included (the stored record, its key,
the index, the history entry, the allocator's overhead). Then updates each
object once, which shows what a superseded value costs while the watch
history holds it.

The peer: a real kube-apiserver (the one ../shared/realmember/ builds, run
with SIM_NODES=0), given by --peer-kubeconfig and its pids: the same objects,
the RSS of kube-apiserver and of its etcd.

Prints one JSON object. Usage:
  bench/object_memory.py [--flotilla build/flotilla] [--count 2000]
                         [--peer-kubeconfig K --peer-pid P --peer-etcd-pid E]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import kubernetes
from kubernetes import client

KINDS = ["Event", "ConfigMap", "Secret", "Service", "Deployment"]


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def body(kind, i, generation=0):
    name = f"obj-{i:06d}"
    meta = client.V1ObjectMeta(name=name, labels={"app": "bench", "tier": "web"})
    if kind == "Event":
        return client.CoreV1Event(
            metadata=meta,
            involved_object=client.V1ObjectReference(
                kind="Pod", namespace="bench", name="web-7d9f8b6c5-abcde",
                uid="8f0e7c1a-1b2c-4d5e-9f00-112233445566", api_version="v1"),
            reason="Scheduled", type="Normal", count=1 + generation,
            message="Successfully assigned bench/web-7d9f8b6c5-abcde to node-1",
            source=client.V1EventSource(component="default-scheduler"),
            first_timestamp="2026-11-29T03:00:00Z", last_timestamp="2026-11-29T03:00:00Z")
    if kind == "ConfigMap":
        return client.V1ConfigMap(metadata=meta, data={"settings": f"{generation}" + "x" * 1000})
    if kind == "Secret":
        return client.V1Secret(metadata=meta, string_data={"token": f"{generation}" + "y" * 64})
    if kind == "Service":
        # Headless: 2,000 Services would fill a real server's service range.
        return client.V1Service(metadata=meta, spec=client.V1ServiceSpec(
            cluster_ip="None", selector={"app": f"bench-{generation}"},
            ports=[client.V1ServicePort(name="http", port=80, target_port=8080)]))
    if kind == "Deployment":
        labels = {"app": name}
        return client.V1Deployment(metadata=meta, spec=client.V1DeploymentSpec(
            replicas=2, selector=client.V1LabelSelector(match_labels=labels),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=labels),
                spec=client.V1PodSpec(containers=[client.V1Container(
                    name="app", image=f"nginx:1.{generation}",
                    ports=[client.V1ContainerPort(container_port=8080)])]))))
    raise ValueError(kind)


def write(api_client, kind, i, generation):
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    obj = body(kind, i, generation)
    name = obj.metadata.name
    calls = {
        "Event": (core.create_namespaced_event, core.replace_namespaced_event),
        "ConfigMap": (core.create_namespaced_config_map, core.replace_namespaced_config_map),
        "Secret": (core.create_namespaced_secret, core.replace_namespaced_secret),
        "Service": (core.create_namespaced_service, core.patch_namespaced_service),
        "Deployment": (apps.create_namespaced_deployment, apps.patch_namespaced_deployment),
    }[kind]
    if generation == 0:
        calls[0]("bench", obj)
    else:
        calls[1](name, "bench", obj)


def measure(kubeconfig, pids, count):
    """pids: {"name": pid}; per kind and phase, bytes per object for each."""
    api_client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
    core = client.CoreV1Api(api_client)
    try:
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="bench")))
    except client.ApiException as e:
        if e.status != 409:
            raise
    out = {}
    for kind in KINDS:
        row = {}
        for phase, generation in (("create", 0), ("update", 1)):
            time.sleep(2)
            before = {n: rss_mib(p) for n, p in pids.items()}
            for i in range(count):
                write(api_client, kind, i, generation)
            time.sleep(2)
            for n, p in pids.items():
                row[f"{n}_{phase}_bytes_per_object"] = round(
                    (rss_mib(p) - before[n]) * 1024 * 1024 / count)
        out[kind] = row
    out["rss_mib_end"] = {n: round(rss_mib(p), 1) for n, p in pids.items()}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--flotilla", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                        "flotilla"))
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--peer-kubeconfig")
    ap.add_argument("--peer-pid", type=int)
    ap.add_argument("--peer-etcd-pid", type=int)
    args = ap.parse_args()
    result = {"count": args.count}
    with tempfile.TemporaryDirectory() as work:
        log = open(os.path.join(work, "server.log"), "w+")
        server = subprocess.Popen([args.flotilla, "server", "--data-dir", work + "/data",
                                   "--secure-port", "0"], stdout=log, stderr=subprocess.STDOUT)
        try:
            kubeconfig = work + "/data/kubeconfig"
            for _ in range(600):
                log.seek(0)
                if re.search("listening on", log.read()) and os.path.exists(kubeconfig):
                    break
                time.sleep(0.1)
            result["flotilla"] = measure(kubeconfig, {"server": server.pid}, args.count)
        finally:
            server.terminate()
            server.wait()
    if args.peer_kubeconfig:
        pids = {"kube_apiserver": args.peer_pid}
        if args.peer_etcd_pid:
            pids["etcd"] = args.peer_etcd_pid
        result["peer"] = measure(args.peer_kubeconfig, pids, args.count)
    json.dump(result, sys.stdout)
    print()


if __name__ == "__main__":
    main()
