"""The federation's DNS end to end (seeds 003 and 002, docs/dns.md): a
`flotilla server --dns-address 127.0.0.1:0` with three `flotilla member`
clusters in two regions and three zones, each handing out its own
load-balancer addresses, asked with the real `dig` (bind9-dnsutils).

Covered too: an Ingress whose hosts (a wildcard one too), under the
federation's domain, answer the addresses of the members that serve it
(those with a ready backend), changing when the backends move.

One federation serves the module; each test has its own namespace.
"""

import json
import random
import re
import socket
import subprocess

import pytest

from conftest import namespace_name, wait_for
from federation import FED_ARGS, SLOW, Federation

# name: (region, zone, load-balancer range)
CLUSTERS = {"c1": ("eu", "eu-a", "172.18.1.0/24"),
            "c2": ("eu", "eu-b", "172.18.2.0/24"),
            "c3": ("us", "us-a", "172.18.3.0/24")}
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--recheck-delay", "2s",
                          "--member-change-delay", "200ms", "--dns-address", "127.0.0.1:0"]
DOMAIN = "flotilla.local"


def dns_port_in(lines):
    line = next(l for l in lines if "UDP and TCP port" in l)
    return int(re.search(r"UDP and TCP port (\d+)", line).group(1))


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    federation = Federation(tmp_path_factory.mktemp("fed-dns"), SERVER_ARGS).start()
    try:
        federation.dns_port = dns_port_in(federation.server.stdout.lines)
        # Each member serves its own cluster DNS and forwards the
        # federation's domain to the federation's DNS.
        for name, (region, zone, cidr) in CLUSTERS.items():
            federation.add_member(name, {}, [
                "--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
                "--pod-startup", "200ms", "--region", region, "--zones", zone,
                "--lb-cidr", cidr, "--dns-address", "127.0.0.1:0",
                "--stub-domain", f"{DOMAIN}=127.0.0.1:{federation.dns_port}"], wait=False)
        for name in CLUSTERS:
            federation.wait_ready(name)
        federation.member_dns = {name: dns_port_in(federation[name].process.stdout.lines)
                                 for name in CLUSTERS}
        yield federation
    except BaseException:
        federation.close()
        raise
    federation.close()


@pytest.fixture
def ns(request, fed):
    name = namespace_name(request.node.name)
    fed.create_namespace(name)
    yield name
    for c in CLUSTERS:
        fed[c].sigcont()
    for c in CLUSTERS:
        fed.wait_ready(c)
    fed.kubectl("delete", "deploy,sts,svc,ing", "--all", "-n", name, "--wait=false", check=False)


def dig(fed, name, rtype="A", *flags, port=None):
    """`dig +short` lines (for CNAME chains: the aliases, then the records),
    from the federation's DNS or the one on `port`."""
    out = subprocess.run(["dig", "@127.0.0.1", "-p", str(port or fed.dns_port), "+short", "+tries=5",
                          "+time=2", *flags, name, rtype],
                         capture_output=True, text=True, timeout=60)
    if out.returncode == 9:  # no reply to any try
        return ["no reply"]
    assert out.returncode == 0, out.stderr
    return [l for l in out.stdout.splitlines() if l]


def dig_full(fed, name, rtype="A", *flags):
    out = subprocess.run(["dig", "@127.0.0.1", "-p", str(fed.dns_port), "+tries=5", "+time=2",
                          *flags, name, rtype], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def global_name(ns, svc):
    return f"{svc}.{ns}.flotilla.svc.{DOMAIN}"


def regional(ns, svc, region):
    return f"{svc}.{ns}.flotilla.svc.{region}.{DOMAIN}"


def zonal(ns, svc, zone, region):
    return f"{svc}.{ns}.flotilla.svc.{zone}.{region}.{DOMAIN}"


def web(fed, ns, replicas=3, annotations=None):
    """A Deployment of `replicas` behind the LoadBalancer Service `web`."""
    meta = {"name": "web"}
    if annotations:
        meta["annotations"] = annotations
    fed.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"terminationGracePeriodSeconds": 0,
                                               "containers": [{"name": "web",
                                                               "image": "nginx:1.27"}]}}}},
               ns)
    fed.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"type": "LoadBalancer", "selector": {"app": "web"},
                         "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}}, ns)


