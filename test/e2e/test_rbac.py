"""RBAC, service accounts, impersonation and the audit log, driven by the real
kubectl against `flotilla server`, the way a Kubernetes user meets them.

Users other than the built-in ones authenticate with client certificates
signed by the server's CA (as kubeadm's users do), made here with openssl."""

import base64
import json
import os
import subprocess

import pytest
import yaml

from conftest import namespace_name, wait_for

AUDIT_POLICY = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "audit-policy.yaml")


def user_kubeconfig(server, tmp_path, user, groups=()):
    """A kubeconfig for `user` with a client certificate from the server's CA."""
    pki = os.path.join(server.data_dir, "pki")
    key, csr, crt = (str(tmp_path / f"{user}.{ext}") for ext in ("key", "csr", "crt"))
    subject = f"/CN={user}" + "".join(f"/O={g}" for g in groups)
    subprocess.run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", csr,
                    "-subj", subject], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"),
                    "-CAkey", os.path.join(pki, "ca.key"), "-CAcreateserial", "-days", "1",
                    "-out", crt], check=True, capture_output=True)
    return kubeconfig_with_user(server, tmp_path, user, {
        "client-certificate": crt, "client-key": key})


def kubeconfig_with_user(server, tmp_path, name, user_entry):
    with open(server.kubeconfig) as f:
        doc = yaml.safe_load(f)
    for entry in doc["users"]:
        entry["user"] = dict(user_entry)
    path = tmp_path / f"{name}.kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def new_namespace(server, request, suffix=""):
    name = namespace_name(request.node.name + suffix)
    server.kubectl("create", "namespace", name)
    return name


def can_i(server, *args, kubeconfig=None):
    result = server.kubectl("auth", "can-i", *args, kubeconfig=kubeconfig, check=False)
    return result.stdout.strip()


def test_user_bound_to_edit_creates_in_its_namespace_only(server, tmp_path, request):
    a, b = new_namespace(server, request, "-a"), new_namespace(server, request, "-b")
    alice = user_kubeconfig(server, tmp_path, "alice")
    denied = server.kubectl("get", "configmaps", "-n", a, kubeconfig=alice, check=False)
    assert denied.returncode != 0 and 'User "alice" cannot list resource' in denied.stderr
    server.kubectl("create", "rolebinding", "alice-edit", "--clusterrole=edit", "--user=alice",
                   "-n", a)
    wait_for(lambda: can_i(server, "create", "configmaps", "-n", a, kubeconfig=alice) == "yes",
             "the binding to take effect")
    server.kubectl("create", "configmap", "c", "-n", a, "--from-literal=k=v", kubeconfig=alice)
    refused = server.kubectl("create", "configmap", "c", "-n", b, kubeconfig=alice, check=False)
    assert refused.returncode != 0
    assert (f'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API '
            f'group "" in the namespace "{b}"') in refused.stderr, refused.stderr
    assert server.kubectl("get", "cm", "c", "-n", a, "-o", "jsonpath={.data.k}").stdout == "v"


def test_auth_can_i_and_list_answer_as_kube_apiserver(server, tmp_path, request):
    ns = new_namespace(server, request)
    bob = user_kubeconfig(server, tmp_path, "bob", groups=["devs"])
    server.kubectl("create", "rolebinding", "devs-view", "--clusterrole=view", "--group=devs",
                   "-n", ns)
    wait_for(lambda: can_i(server, "list", "pods", "-n", ns, kubeconfig=bob) == "yes",
             "the binding to take effect")
    no = server.kubectl("auth", "can-i", "delete", "deployments", "-n", ns, kubeconfig=bob,
                        check=False)
    assert (no.returncode, no.stdout.strip()) == (1, "no")
    assert can_i(server, "get", "deployments.apps/scale", "-n", ns, kubeconfig=bob) == "yes"
    assert can_i(server, "get", "secrets", "-n", ns, kubeconfig=bob) == "no"
    assert can_i(server, "get", "/metrics", kubeconfig=bob) == "no"
    assert can_i(server, "get", "/version", kubeconfig=bob) == "yes"
    # The admin asks on bob's behalf (impersonation).
    assert can_i(server, "list", "configmaps", "-n", ns, "--as", "bob", "--as-group", "devs") \
        == "yes"
    assert can_i(server, "list", "configmaps", "-n", ns, "--as", "bob") == "no"

    listed = server.kubectl("auth", "can-i", "--list", "-n", ns, kubeconfig=bob).stdout
    lines = listed.splitlines()
    assert lines[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names",
                                "Verbs"], listed
    rows = {line.split()[0]: line for line in lines[1:]}
    assert "[get list watch]" in rows["configmaps"], listed
    assert "[create]" in rows["selfsubjectaccessreviews.authorization.k8s.io"], listed
    assert "secrets" not in rows
    assert "/version" in listed and "/metrics" not in listed, listed


