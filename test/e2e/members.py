"""`flotilla member` processes for the end-to-end suites: start one (or one
process hosting several clusters) on free ports with a temp data dir, parse
its ready lines, and drive each cluster with the real kubectl, the official
Python client, raw HTTPS and `flotilla member ctl`.
"""

import json
import os
import re
import subprocess

import pytest

from conftest import (FLOTILLA_BINARY, KUBECTL, START_TIMEOUT, Kubeconfig, LineReader,
                      RawClient, _die_with_parent, stop_process)

MEMBER_READY_RE = re.compile(
    r"Flotilla member (\S+) ready at (https://127\.0\.0\.1:(\d+)) \(kubeconfig (\S+)\)")


class MemberCluster:
    """One cluster of a member process, reached through its own kubeconfig."""

    def __init__(self, name, url, kubeconfig, data_dir):
        self.name = name
        self.url = url
        self.kubeconfig = kubeconfig
        self.data_dir = data_dir
        self._clients = []

    def run(self, *args, check=True, input=None, timeout=120):
        result = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout,
                                input=input, env=dict(os.environ, HOME=self.data_dir))
        if check and result.returncode != 0:
            pytest.fail(f"{' '.join(args)} exited {result.returncode}\n"
                        f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def kubectl(self, *args, check=True, input=None, timeout=120):
        return self.run(KUBECTL, "--kubeconfig", self.kubeconfig, "--cache-dir",
                        os.path.join(self.data_dir, "kubectl-cache"), *args, check=check,
                        input=input, timeout=timeout)

    def get(self, *args):
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def ctl(self, *args, check=True):
        return self.run(FLOTILLA_BINARY, "member", "ctl", "--kubeconfig", self.kubeconfig,
                        *args, check=check)

    def raw(self):
        config = Kubeconfig(self.kubeconfig)
        ca_file = os.path.join(self.data_dir, "e2e-ca.crt")
        with open(ca_file, "wb") as f:
            f.write(config.ca_pem)
        client = RawClient(self.url, ca_file, config.token)
        self._clients.append(client)
        return client

    def api_client(self):
        from kubernetes import client, config
        configuration = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, client_configuration=configuration)
        api = client.ApiClient(configuration)
        self._clients.append(api)
        return api

    def close(self):
        for c in self._clients:
            c.close()
        self._clients = []


class MemberProcess:
    """One `flotilla member` process; `clusters` lists what it hosts, in the
    order of its ready lines. `port` 0 picks a free one; a restart on the
    same data dir passes the port it had, so kubeconfigs stay valid."""

    def __init__(self, data_dir, extra_args=(), port=0, wrapper=()):
        self.data_dir = data_dir
        os.makedirs(data_dir, exist_ok=True)
        # `wrapper`: a command that runs the member (ip netns exec NS).
        args = [*wrapper, FLOTILLA_BINARY, "member", "--data-dir", data_dir, "--secure-port", str(port),
                *extra_args]
        count = 1
        if "--clusters" in extra_args:
            count = int(extra_args[list(extra_args).index("--clusters") + 1])
        self._log = open(os.path.join(data_dir, "member.log"), "a")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._log, text=True,
                                     preexec_fn=_die_with_parent)
        self.stdout = LineReader(self.proc.stdout)
        self.clusters = []
        try:
            for _ in range(count):
                line = self.stdout.wait_for_line(lambda l: MEMBER_READY_RE.search(l),
                                                 "a member ready line", timeout=START_TIMEOUT)
                name, url, _, kubeconfig = MEMBER_READY_RE.search(line).groups()
                self.clusters.append(MemberCluster(name, url, kubeconfig, data_dir))
        except BaseException:
            self.stop()
            raise

    @property
    def cluster(self):
        return self.clusters[0]

    def stop(self):
        """SIGTERM; returns the exit code (None when it had to be killed)."""
        for c in self.clusters:
            c.close()
        code = stop_process(self.proc)
        self._log.close()
        return code
