"""Manifests of every kind the foundation server serves, as plain dicts, shared
by the kubectl and Python-client suites. Each builder returns a minimal valid
object; callers add what their test is about."""

POD_LABELS = {"app": "web"}


def meta(name, labels=None, annotations=None, **extra):
    m = {"name": name, **extra}
    if labels:
        m["labels"] = dict(labels)
    if annotations:
        m["annotations"] = dict(annotations)
    return m


def namespace(name, **kw):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(name, **kw)}


def configmap(name, data=None, **kw):
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name, **kw),
            "data": dict(data if data is not None else {"colour": "blue"})}


def secret(name, string_data=None, **kw):
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta(name, **kw), "type": "Opaque",
            "stringData": dict(string_data if string_data is not None else {"password": "hunter2"})}


def service(name, **kw):
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta(name, **kw),
            "spec": {"selector": dict(POD_LABELS),
                     "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}


def serviceaccount(name, **kw):
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, **kw)}


def event(name, namespace, involved_name, reason="Started", **kw):
    return {"apiVersion": "v1", "kind": "Event", "metadata": meta(name, **kw),
            "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": involved_name,
                               "namespace": namespace},
            "reason": reason, "message": "e2e test event", "type": "Normal",
            "source": {"component": "flotilla-e2e"}, "count": 1,
            "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z"}


def pod_template(containers=None):
    containers = containers or [{"name": "web", "image": "nginx:1.25"}]
    return {"metadata": {"labels": dict(POD_LABELS)}, "spec": {"containers": containers}}


def replicaset(name, replicas=2, **kw):
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(name, **kw),
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(POD_LABELS)},
                     "template": pod_template()}}


def deployment(name, replicas=3, containers=None, **kw):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(name, **kw),
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(POD_LABELS)},
                     "template": pod_template(containers)}}


def statefulset(name, replicas=2, **kw):
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(name, **kw),
            "spec": {"replicas": replicas, "serviceName": name,
                     "selector": {"matchLabels": dict(POD_LABELS)}, "template": pod_template()}}


def hpa_v2(name, target="web", utilization=50, **kw):
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta(name, **kw),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": target},
                     "minReplicas": 1, "maxReplicas": 5,
                     "metrics": [{"type": "Resource", "resource": {
                         "name": "cpu",
                         "target": {"type": "Utilization", "averageUtilization": utilization}}}]}}


def hpa_v1(name, target="web", utilization=50, **kw):
    return {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": meta(name, **kw),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": target},
                     "minReplicas": 1, "maxReplicas": 5,
                     "targetCPUUtilizationPercentage": utilization}}


def lease(name, holder="flotilla-0", **kw):
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta(name, **kw),
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15,
                     "acquireTime": "2024-01-01T00:00:00.000000Z",
                     "renewTime": "2024-01-01T00:00:00.000000Z", "leaseTransitions": 0}}


def cluster(name, **kw):
    return {"apiVersion": "federation/v1beta1", "kind": "Cluster", "metadata": meta(name, **kw),
            "spec": {"serverAddressByClientCIDRs": [
                         {"clientCIDR": "0.0.0.0/0", "serverAddress": "https://10.1.0.1:6443"}],
                     "secretRef": {"name": f"{name}-kubeconfig"}}}
