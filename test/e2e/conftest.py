"""Shared fixtures for the end-to-end suites: a real `flotilla server` process
on a free port with its own data dir, the real `kubectl`, the official Python
client and a raw HTTPS client, all pointed at it.

Everything a test starts is stopped when it ends; nothing waits on the wall
clock except bounded polls for a condition (see `wait_for`).
"""

import base64
import ctypes
import itertools
import os
import queue
import re
import signal
import socket
import subprocess
import threading
import time

import pytest
import requests
import yaml

FLOTILLA_BINARY = os.environ.get("FLOTILLA_BINARY", "/work/main/build-e2e/flotilla")
KUBECTL = os.environ.get("KUBECTL", "/usr/bin/kubectl")
# With FLOTILLA_E2E_KUBECTL_HTTP1=1 (the e2e_kubectl_http1 suite), kubectl
# speaks HTTP/1.1 instead of the HTTP/2 the server offers.
KUBECTL_ENV = {"DISABLE_HTTP2": "1"} if os.environ.get("FLOTILLA_E2E_KUBECTL_HTTP1") else {}
READY_RE = re.compile(r"Flotilla API server ready at (https://[0-9.]+:(\d+))")
START_TIMEOUT = 60  # seconds a server may take to print its ready line
STOP_TIMEOUT = 30   # seconds a server may take to exit after SIGTERM
WAIT_TIMEOUT = 30   # default bound for wait_for
# kubectl before 1.34 starts reading an exec's WebSocket before it has made
# its streams (upstream kubernetes#131189): a frame that comes first (fast
# output, or the exit status) is dropped with this line on stderr. The
# commands the tests exec are idempotent, so such a run is done again.
EXEC_RACE_SIGN = "discarding message"
EXEC_RACE_ATTEMPTS = 5


def wait_for(predicate, what, timeout=WAIT_TIMEOUT, interval=0.05):
    """Polls `predicate` until it returns a truthy value and returns that
    value; fails the test naming `what` (or what `what()` says then) if it
    has not after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for "
                        f"{what() if callable(what) else what}")
        time.sleep(interval)


class LineReader:
    """Reads a text stream line by line on a daemon thread so that tests can
    wait for a line with a bound instead of blocking on readline()."""

    def __init__(self, stream):
        self._queue = queue.Queue()
        self.lines = []
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream):
        for line in iter(stream.readline, ""):
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for_line(self, predicate, what, timeout=WAIT_TIMEOUT):
        """Returns the first line not yet consumed that satisfies `predicate`;
        fails if the stream ends or `timeout` s pass first."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"timed out waiting for {what}; lines so far: {self.lines}")
            try:
                line = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                self._queue.put(None)
                pytest.fail(f"stream ended before {what}; lines: {self.lines}")
            self.lines.append(line)
            if predicate(line):
                return line


