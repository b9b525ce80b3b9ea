"""Federated Jobs end to end (docs/federation.md, "Jobs"): batch/v1 Jobs
created on `flotilla server` with the real kubectl, run by three `flotilla
member` clusters whose Job controllers run the pods (each pod runs for its
template's sim.flotilla.io/run-for and exits 0).

Covered: a Job of 12 completions divided 4/4/4 completes with 12 succeeded
(`kubectl get jobs`, `kubectl wait --for=condition=complete`); a member
killed mid-Job has its unfinished completions run by the others, and the
Job completes with exactly 12 (the lost member's done ones never run
again); an Indexed Job runs whole in one member with JOB_COMPLETION_INDEX;
`kubectl create job` (protobuf) and Kubernetes' 422s; a CronJob every
minute run by the federation, once per schedule across the members, on time
through a member loss.
"""

import json

import pytest

from conftest import table, wait_for
from federation import FED_ARGS, SLOW, module_federation, plugin

MEMBER_ARGS = ["--nodes", "1", "--node-cpu", "100", "--node-pods", "200",
               "--pod-startup", "100ms"]
SERVER_ARGS = FED_ARGS + ["--cluster-failure-threshold", "2", "--member-change-delay", "200ms"]
CLUSTERS = {c: ({}, MEMBER_ARGS) for c in ["a", "b", "c"]}
SHARES = "federation.kubernetes.io/job-shares"
NS = "batch"

fed = module_federation("fed-jobs", CLUSTERS, SERVER_ARGS)


@pytest.fixture(scope="module", autouse=True)
def namespace(fed):
    fed.create_namespace(NS)


def job(name, run_for="1s", **spec):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": dict(spec, template={
                "metadata": {"annotations": {"sim.flotilla.io/run-for": run_for}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "work", "image": "busybox"}]}})}


def fed_job(fed, name):
    return json.loads(fed.kubectl("get", "job", name, "-n", NS, "-o", "json").stdout)


def condition(obj, kind):
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == kind and c["status"] == "True":
            return c
    return None


def local_job(member, name):
    return member.get_json(f"/apis/batch/v1/namespaces/{NS}/jobs/{name}")


def ledger(obj):
    return json.loads(obj["metadata"]["annotations"][SHARES])


def test_a_job_of_12_completions_runs_4_in_each_member_and_completes(fed):
    fed.create(job("twelve", completions=12, parallelism=6), NS)
    fed.kubectl("wait", "--for=condition=complete", "job/twelve", "-n", NS, "--timeout=90s")
    obj = fed_job(fed, "twelve")
    assert obj["status"]["succeeded"] == 12
    assert condition(obj, "SuccessCriteriaMet")
    for c in fed.names:
        local = local_job(fed[c], "twelve")
        assert local["spec"]["completions"] == 4
        assert local["spec"]["parallelism"] == 2
        assert local["status"]["succeeded"] == 4
        # The member's selector is its own.
        assert local["spec"]["selector"]["matchLabels"] == {
            "batch.kubernetes.io/controller-uid": local["metadata"]["uid"]}
        succeeded = [p for p in fed[c].pods(NS, "batch.kubernetes.io/job-name=twelve")
                     if p["status"]["phase"] == "Succeeded"]
        assert len(succeeded) == 4
    _, rows = table(fed.kubectl("get", "jobs", "twelve", "-n", NS).stdout)
    assert rows[0]["STATUS"] == "Complete"
    assert rows[0]["COMPLETIONS"] == "12/12"
    # kubectl flotilla status: succeeded/completions per cluster.
    doc = json.loads(plugin(fed, "status", "-n", NS, "job/twelve", "-o", "json").stdout)
    (w,) = doc["workloads"]
    assert w["kind"] == "Job" and w["readyReplicas"] == 12 and w["replicas"] == 12, w
    assert {c: (v["ready"], v["planned"]) for c, v in w["clusters"].items()} == {
        c: (4, 4) for c in fed.names}, w


def test_a_lost_members_unfinished_completions_finish_elsewhere_and_none_runs_twice(fed):
    # 4 completions per member, one at a time, 3 s each.
    fed.create(job("failover", run_for="3s", completions=12, parallelism=3), NS)
    lost = "c"
    done_there = wait_for(lambda: (local_job(fed[lost], "failover") or {}).get(
        "status", {}).get("succeeded"), "a completion in the member to lose", timeout=60)
    fed[lost].kill9()
    try:
        fed.wait_not_ready(lost)
        wait_for(lambda: condition(fed_job(fed, "failover"), "Complete"),
                 "the Job complete without the lost member", timeout=SLOW)
        obj = fed_job(fed, "failover")
        assert obj["status"]["succeeded"] == 12
        shares = ledger(obj)
        assert shares[lost]["lost"] is True
        # What the lost member had done counts once (it may have finished
        # one more before it died); the rest ran in a and b.
        gone = shares[lost].get("done", 0)
        assert gone >= done_there
        elsewhere = sum(shares[c].get("done", 0) + shares[c].get("succeeded", 0)
                        for c in ("a", "b"))
        assert elsewhere == 12 - gone
        events = fed.kubectl("get", "events", "-n", NS,
                             "--field-selector", "reason=JobWorkMoved").stdout
        assert "lost cluster(s) c moved to" in events
    finally:
        fed[lost].start()
        fed.wait_ready(lost)


