"""`flotilla dashboard` end to end (docs/dashboard.md), driven by headless
Chromium through Selenium, over a federation of three `flotilla member`
clusters with a federated ReplicaSet, a federated Deployment and a
federated HPA: the page lists the clusters and the workloads with their
per-cluster counts (checked against the federation's own breakdown), a
scale on the federation shows up without a reload, an update shows its
cluster-by-cluster progress, the HPA view shows each cluster's bounds, and
a stopped member turns its card unhealthy. A screenshot of each view is
kept in artifacts/ (in the test's working directory)."""

import json
import os
import subprocess

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import FLOTILLA_BINARY, LineReader, wait_for
from federation import SLOW, replicaset, start_federation
from objects import deployment, hpa_v2

MEMBERS = ("a", "b", "c")
RS_STATUS = "federation.kubernetes.io/replica-set-status"
HPA_STATUS = "federation.kubernetes.io/hpa-status"
ARTIFACTS = os.environ.get("FLOTILLA_ARTIFACTS", os.path.abspath("artifacts"))
# As the machine's notes advise for Chromium in a closed network.
CHROMIUM_FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--window-size=1400,1000"]


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    federation = start_federation(tmp_path_factory.mktemp("dashboard"), {
        name: ({}, ["--nodes", "2", "--node-cpu", "8", "--zones", f"zone-{name}",
                    "--region", "north" if name != "c" else "south"])
        for name in MEMBERS})
    try:
        federation.create(replicaset("web", 3, cpu="100m"), "default")
        federation.create(deployment("api", 3), "default")
        federation.create(hpa_v2("api", target="api"), "default")
        yield federation
    finally:
        federation.close()


@pytest.fixture(scope="module")
def dashboard(fed, tmp_path_factory):
    env = dict(os.environ, KUBECONFIG=fed.server.kubeconfig)
    proc = subprocess.Popen([FLOTILLA_BINARY, "dashboard", "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = LineReader(proc.stdout).wait_for_line(lambda l: "http://127.0.0.1:" in l,
                                                     "the dashboard's address")
        yield line.split("at ")[1].split(" ")[0]
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def until(browser, script, what, timeout=60):
    """Waits until `script` (JavaScript returning a value) returns something
    truthy on the page, and returns it."""
    try:
        return WebDriverWait(browser, timeout, poll_frequency=0.1).until(
            lambda d: d.execute_script(script))
    except Exception:
        pytest.fail(f"timed out after {timeout}s waiting for {what}; page: "
                    f"{browser.find_element(By.TAG_NAME, 'main').text[:2000]}")


def open_view(browser, url, view):
    if not browser.current_url.startswith(url):
        browser.get(url + "#" + view)
    else:
        browser.find_element(By.ID, f"tab-{view}").click()
    until(browser, f"return document.querySelector('#tab-{view}[aria-selected=\"true\"]')",
          f"the {view} tab")


def text(browser, selector):
    """The element's text, read in one step: the page redraws its views as
    the federation changes, so an element found now may be gone next."""
    return browser.execute_script("const e = document.querySelector(arguments[0]);"
                                  "return e ? e.innerText : '';", selector)


def screenshot(browser, view):
    os.makedirs(ARTIFACTS, exist_ok=True)
    browser.save_screenshot(os.path.join(ARTIFACTS, f"dashboard-{view}.png"))


SEGMENTS = """
const row = document.querySelector('[data-workload="default/replicaset/web"]');
if (!row) return null;
const out = {};
for (const s of row.querySelectorAll('.segment')) out[s.dataset.cluster] = [+s.dataset.ready, +s.dataset.planned];
return out;"""


def breakdown(fed):
    rs = json.loads(fed.kubectl("get", "rs", "web", "-o", "json").stdout)
    clusters = json.loads(rs["metadata"].get("annotations", {}).get(RS_STATUS, "{}")).get("clusters", {})
    return {n: [c.get("ready", 0), c["planned"]] for n, c in clusters.items()
            if c["planned"] or c.get("ready", 0)}


def test_clusters_view_shows_every_cluster_by_region(fed, dashboard, browser):
    open_view(browser, dashboard, "clusters")
    until(browser, "return document.querySelectorAll('.card[data-health=\"Ready\"]').length === 3 && "
                   "[...document.querySelectorAll('[data-role=objects]')].every(e => e.textContent !== '—')",
          "three Ready cards with their object counts")
    regions = browser.execute_script(
        "return [...document.querySelectorAll('.region')].map(r => "
        "[r.querySelector('.region-name').textContent, "
        "[...r.querySelectorAll('.card')].map(c => c.dataset.cluster)])")
    assert regions == [["north", ["a", "b"]], ["south", ["c"]]]
    card = text(browser, '.card[data-cluster="a"]')
    assert "✔ Ready" in card and "zone-a" in card and "2 of 2 ready" in card
    assert "CPU:" in card and "of 16 cores requested" in card, card
    assert text(browser, "#connection") == "● Live"
    screenshot(browser, "clusters")


def test_workloads_show_their_split_and_follow_a_scale_without_reload(fed, dashboard, browser):
    open_view(browser, dashboard, "workloads")
    wait_for(lambda: sum(p for _, p in breakdown(fed).values()) == 3 and
             all(r == p for r, p in breakdown(fed).values()), "web placed and ready")
    until(browser, SEGMENTS.replace("return out;", f"return JSON.stringify(out) === '{json.dumps(breakdown(fed), separators=(',', ':'), sort_keys=True)}';"),
          "web's segments as the federation's breakdown")
    assert text(browser, '[data-workload="default/deployment/api"]')
    browser.execute_script("window.notReloaded = true")

    fed.kubectl("scale", "rs", "web", "--replicas=9")
    wait_for(lambda: sum(p for _, p in breakdown(fed).values()) == 9, "web planned 9")
    until(browser, SEGMENTS.replace("return out;", "return Object.values(out).reduce((s, c) => s + c[1], 0) === 9;"),
          "web's segments planning 9")
    assert browser.execute_script("return window.notReloaded") is True
    until(browser, "return document.querySelector('[data-workload=\"default/replicaset/web\"] "
                   "[data-role=ready]').textContent === '✔ 9/9 ready'", "web 9/9 ready")

    search = browser.find_element(By.ID, "filter")
    search.send_keys("deployment")
    rows = browser.execute_script(
        "return [...document.querySelectorAll('[data-workload]')].map(r => r.dataset.workload)")
    assert rows == ["default/deployment/api"]
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.DELETE)
    screenshot(browser, "workloads")


