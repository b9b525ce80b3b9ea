// The dashboard's data: one list-then-watch per kind through the local
// proxy (`flotilla dashboard`), kept as maps by namespace/name, and the
// view of the moment redrawn at most once a frame when something changed.
// docs/dashboard.md.
import { render } from "./views.js";

// What the page reads, one watch each, across all namespaces.
const KINDS = {
  clusters: "/apis/federation/v1beta1/clusters",
  deployments: "/apis/apps/v1/deployments",
  replicasets: "/apis/apps/v1/replicasets",
  statefulsets: "/apis/apps/v1/statefulsets",
  hpas: "/apis/autoscaling/v2/horizontalpodautoscalers",
  events: "/api/v1/events",
};

const RETRY_MS = 2000;

const key = (o) => (o.metadata.namespace ? o.metadata.namespace + "/" : "") + o.metadata.name;

// One kind: its objects, kept current by a watch that resumes from the last
// resourceVersion it saw and lists again when that is too old (410).
class Resource {
  constructor(path, changed) {
    this.path = path;
    this.changed = changed;
    this.items = new Map();
    this.live = false;
    this.error = "";
  }

  async run() {
    for (;;) {
      try {
        const rv = await this.list();
        await this.watch(rv);
      } catch (e) {
        this.error = String(e.message || e);
      }
      this.live = false;
      this.changed();
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }

  async list() {
    const res = await fetch(this.path);
    const body = await res.json();
    if (!res.ok) throw new Error(body.message || res.statusText);
    this.items = new Map(body.items.map((o) => [key(o), o]));
    this.error = "";
    this.changed();
    return body.metadata.resourceVersion;
  }

  // Until the stream ends; throws on an error event other than 410.
  async watch(rv) {
    const url = `${this.path}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`;
    const res = await fetch(url);
    if (!res.ok) throw new Error((await res.json()).message || res.statusText);
    this.live = true;
    this.changed();
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) this.apply(JSON.parse(line));
      }
    }
  }

  apply(event) {
    const o = event.object;
    if (event.type === "ERROR") {
      if (o.code === 410) throw new Error("resourceVersion too old: listing again");
      throw new Error(o.message || "watch error");
    }
    if (event.type === "BOOKMARK") return;
    if (event.type === "DELETED") this.items.delete(key(o));
    else this.items.set(key(o), o);
    this.changed();
  }
}

const state = { view: "clusters", resources: {} };
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
  return out;
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
  document.getElementById("main").focus();
});
for (const [name, path] of Object.entries(KINDS)) state.resources[name] = new Resource(path, changed);
route();
for (const r of Object.values(state.resources)) r.run();