def test_an_indexed_job_runs_whole_in_one_member(fed):
    fed.create(job("indexed", completions=3, parallelism=3, completionMode="Indexed"), NS)
    fed.kubectl("wait", "--for=condition=complete", "job/indexed", "-n", NS, "--timeout=90s")
    holders = [c for c in fed.names if local_job(fed[c], "indexed") is not None]
    assert len(holders) == 1
    member = fed[holders[0]]
    pods = member.pods(NS, "batch.kubernetes.io/job-name=indexed")
    indexes = sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
                     for p in pods)
    assert indexes == ["0", "1", "2"]
    for p in pods:
        env = p["spec"]["containers"][0]["env"]
        assert any(e["name"] == "JOB_COMPLETION_INDEX" for e in env)
    assert fed_job(fed, "indexed")["status"]["completedIndexes"] == "0-2"


def test_kubectl_create_job_and_kubernetes_errors(fed):
    # kubectl create job sends protobuf.
    fed.kubectl("create", "job", "hello", "--image=busybox", "-n", NS)
    fed.kubectl("wait", "--for=condition=complete", "job/hello", "-n", NS, "--timeout=90s")
    bad = job("bad", completions=2)
    bad["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    result = fed.create(bad, NS, check=False)
    assert result.returncode != 0
    assert ('spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
            '"OnFailure", "Never"') in result.stderr
    indexed = job("noidx", completionMode="Indexed", parallelism=2)
    result = fed.create(indexed, NS, check=False)
    assert "spec.completions: Required value: when completion mode is Indexed" in result.stderr
    result = fed.kubectl("patch", "job", "hello", "-n", NS, "--type=merge",
                         "-p", '{"spec":{"completions":5}}', check=False)
    assert result.returncode != 0
    assert "spec.completions: Invalid value: 5: field is immutable" in result.stderr


def test_a_cronjob_runs_once_per_schedule_across_the_federation_through_a_member_loss(fed):
    """Every minute: each run is one federated Job (its 3 completions
    divided, not 3 per member); with Forbid, a run waits for the last; a
    member lost between runs does not stop the schedule."""
    cj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "minutely"},
          "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid",
                   "jobTemplate": job("unused", run_for="2s", completions=3, parallelism=3)}}
    del cj["spec"]["jobTemplate"]["apiVersion"], cj["spec"]["jobTemplate"]["kind"]
    del cj["spec"]["jobTemplate"]["metadata"]
    fed.create(cj, NS)
    _, rows = table(fed.kubectl("get", "cronjob", "minutely", "-n", NS).stdout)
    assert rows[0]["SCHEDULE"] == "* * * * *" and rows[0]["SUSPEND"] == "False"

    def runs():
        jobs = json.loads(fed.kubectl("get", "jobs", "-n", NS, "-o", "json").stdout)["items"]
        return sorted(j["metadata"]["name"] for j in jobs
                      if j["metadata"]["name"].startswith("minutely-"))

    first = wait_for(lambda: runs() or None, "the first run", timeout=90)[0]
    wait_for(lambda: condition(fed_job(fed, first), "Complete"), "the first run complete", 60)
    # One federated Job per run: its completions divided over the members.
    assert sum((local_job(fed[c], first) or {}).get("spec", {}).get("completions", 0)
               for c in fed.names) == 3
    lost = "c"
    fed[lost].kill9()
    try:
        fed.wait_not_ready(lost)
        second = wait_for(lambda: [r for r in runs() if r > first] or None, "the next run",
                          timeout=90)[0]
        assert int(second.rsplit("-", 1)[1]) > int(first.rsplit("-", 1)[1])
        wait_for(lambda: condition(fed_job(fed, second), "Complete"), "the next run complete",
                 90)
        assert sum((local_job(fed[c], second) or {}).get("spec", {}).get("completions", 0)
                   for c in ("a", "b")) == 3
        cron = json.loads(fed.kubectl("get", "cronjob", "minutely", "-n", NS, "-o",
                                      "json").stdout)
        assert cron["status"].get("lastScheduleTime")
        assert cron["status"].get("lastSuccessfulTime")
    finally:
        fed.kubectl("delete", "cronjob", "minutely", "-n", NS)
        fed[lost].start()
        fed.wait_ready(lost)