def test_auth_whoami(server, tmp_path, request):
    ns = new_namespace(server, request)
    gina = user_kubeconfig(server, tmp_path, "gina", groups=["devs", "ops"])
    out = server.kubectl("auth", "whoami", "-o", "json", kubeconfig=gina).stdout
    info = json.loads(out)["status"]["userInfo"]
    assert info["username"] == "gina"
    assert info["groups"] == ["devs", "ops", "system:authenticated"]
    server.kubectl("create", "serviceaccount", "robot", "-n", ns)
    as_sa = server.kubectl("auth", "whoami", "--as", f"system:serviceaccount:{ns}:robot").stdout
    assert f"system:serviceaccount:{ns}:robot" in as_sa and "system:serviceaccounts" in as_sa


def test_view_reads_configmaps_but_not_secrets(server, tmp_path, request):
    ns = new_namespace(server, request)
    server.kubectl("create", "configmap", "settings", "-n", ns, "--from-literal=a=1")
    server.kubectl("create", "secret", "generic", "creds", "-n", ns, "--from-literal=p=s")
    carol = user_kubeconfig(server, tmp_path, "carol")
    server.kubectl("create", "rolebinding", "carol-view", "--clusterrole=view", "--user=carol",
                   "-n", ns)
    wait_for(lambda: can_i(server, "get", "configmaps", "-n", ns, kubeconfig=carol) == "yes",
             "the binding to take effect")
    assert server.kubectl("get", "cm", "settings", "-n", ns, "-o", "jsonpath={.data.a}",
                          kubeconfig=carol).stdout == "1"
    secret = server.kubectl("get", "secret", "creds", "-n", ns, kubeconfig=carol, check=False)
    assert secret.returncode != 0
    assert 'secrets "creds" is forbidden: User "carol" cannot get resource "secrets"' \
        in secret.stderr, secret.stderr
    # The member clusters' credentials live in flotilla-system: hidden from view too.
    server.kubectl("create", "clusterrolebinding", "carol-view-all", "--clusterrole=view",
                   "--user=carol")
    wait_for(lambda: can_i(server, "list", "configmaps", "-A", kubeconfig=carol) == "yes",
             "the cluster-wide binding to take effect")
    assert can_i(server, "list", "secrets", "-n", "flotilla-system", kubeconfig=carol) == "no"


def test_escalation_is_refused(server, tmp_path, request):
    ns = new_namespace(server, request)
    dave = user_kubeconfig(server, tmp_path, "dave")
    server.kubectl("create", "rolebinding", "dave-admin", "--clusterrole=admin", "--user=dave",
                   "-n", ns)
    wait_for(lambda: can_i(server, "create", "rolebindings", "-n", ns, kubeconfig=dave) == "yes",
             "the binding to take effect")
    # What he holds he may grant...
    server.kubectl("create", "rolebinding", "erin-edit", "--clusterrole=edit", "--user=erin",
                   "-n", ns, kubeconfig=dave)
    # ...but not more.
    root = server.kubectl("create", "rolebinding", "dave-root", "--clusterrole=cluster-admin",
                          "--user=dave", "-n", ns, kubeconfig=dave, check=False)
    assert root.returncode != 0
    assert "is attempting to grant RBAC permissions not currently held" in root.stderr, root.stderr
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "cluster-deleter", "namespace": ns},
            "rules": [{"apiGroups": ["federation"], "resources": ["clusters"],
                       "verbs": ["delete"]}]}
    made = server.kubectl("apply", "-f", "-", input=json.dumps(role), kubeconfig=dave, check=False)
    assert made.returncode != 0
    assert '{APIGroups:["federation"], Resources:["clusters"], Verbs:["delete"]}' in made.stderr, \
        made.stderr
    assert server.kubectl("get", "role", "-n", ns, "-o", "name").stdout.strip() == ""


def test_aggregated_cluster_roles_pick_up_new_rules(server):
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "crontabs-reader",
                         "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
            "rules": [{"apiGroups": ["stable.example.com"], "resources": ["crontabs"],
                       "verbs": ["get", "list", "watch"]}]}
    server.kubectl("apply", "-f", "-", input=json.dumps(role))

    def aggregated(name):
        doc = json.loads(server.kubectl("get", "clusterrole", name, "-o", "json").stdout)
        return any("crontabs" in r.get("resources", []) for r in doc.get("rules") or [])

    for name in ("view", "edit", "admin"):
        wait_for(lambda: aggregated(name), f"{name} to aggregate the new rule")
    server.kubectl("delete", "clusterrole", "crontabs-reader")
    wait_for(lambda: not aggregated("view"), "view to drop the rule again")


