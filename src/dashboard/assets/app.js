// The dashboard's data: each kind listed through the local proxy
// (`flotilla dashboard`) and followed by one watch per kind, all carried by
// one merged stream; kept as maps by namespace/name; the view of the moment
// redrawn at most once a frame when something changed.
// docs/dashboard.md.
import { render } from "./views.js";

// What the page reads, one watch each, across all namespaces: these, and
// each workload kind the federation lists (GET /workloads.json: {kind,
// path, breakdownAnnotation}, as the federated kinds declare them), by
// its plural.
const KINDS = {
  clusters: "/apis/federation/v1beta1/clusters",
  hpas: "/apis/autoscaling/v2/horizontalpodautoscalers",
  events: "/api/v1/events",
};

const RETRY_MS = 2000;

const key = (o) => (o.metadata.namespace ? o.metadata.namespace + "/" : "") + o.metadata.name;

// One kind: its objects and the resourceVersion they are current at (null:
// list again).
class Resource {
  constructor(path) {
    this.path = path;
    this.items = new Map();
    this.rv = null;
    this.live = false;
    this.error = "";
  }

  async list() {
    const res = await fetch(this.path);
    const body = await res.json();
    if (!res.ok) throw new Error(body.message || res.statusText);
    this.items = new Map(body.items.map((o) => [key(o), o]));
    this.rv = body.metadata.resourceVersion;
    this.error = "";
  }

  // Applies one watch event; throws when the watch must start over.
  apply(event) {
    const o = event.object;
    if (event.type === "ERROR") {
      this.rv = null; // 410 Gone or another end: list again
      throw new Error(o.message || "watch error");
    }
    this.rv = o.metadata.resourceVersion;
    if (event.type === "BOOKMARK") return;
    if (event.type === "DELETED") this.items.delete(key(o));
    else this.items.set(key(o), o);
  }
}

// Lists what needs it, then follows every kind through one merged watch
// (GET /watch?w=RV,PATH&...), again and again: a browser gives a page six
// connections to its origin, and a watch per kind would take them all.
async function follow(resources, changed) {
  const byPath = new Map(resources.map((r) => [r.path, r]));
  for (;;) {
    let failed = false;
    let reader = null;
    try {
      await Promise.all(resources.filter((r) => r.rv === null).map((r) =>
        r.list().catch((e) => {
          r.error = String(e.message || e);
        })));
      changed();
      const listed = resources.filter((r) => r.rv !== null);
      if (listed.length === 0) throw new Error("nothing could be listed");
      const query = listed.map((r) => "w=" + encodeURIComponent(`${r.rv},${r.path}`)).join("&");
      const res = await fetch("/watch?" + query);
      if (!res.ok) throw new Error((await res.json()).message || res.statusText);
      listed.forEach((r) => (r.live = true));
      changed();
      reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffered = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (!line) continue;
          const msg = JSON.parse(line);
          const r = byPath.get(msg.path);
          if (msg.error) {
            r.error = msg.error.message || "watch refused";
            r.rv = null;
          } else {
            r.apply(msg.event);
          }
          changed();
        }
      }
    } catch (e) {
      failed = true;
      for (const r of resources) if (!r.error && r.rv === null) r.error = String(e.message || e);
    } finally {
      // Ends the stream (and so every watch behind it) when we stopped early.
      if (reader) reader.cancel().catch(() => {});
    }
    resources.forEach((r) => (r.live = false));
    changed();
    await new Promise((done) => setTimeout(done, failed ? RETRY_MS : 100));
  }
}

const state = { view: "clusters", resources: {}, workloads: [] };
let scheduled = false;

function changed() {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    draw();
  });
}

function data() {
  const out = {};
  for (const [name, r] of Object.entries(state.resources)) out[name] = [...r.items.values()];
  out.workloadKinds = state.workloads.map((w) => ({ ...w, items: out[plural(w)] || [] }));
  return out;
}

const plural = (workload) => workload.path.slice(workload.path.lastIndexOf("/") + 1);

// The workload kinds the dashboard lists; none when it cannot say.
async function workloadKinds() {
  try {
    const res = await fetch("/workloads.json");
    return res.ok ? await res.json() : [];
  } catch {
    return [];
  }
}

function draw() {
  const resources = Object.values(state.resources);
  const down = Object.entries(state.resources).filter(([, r]) => !r.live);
  const connection = document.getElementById("connection");
  connection.textContent = down.length === 0
    ? "● Live"
    : `○ Reconnecting (${down.map(([n, r]) => n + (r.error ? ": " + r.error : "")).join("; ")})`;
  connection.dataset.live = String(down.length === 0 && resources.length > 0);
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    const selected = tab.getAttribute("href") === "#" + state.view;
    tab.setAttribute("aria-selected", String(selected));
    if (selected) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
  render(document.getElementById("main"), state.view, data());
}

function route() {
  const view = location.hash.slice(1);
  state.view = ["clusters", "workloads", "rollouts", "autoscaling", "events"].includes(view)
    ? view
    : "clusters";
  draw();
}

window.addEventListener("hashchange", () => {
  route();
  window.scrollTo(0, 0);
  document.getElementById("main").focus({ preventScroll: true });
});
state.workloads = await workloadKinds();
const paths = { ...KINDS };
for (const w of state.workloads) paths[plural(w)] = w.path;
for (const [name, path] of Object.entries(paths)) state.resources[name] = new Resource(path);
route();
follow(Object.values(state.resources), changed);