def store(fed, ns, replicas, annotations=None):
    """The seed's `etcd` headless Service and `store` StatefulSet."""
    fed.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "etcd"},
                "spec": {"clusterIP": "None", "selector": {"app": "etcd"},
                         "ports": [{"name": "store", "port": 80, "protocol": "TCP"}]}}, ns)
    meta = {"name": "store"}
    if annotations:
        meta["annotations"] = annotations
    fed.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta,
                "spec": {"serviceName": "etcd", "replicas": replicas,
                         "selector": {"matchLabels": {"app": "etcd"}},
                         "template": {"metadata": {"labels": {"app": "etcd"}},
                                      "spec": {"terminationGracePeriodSeconds": 0,
                                               "containers": [{"name": "etcd",
                                                               "image": "etcd:3.0.17"}]}}}},
               ns)


def member_ip(fed, cluster, ns, name="web"):
    """The load-balancer address the member gave its copy of `name`."""
    def ip():
        svc = fed[cluster].get_json(f"/api/v1/namespaces/{ns}/services/{name}")
        ingress = (svc or {}).get("status", {}).get("loadBalancer", {}).get("ingress", [])
        return ingress[0].get("ip") if ingress else None
    return wait_for(ip, f"{cluster}'s load balancer for {name}")


def test_a_service_answers_globally_by_region_and_by_zone(fed, ns):
    web(fed, ns)
    ips = {c: member_ip(fed, c, ns) for c in CLUSTERS}
    assert len(set(ips.values())) == 3, ips  # each member its own range
    assert ips["c2"].startswith("172.18.2.")
    wait_for(lambda: sorted(dig(fed, global_name(ns, "web"))) == sorted(ips.values()),
             "every member's address at the global name")
    assert sorted(dig(fed, regional(ns, "web", "eu"))) == sorted([ips["c1"], ips["c2"]])
    assert dig(fed, zonal(ns, "web", "eu-b", "eu")) == [ips["c2"]]
    assert dig(fed, zonal(ns, "web", "us-a", "us")) == [ips["c3"]]
    # SRV for the named port, at each level.
    assert dig(fed, "_http._tcp." + global_name(ns, "web"), "SRV") == \
        [f"0 100 80 {global_name(ns, 'web')}."]
    assert dig(fed, "_http._tcp." + zonal(ns, "web", "eu-a", "eu"), "SRV") == \
        [f"0 100 80 {zonal(ns, 'web', 'eu-a', 'eu')}."]
    # Authoritative answers.
    assert "flags: qr aa" in dig_full(fed, global_name(ns, "web"))


def test_a_copy_without_ready_pods_leaves_and_its_zone_becomes_an_alias(fed, ns):
    # c3 gets no replicas: its copy of the Service has no ready endpoint.
    web(fed, ns, annotations={"federation.kubernetes.io/deployment-preferences": json.dumps(
        {"clusters": {"*": {"weight": 1}, "c3": {"maxReplicas": 0}}})})
    ips = {c: member_ip(fed, c, ns) for c in CLUSTERS}
    wait_for(lambda: sorted(dig(fed, global_name(ns, "web"))) == sorted([ips["c1"], ips["c2"]]),
             "c3's address left the global name")
    # us-a -> us -> global.
    assert dig(fed, zonal(ns, "web", "us-a", "us")) == \
        [regional(ns, "web", "us") + ".", global_name(ns, "web") + "."] + \
        sorted(dig(fed, global_name(ns, "web")), key=lambda a: tuple(map(int, a.split("."))))
    # Its pods come back: so does its address, and the alias goes.
    fed.kubectl("annotate", "deploy", "web", "-n", ns, "--overwrite",
                "federation.kubernetes.io/deployment-preferences=" +
                json.dumps({"rebalance": True, "clusters": {"*": {"weight": 1}}}))
    wait_for(lambda: dig(fed, zonal(ns, "web", "us-a", "us")) == [ips["c3"]],
             "c3's address back at its zone")