def test_create_token_works_until_its_service_account_is_deleted(server, tmp_path, request):
    ns = new_namespace(server, request)
    server.kubectl("create", "serviceaccount", "bot", "-n", ns)
    server.kubectl("create", "rolebinding", "bot-edit", "--clusterrole=edit",
                   f"--serviceaccount={ns}:bot", "-n", ns)
    short = server.kubectl("create", "token", "bot", "-n", ns, "--duration=1m", check=False)
    assert short.returncode != 0
    assert "may not specify a duration less than 10 minutes" in short.stderr, short.stderr
    token = server.kubectl("create", "token", "bot", "-n", ns, "--duration=20m").stdout.strip()
    header, payload, _ = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == f"system:serviceaccount:{ns}:bot"
    assert claims["exp"] - claims["iat"] == 1200
    bot = kubeconfig_with_user(server, tmp_path, "bot", {"token": token})
    wait_for(lambda: can_i(server, "create", "deployments", "-n", ns, kubeconfig=bot) == "yes",
             "the binding to take effect")
    server.kubectl("create", "configmap", "from-bot", "-n", ns, kubeconfig=bot)
    forbidden = server.kubectl("get", "cm", "-n", "default", kubeconfig=bot, check=False)
    assert f'User "system:serviceaccount:{ns}:bot" cannot list' in forbidden.stderr
    server.kubectl("delete", "serviceaccount", "bot", "-n", ns)
    gone = server.kubectl("get", "cm", "-n", ns, kubeconfig=bot, check=False)
    assert gone.returncode != 0 and "Unauthorized" in gone.stderr, gone.stderr


def test_as_needs_impersonate(server, tmp_path, request):
    ns = new_namespace(server, request)
    frank = user_kubeconfig(server, tmp_path, "frank")
    server.kubectl("create", "rolebinding", "frank-edit", "--clusterrole=edit", "--user=frank",
                   "-n", ns)
    wait_for(lambda: can_i(server, "get", "pods", "-n", ns, kubeconfig=frank) == "yes",
             "the binding to take effect")
    as_admin = server.kubectl("get", "cm", "-n", ns, "--as", "flotilla-admin", kubeconfig=frank,
                              check=False)
    assert as_admin.returncode != 0
    assert ('users "flotilla-admin" is forbidden: User "frank" cannot impersonate resource '
            '"users" in API group "" at the cluster scope') in as_admin.stderr, as_admin.stderr
    as_masters = server.kubectl("get", "ns", "--as", "frank", "--as-group", "system:masters",
                                kubeconfig=frank, check=False)
    assert as_masters.returncode != 0 and "impersonate" in as_masters.stderr
    # edit may impersonate service accounts of its namespace, as in Kubernetes.
    server.kubectl("create", "serviceaccount", "helper", "-n", ns)
    as_sa = server.kubectl("get", "cm", "-n", ns, "--as", f"system:serviceaccount:{ns}:helper",
                           kubeconfig=frank, check=False)
    assert f'User "system:serviceaccount:{ns}:helper" cannot list' in as_sa.stderr, as_sa.stderr


def audit_events(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_audit_log_follows_the_policy(server_factory, tmp_path):
    log = tmp_path / "audit.log"
    srv = server_factory(["--audit-log-path", str(log), "--audit-policy-file", AUDIT_POLICY])
    srv.start()
    srv.kubectl("create", "configmap", "audited", "-n", "default", "--from-literal=k=v")
    srv.kubectl("create", "secret", "generic", "hush", "-n", "default",
                "--from-literal=p=topsecretvalue")
    srv.kubectl("get", "secret", "hush", "-n", "default")
    denied = srv.kubectl("create", "configmap", "nope", "-n", "default",
                         kubeconfig=srv.readonly_kubeconfig, check=False)
    assert denied.returncode != 0

    def find(pred):
        return [e for e in audit_events(log) if pred(e)]

    wait_for(lambda: find(lambda e: e["verb"] == "create" and
                          e.get("objectRef", {}).get("name") == "nope"), "the denied create")
    events = audit_events(log)
    assert all(e["stage"] != "RequestReceived" for e in events)  # omitted by the policy
    assert all(e["apiVersion"] == "audit.k8s.io/v1" and e["kind"] == "Event" for e in events)
    created = find(lambda e: e["verb"] == "create" and e.get("objectRef", {}).get("name")
                   == "audited")
    assert len(created) == 1, created
    c = created[0]
    assert c["user"]["username"] == "flotilla-admin"
    assert c["objectRef"]["resource"] == "configmaps" and c["objectRef"]["namespace"] == "default"
    assert c["responseStatus"]["code"] == 201 and c["level"] == "Request"
    assert c["requestObject"]["data"] == {"k": "v"} and "responseObject" not in c
    assert c["sourceIPs"] == ["127.0.0.1"] and c["userAgent"].startswith("kubectl")
    assert c["annotations"]["authorization.k8s.io/decision"] == "allow"
    # Secrets never above Metadata: no bodies, in either direction.
    secrets = find(lambda e: e.get("objectRef", {}).get("resource") == "secrets")
    assert {e["verb"] for e in secrets} >= {"create", "get"}
    assert all(e["level"] == "Metadata" and "requestObject" not in e and "responseObject" not in e
               for e in secrets), secrets
    text = log.read_text()
    assert "topsecretvalue" not in text and "dG9wc2VjcmV0dmFsdWU" not in text
    no = find(lambda e: e.get("objectRef", {}).get("name") == "nope")[0]
    assert no["user"]["username"] == "flotilla-viewer"
    assert no["responseStatus"]["code"] == 403 and no["responseStatus"]["reason"] == "Forbidden"
    assert no["annotations"]["authorization.k8s.io/decision"] == "forbid"
    # Probes are not logged.
    srv.raw().get("/healthz")
    assert not find(lambda e: e["requestURI"].startswith("/healthz"))