def _die_with_parent():
    """Runs in the child before exec: SIGKILL it if the test process dies
    (e.g. killed by CTest's timeout), so no server outlives its test."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def stop_process(proc, timeout=STOP_TIMEOUT):
    """SIGTERM, then SIGKILL if `proc` has not exited within `timeout` s.
    Returns the exit code of the first signal that worked."""
    if proc.poll() is not None:
        return proc.returncode
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


ETCD = "/usr/bin/etcd"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Etcd:
    """One etcd member (Debian's etcd-server) on free loopback ports, with
    its data under `data_dir`."""

    def __init__(self, data_dir):
        self.data_dir = data_dir
        self.client_port, self.peer_port = free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.client_port}"
        peer = f"http://127.0.0.1:{self.peer_port}"
        os.makedirs(data_dir, exist_ok=True)
        self._log = open(os.path.join(data_dir, "etcd.log"), "w")
        self.proc = subprocess.Popen(
            [ETCD, "--data-dir", os.path.join(data_dir, "data"), "--listen-client-urls",
             self.url, "--advertise-client-urls", self.url, "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer, "--initial-cluster", f"default={peer}",
             "--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn"],
            stdout=subprocess.DEVNULL, stderr=self._log, preexec_fn=_die_with_parent)
        wait_for(self.healthy, "etcd healthy")

    def healthy(self):
        try:
            with socket.create_connection(("127.0.0.1", self.client_port), timeout=2) as s:
                s.sendall(b"GET /health HTTP/1.0\r\n\r\n")
                return b'"health":"true"' in s.recv(4096)
        except OSError:
            return False

    def server_args(self):
        return ["--storage", "etcd", "--etcd-servers", self.url]

    def stop(self):
        stop_process(self.proc)
        self._log.close()


def storage_args(root):
    """With FLOTILLA_E2E_STORAGE=etcd (the *_etcd CTest suites): an Etcd
    under `root` and the server flags for it; else (None, [])."""
    if os.environ.get("FLOTILLA_E2E_STORAGE") != "etcd":
        return None, []
    etcd = Etcd(os.path.join(str(root), "etcd"))
    return etcd, etcd.server_args()


class Kubeconfig:
    """The parts of a kubeconfig file the raw client needs."""

    def __init__(self, path):
        self.path = str(path)
        with open(self.path) as f:
            doc = yaml.safe_load(f)
        context_name = doc.get("current-context") or doc["contexts"][0]["name"]
        context = next(c["context"] for c in doc["contexts"] if c["name"] == context_name)
        cluster = next(c["cluster"] for c in doc["clusters"] if c["name"] == context["cluster"])
        user = next(u["user"] for u in doc["users"] if u["name"] == context["user"])
        self.doc = doc
        self.server = cluster["server"]
        if "certificate-authority-data" in cluster:
            self.ca_pem = base64.b64decode(cluster["certificate-authority-data"])
        else:
            with open(cluster["certificate-authority"], "rb") as f:
                self.ca_pem = f.read()
        self.token = user.get("token")


class RawClient:
    """HTTPS requests straight to the server, for what kubectl and the Python
    client would never send. Responses are returned whatever their code."""

    def __init__(self, server_url, ca_file, token=None):
        self.base = server_url
        self.ca_file = ca_file
        self.session = requests.Session()
        # Not from the environment: REQUESTS_CA_BUNDLE would override our CA.
        self.session.trust_env = False
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"

    def request(self, method, path, **kwargs):
        kwargs.setdefault("timeout", 60)
        kwargs.setdefault("verify", self.ca_file)
        return self.session.request(method, self.base + path, **kwargs)

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    def post(self, path, **kwargs):
        return self.request("POST", path, **kwargs)

    def put(self, path, **kwargs):
        return self.request("PUT", path, **kwargs)

    def patch(self, path, **kwargs):
        return self.request("PATCH", path, **kwargs)

    def delete(self, path, **kwargs):
        return self.request("DELETE", path, **kwargs)

    def close(self):
        self.session.close()


class FlotillaServer:
    """One `flotilla server` process on a data dir. start() may be called
    again after stop() or kill9(), on the same data dir."""

    def __init__(self, data_dir, extra_args=()):
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.proc = None
        self.url = None
        self.port = None
        self.starts = 0
        self._clients = []
        os.makedirs(data_dir, exist_ok=True)

    @property
    def kubeconfig(self):
        return os.path.join(self.data_dir, "kubeconfig")

    @property
    def readonly_kubeconfig(self):
        return os.path.join(self.data_dir, "readonly.kubeconfig")

    @property
    def log_path(self):
        return os.path.join(self.data_dir, f"server-{self.starts}.log")

    def start(self, extra_args=None):
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        args = [FLOTILLA_BINARY, "server", "--data-dir", self.data_dir, "--secure-port", "0"]
        args += self.extra_args if extra_args is None else list(extra_args)
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._log, text=True,
                                     preexec_fn=_die_with_parent)
        self.stdout = LineReader(self.proc.stdout)
        try:
            line = self.stdout.wait_for_line(lambda l: READY_RE.search(l), "the ready line",
                                             timeout=START_TIMEOUT)
        except BaseException:
            self.kill9()
            pytest.fail(f"server did not start: {' '.join(args)}\n{self.log_tail()}")
        match = READY_RE.search(line)
        self.url, self.port = match.group(1), int(match.group(2))
        return self

    def stop(self):
        """SIGTERM; returns the exit code (None if it had to be killed)."""
        if self.proc is None:
            return None
        code = stop_process(self.proc)
        self._after_exit()
        return code

    def kill9(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._after_exit()

    def _after_exit(self):
        for client in self._clients:
            client.close()
        self._clients = []
        self._log.close()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines=40):
        try:
            with open(self.log_path) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def ca_file(self):
        path = os.path.join(self.data_dir, "e2e-ca.crt")
        with open(path, "wb") as f:
            f.write(Kubeconfig(self.kubeconfig).ca_pem)
        return path

    def raw(self, kubeconfig=None, token=None, anonymous=False):
        """A RawClient with the token of `kubeconfig` (default: admin), or
        `token`, or no credentials at all."""
        if not anonymous and token is None:
            token = Kubeconfig(kubeconfig or self.kubeconfig).token
        client = RawClient(self.url, self.ca_file(), None if anonymous else token)
        self._clients.append(client)
        return client

    def kubectl(self, *args, kubeconfig=None, input=None, check=True, env=None, timeout=120):
        """Runs the real kubectl against this server; returns the
        CompletedProcess. With check, a non-zero exit fails the test."""
        cmd = [KUBECTL, "--kubeconfig", kubeconfig or self.kubeconfig,
               "--cache-dir", os.path.join(self.data_dir, "kubectl-cache"), *args]
        full_env = dict(os.environ, HOME=self.data_dir, **KUBECTL_ENV)
        full_env.pop("KUBECONFIG", None)
        full_env.update(env or {})
        for _ in range(EXEC_RACE_ATTEMPTS):
            result = subprocess.run(cmd, input=input, capture_output=True, text=True,
                                    env=full_env, timeout=timeout)
            if "exec" not in args or EXEC_RACE_SIGN not in result.stderr:
                break
        if check and result.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} exited {result.returncode}\n"
                        f"stdout: {result.stdout}\nstderr: {result.stderr}")
        return result

    def kubectl_popen(self, *args, kubeconfig=None):
        """Starts a long-running kubectl (e.g. `get -w`) with stderr merged into
        stdout; the caller stops it."""
        cmd = [KUBECTL, "--kubeconfig", kubeconfig or self.kubeconfig,
               "--cache-dir", os.path.join(self.data_dir, "kubectl-cache"), *args]
        env = dict(os.environ, HOME=self.data_dir, **KUBECTL_ENV)
        env.pop("KUBECONFIG", None)
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=env)

    def api_client(self, kubeconfig=None):
        """An official Python ApiClient loaded from the kubeconfig file."""
        from kubernetes import client, config
        configuration = client.Configuration()
        config.load_kube_config(config_file=kubeconfig or self.kubeconfig,
                                client_configuration=configuration)
        api = client.ApiClient(configuration)
        self._clients.append(api)
        return api


_namespace_counter = itertools.count(1)


def namespace_name(nodeid):
    """A DNS-1123 label unique within the session, derived from a test id."""
    base = re.sub(r"[^a-z0-9-]+", "-", nodeid.split("::")[-1].lower()).strip("-")
    return f"{base[:50].strip('-')}-{next(_namespace_counter)}"


# The API suites test `flotilla server` as a Kubernetes API server: only the
# cluster controller runs, so that nothing else writes to their objects (the
# propagation and ReplicaSet controllers add finalizers and status). The
# federation suites (federation.py) run every controller.
API_ONLY_ARGS = ["--controllers=cluster"]


def api_only(extra_args):
    args = list(extra_args)
    if any(a.startswith("--controllers") for a in args):
        return args
    return API_ONLY_ARGS + args


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server per test module; tests isolate themselves by namespace."""
    etcd, storage = storage_args(tmp_path_factory.mktemp("etcd"))
    srv = FlotillaServer(str(tmp_path_factory.mktemp("flotilla")), API_ONLY_ARGS + storage)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()
        if etcd:
            etcd.stop()


@pytest.fixture
def server_factory(tmp_path):
    """Makes servers on fresh (or given) data dirs; stops them all at the end."""
    servers = []

    def make(extra_args=(), data_dir=None):
        srv = FlotillaServer(data_dir or str(tmp_path / f"server-{len(servers)}"),
                             api_only(extra_args))
        servers.append(srv)
        return srv

    try:
        yield make
    finally:
        for srv in servers:
            if srv.running():
                srv.stop()


@pytest.fixture
def raw(server):
    return server.raw()


@pytest.fixture
def namespace(request, server):
    """A fresh namespace for this test, created through the raw API."""
    name = namespace_name(request.node.name)
    client = server.raw()
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    response = client.post("/api/v1/namespaces", json=body)
    assert response.status_code == 201, response.text
    return name


def table(output):
    """Parses `kubectl get` table output into (headers, rows of dicts).
    Columns are separated by at least two spaces or aligned by the header."""
    lines = [l for l in output.splitlines() if l.strip()]
    assert lines, "empty table"
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=\s\s))\S", header)]
    headers = [header[s:e].strip() for s, e in zip(starts, starts[1:] + [None])]
    rows = []
    for line in lines[1:]:
        cells = [line[s:e].strip() for s, e in zip(starts, starts[1:] + [None])]
        rows.append(dict(zip(headers, cells)))
    return headers, rows