def ingress_ip(fed, cluster, ns, name="shop"):
    """The address member `cluster`'s ingress controller gave its copy of
    the Ingress `name` (None: no copy, or no address yet)."""
    ing = fed[cluster].get_json(f"/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses/{name}")
    entries = (ing or {}).get("status", {}).get("loadBalancer", {}).get("ingress", [])
    return entries[0].get("ip") if entries else None


def test_an_ingress_host_answers_the_clusters_that_serve_it(fed, ns):
    prefs = "federation.kubernetes.io/deployment-preferences"
    # c3 runs no pod of web: the Ingress is not served there.
    web(fed, ns, annotations={prefs: json.dumps(
        {"clusters": {"*": {"weight": 1}, "c3": {"maxReplicas": 0}}})})
    host = f"shop.{ns}.{DOMAIN}"
    fed.create({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "shop"},
                "spec": {"rules": [{"host": h, "http": {"paths": [
                    {"path": "/", "pathType": "Prefix",
                     "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}
                    for h in (host, f"*.eu.{host}")]}}, ns)

    def served_by(*clusters):
        # The wildcard host answers any name under it, with the same addresses.
        ips = [ingress_ip(fed, c, ns) for c in clusters]
        return None not in ips and sorted(dig(fed, host)) == sorted(ips) and \
            sorted(dig(fed, f"www.eu.{host}")) == sorted(ips)
    wait_for(lambda: served_by("c1", "c2"), lambda: f"{host} answering c1 and c2: {dig(fed, host)}")
    assert ingress_ip(fed, "c3", ns) is None
    assert {ingress_ip(fed, "c1", ns)[:9], ingress_ip(fed, "c2", ns)[:9]} == {"172.18.1.",
                                                                               "172.18.2."}
    out = fed.kubectl("get", "ing", "shop", "-n", ns, "-o", "json").stdout
    addresses = [i["ip"] for i in json.loads(out)["status"]["loadBalancer"]["ingress"]]
    assert sorted(addresses) == sorted(dig(fed, host))
    # The pods leave c2 for c3: c2's copy and address go, c3's come.
    fed.kubectl("annotate", "deploy", "web", "-n", ns, "--overwrite", f"{prefs}=" + json.dumps(
        {"rebalance": True, "clusters": {"*": {"weight": 1}, "c2": {"maxReplicas": 0}}}))
    wait_for(lambda: served_by("c1", "c3") and ingress_ip(fed, "c2", ns) is None,
             lambda: f"{host} answering c1 and c3: {dig(fed, host)}")


def test_a_stopped_member_leaves_the_answers_and_comes_back(fed, ns):
    web(fed, ns)
    ips = {c: member_ip(fed, c, ns) for c in CLUSTERS}
    wait_for(lambda: len(dig(fed, global_name(ns, "web"))) == 3, "three addresses")
    fed["c1"].sigstop()
    fed.wait_not_ready("c1")
    wait_for(lambda: sorted(dig(fed, global_name(ns, "web"))) == sorted([ips["c2"], ips["c3"]]),
             "c1's address gone once it is not Ready", timeout=SLOW)
    assert dig(fed, zonal(ns, "web", "eu-a", "eu"))[0] == regional(ns, "web", "eu") + "."
    fed["c1"].sigcont()
    fed.wait_ready("c1")
    wait_for(lambda: dig(fed, zonal(ns, "web", "eu-a", "eu")) == [ips["c1"]],
             "c1's address back", timeout=SLOW)


def test_stateful_pods_have_srv_and_address_records(fed, ns):
    store(fed, ns, 11, {"federation.kubernetes.io/statefulset-lb-needed": "true"})
    pods = [f"store-c1-{i}" for i in range(4)] + [f"store-c2-{i}" for i in range(4)] + \
        [f"store-c3-{i}" for i in range(3)]
    srv = "_store._tcp." + global_name(ns, "etcd")
    wait_for(lambda: sorted(l.split()[3] for l in dig(fed, srv, "SRV", "+tcp")) ==
             sorted(f"{p}.{global_name(ns, 'etcd')}." for p in pods),
             "an SRV record per pod", timeout=SLOW)
    for p in pods:
        svc = json.loads(fed.kubectl("get", "svc", p, "-n", ns, "-o", "json").stdout)
        ip = svc["status"]["loadBalancer"]["ingress"][0]["ip"]
        assert dig(fed, f"{p}.{global_name(ns, 'etcd')}") == [ip], p
    assert len(dig(fed, global_name(ns, "etcd"), "A", "+tcp")) == 11
    # Eleven SRV records do not fit in 512 bytes: TC over UDP, all over TCP.
    udp = dig_full(fed, srv, "SRV", "+noedns", "+ignore")
    assert re.search(r"flags: qr aa tc", udp), udp
    assert len(dig(fed, srv, "SRV", "+tcp")) == 11


def test_negative_answers_and_names_elsewhere(fed, ns):
    out = dig_full(fed, f"nothing.{ns}.flotilla.svc.{DOMAIN}")
    assert "status: NXDOMAIN" in out
    assert re.search(r"AUTHORITY SECTION:\n" + re.escape(DOMAIN) + r"\.\s+\d+\s+IN\s+SOA", out)
    assert "status: REFUSED" in dig_full(fed, "example.com")
    assert dig(fed, DOMAIN, "NS") == [f"ns.{DOMAIN}."]
    assert len(dig(fed, DOMAIN, "SOA")) == 1


def test_malformed_packets_leave_it_answering(fed, ns):
    web(fed, ns)
    wait_for(lambda: len(dig(fed, global_name(ns, "web"))) == 3, "three addresses")
    rng = random.Random(7)
    good = bytes.fromhex("123401000001000000000000") + b"".join(
        bytes([len(p)]) + p.encode() for p in global_name(ns, "web").split(".")) + b"\0\0\1\0\1"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for i in range(3000):
            bad = bytearray(good)
            if i % 3 == 0:
                bad = bad[:rng.randrange(len(bad) + 1)]
            elif i % 3 == 1:
                for _ in range(3):
                    bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
            else:
                bad = bytearray(rng.randrange(256) for _ in range(rng.randrange(600)))
            s.sendto(bytes(bad), ("127.0.0.1", fed.dns_port))
    # Over TCP too: a length that lies, then garbage.
    with socket.create_connection(("127.0.0.1", fed.dns_port)) as t:
        t.sendall(b"\xff\xff" + bytes(100))
    # Asked until answered: the junk may fill the socket's buffer for a while.
    wait_for(lambda: len(dig(fed, global_name(ns, "web"))) == 3, "answers after the junk")


def test_a_members_dns_answers_its_own_names_and_the_federations(fed, ns):
    # The seed's local identity: store-c1-0.etcd.NS.svc.cluster.local is the
    # pod's IP in c1, answered by c1's own DNS.
    store(fed, ns, 3)

    def pod_ip():
        pod = fed["c1"].get_json(f"/api/v1/namespaces/{ns}/pods/store-c1-0")
        return (pod or {}).get("status", {}).get("podIP")
    ip = wait_for(pod_ip, "store-c1-0's IP in c1", timeout=SLOW)
    wait_for(lambda: dig(fed, f"store-c1-0.etcd.{ns}.svc.cluster.local",
                         port=fed.member_dns["c1"]) == [ip], "c1's DNS names its pod")
    # Not in c2: each cluster answers its own.
    assert dig(fed, f"store-c1-0.etcd.{ns}.svc.cluster.local", port=fed.member_dns["c2"]) == []
    # The federation's global name, through c2's stub domain.
    web(fed, ns)
    wait_for(lambda: len(dig(fed, global_name(ns, "web"), port=fed.member_dns["c2"])) == 3,
             "the global name through a member's DNS")
