"""`flotilla interpret` as a user runs it (docs/interpreter.md): every
operation of a ResourceInterpreterCustomization on test objects, the
results printed as karmadactl prints them (YAML documents, each after a
"# [i/n] name:" line), `--check`, and scripts that loop for ever, allocate
without bound or call what the sandbox does not have: stopped, reported,
exit code 1."""

import os
import subprocess

import pytest
import yaml

from conftest import FLOTILLA_BINARY

TESTDATA = os.path.join(os.path.dirname(__file__), "..", "..", "src", "interpreter", "testdata")
CUSTOMIZATION = os.path.join(TESTDATA, "workload-customization.yaml")
WORKLOAD = os.path.join(TESTDATA, "workload.yaml")
STATUS_ITEMS = os.path.join(TESTDATA, "status-items.yaml")


def interpret(*args, input=None):
    return subprocess.run([FLOTILLA_BINARY, "interpret", *args], capture_output=True, text=True,
                          input=input, timeout=60)


def results(out):
    """The named results of one run: {name: value}."""
    docs = {}
    for chunk in out.split("---\n")[1:]:
        header, _, body = chunk.partition("\n")
        name = header.split("] ", 1)[1].rstrip(":")
        docs[name] = yaml.safe_load(body)
    return docs


def run(operation, *extra):
    r = interpret("-f", CUSTOMIZATION, "--operation", operation, *extra)
    assert r.returncode == 0, r.stderr
    return results(r.stdout)


def test_every_operation():
    desired = ["--desired-file", WORKLOAD]
    observed = ["--observed-file", WORKLOAD]
    out = run("InterpretReplica", *desired)
    assert out == {"replica": 6, "requires": {"nodeClaim": {"nodeSelector": {"disktype": "ssd"}},
                                              "resourceRequest": {"cpu": "250m",
                                                                  "memory": "64Mi"}}}
    revised = run("reviseReplica", *desired, "--desired-replica", "2")["revised"]
    assert revised["spec"]["replicas"] == 2 and revised["metadata"]["name"] == "web"
    assert run("Retain", *desired, *observed)["retained"]["spec"]["paused"] is False
    aggregated = run("AggregateStatus", *desired, "--status-file", STATUS_ITEMS)
    assert aggregated["aggregatedStatus"]["status"] == {
        "replicas": 6, "readyReplicas": 5, "updatedReplicas": 6, "observedGeneration": 3}
    assert run("InterpretStatus", *observed)["status"]["readyReplicas"] == 6
    assert run("InterpretHealth", *observed) == {"healthy": True}
    deps = run("InterpretDependency", *desired)["dependencies"]
    assert [(d["kind"], d["name"]) for d in deps] == [
        ("ConfigMap", "web-config"), ("Secret", "web-secret"), ("ServiceAccount", "web"),
        ("PersistentVolumeClaim", "web-data")]


def test_check_passes_a_good_customization_and_names_a_bad_script(tmp_path):
    good = interpret("-f", CUSTOMIZATION, "--check")
    assert good.returncode == 0, good.stderr
    assert "RULE InterpretReplica: PASS" in good.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({
        "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "bad"},
        "spec": {"target": {"apiVersion": "apps.example.com/v1", "kind": "Workload"},
                 "customizations": {
                     "retention": {"luaScript": "function Retain(d, o) return d"},
                     "healthInterpretation": {"luaScript": "function Healthy(o) end"}}}}))
    r = interpret("-f", str(bad), "--check")
    assert r.returncode == 1
    assert "RULE Retain: ERROR: Invalid value: script:1:" in r.stdout, r.stdout
    assert "RULE InterpretHealth: ERROR: Invalid value: the script defines no function " \
           "InterpretHealth" in r.stdout, r.stdout
    assert "RULE ReviseReplica: UNSET" in r.stdout


@pytest.mark.parametrize("script,message", [
    ("function InterpretHealth(o) while true do end end", "instructions"),
    ("function InterpretHealth(o) local t = {} for i = 1, 1e12 do t[i] = string.rep('x', 100) "
     ".. i end end", "bytes of memory"),
    ("function InterpretHealth(o) return os.execute('id') end", "attempt to call a nil value"),
    ("function InterpretHealth(o) return io.open('/etc/passwd') end", "attempt to index a nil"),
    ("function InterpretHealth(o) return load('return true')() end", "is not supported"),
])
def test_a_runaway_or_forbidden_script_is_stopped_and_reported(script, message):
    customization = yaml.safe_dump({
        "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": "runaway"},
        "spec": {"target": {"apiVersion": "apps.example.com/v1", "kind": "Workload"},
                 "customizations": {"healthInterpretation": {"luaScript": script}}}})
    r = interpret("-f", "-", "--operation", "InterpretHealth", "--observed-file", WORKLOAD,
                  input=customization)
    assert r.returncode == 1
    assert r.stderr.startswith("Execute InterpretHealth error: InterpretHealth: "), r.stderr
    assert message in r.stderr, r.stderr


def test_bad_invocations_say_why():
    r = interpret("-f", CUSTOMIZATION, "--operation", "Nope", "--observed-file", WORKLOAD)
    assert r.returncode == 1 and "operation Nope is not supported" in r.stderr
    r = interpret("-f", CUSTOMIZATION, "--operation", "Retain", "--desired-file", WORKLOAD)
    assert r.returncode == 1 and "--observed-file is required" in r.stderr
    r = interpret("-f", WORKLOAD, "--check")
    assert r.returncode == 1 and "holds no ResourceInterpreterCustomization" in r.stderr