def test_rollout_view_follows_an_update_cluster_by_cluster(fed, dashboard, browser):
    open_view(browser, dashboard, "rollouts")
    fed.kubectl("set", "image", "deployment/api", "web=nginx:1.27")
    # Each cluster the Deployment runs in shows a step, and all complete in the end.
    until(browser, "const s = document.querySelectorAll('[data-workload=\"default/deployment/api\"] .step');"
                   "return s.length > 0 && [...s].every(e => e.dataset.rollout === 'complete') && "
                   "document.querySelector('[data-workload=\"default/deployment/api\"] .tag').textContent === 'revision 2'",
          "api's rollout complete at revision 2", timeout=SLOW)
    screenshot(browser, "rollouts")


def test_autoscaling_view_shows_each_clusters_bounds(fed, dashboard, browser):
    open_view(browser, dashboard, "autoscaling")

    def bounds_from_the_federation():
        hpa = json.loads(fed.kubectl("get", "hpa", "api", "-o", "json").stdout)
        text = hpa["metadata"].get("annotations", {}).get(HPA_STATUS)
        clusters = json.loads(text)["clusters"] if text else {}
        return sorted([n, c["minReplicas"], c["maxReplicas"]] for n, c in clusters.items())

    def bounds_on_the_page():
        return sorted(browser.execute_script(
            "return [...document.querySelectorAll('[data-hpa=\"default/api\"] tr[data-cluster]')]"
            ".map(t => [t.dataset.cluster, +t.children[1].textContent, +t.children[2].textContent])"))

    # The page shows the bounds the federation's breakdown holds (read anew
    # each time: the shares may still move), and they add up to the max.
    rows = wait_for(lambda: (lambda want: want and bounds_on_the_page() == want and want)(
        bounds_from_the_federation()), "the HPA's per-cluster bounds on the page")
    assert sum(r[2] for r in rows) == 5, rows  # hpa_v2's maxReplicas
    screenshot(browser, "autoscaling")


def test_events_view_lists_the_federations_events(fed, dashboard, browser):
    open_view(browser, dashboard, "events")
    reasons = until(browser, "const r = [...document.querySelectorAll('.events tbody tr')];"
                             "return r.length && r.map(t => t.children[3].textContent);", "events")
    assert "PlacementChanged" in reasons or "CreateInCluster" in reasons, reasons
    screenshot(browser, "events")


def test_a_stopped_member_turns_its_card_unhealthy(fed, dashboard, browser):
    open_view(browser, dashboard, "clusters")
    fed["c"].terminate()
    until(browser, "const c = document.querySelector('.card[data-cluster=\"c\"]');"
                   "return c && c.dataset.health !== 'Ready' && c.querySelector('[data-role=message]');",
          "c's card unhealthy, with the reason", timeout=SLOW)
    card = text(browser, '.card[data-cluster="c"]')
    assert "✖" in card and ("Offline" in card or "NotReady" in card), card
    screenshot(browser, "clusters-unhealthy")
