// The dashboard's views, drawn from the objects the page watches: Clusters
// (cards by region), Workloads (a virtualised list of bars split by
// cluster), Rollouts (cluster-by-cluster progress), Autoscaling (a federated
// HPA's per-cluster bounds and why they moved) and Events. Every state is
// said in text as well as in colour. docs/dashboard.md.

const ROW_HEIGHT = 64; // px, of a workload row (style.css .row)
const OVERSCAN = 8;
const MAX_EVENTS = 200;
const PALETTE = ["#3b82f6", "#f59e0b", "#10b981", "#8b5cf6", "#ef4444", "#06b6d4", "#84cc16",
  "#ec4899", "#f97316", "#6366f1"];

const HPA_STATUS = "federation.kubernetes.io/hpa-status";
const SHADOW = "federation.kubernetes.io/shadow-replicaset";
const AFFINITY = "federation.kubernetes.io/location-affinity";
const UPDATE_ORDER = "federation.kubernetes.io/cluster-update-order";

// h("div", {class: "x"}, child, "text", ...): an element.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "style") Object.assign(el.style, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null && c !== false) el.append(c);
  }
  return el;
}

// Replaces `main`'s children with `children` (arrays flattened, nulls left out).
function fill(main, ...children) {
  main.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

function annotation(o, name) {
  return (o.metadata.annotations || {})[name];
}

function parsed(o, name) {
  try {
    return JSON.parse(annotation(o, name) || "{}");
  } catch {
    return {};
  }
}

function condition(o, type) {
  return ((o.status || {}).conditions || []).find((c) => c.type === type) || {};
}

// A quantity in its base unit (cores, bytes, pods).
function quantity(q) {
  if (q === undefined || q === null) return null;
  const m = /^([0-9.]+)([a-zA-Z]*)$/.exec(String(q));
  if (!m) return null;
  const units = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2,
    Gi: 1024 ** 3, Ti: 1024 ** 4 };
  return Number(m[1]) * (units[m[2]] ?? NaN);
}

function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) (n /= 1024), i++;
  return `${n % 1 ? n.toFixed(1) : n} ${units[i]}`;
}

function health(cluster) {
  const ready = condition(cluster, "Ready").status;
  if (ready === "True") return "Ready";
  if (ready === "False") return condition(cluster, "Offline").status === "True" ? "Offline" : "NotReady";
  return "Unknown";
}

function scheduling(cluster) {
  const spec = cluster.spec || {};
  return spec.draining ? "Draining" : spec.unschedulable ? "Cordoned" : "Schedulable";
}

const ICON = { Ready: "✔", NotReady: "✖", Offline: "✖", Unknown: "?" };

function badge(text, tone, attrs) {
  return h("span", { class: `badge ${tone}`, ...attrs }, text);
}

// A bar of `used` over `total`, said in words too.
function meter(label, used, total, format) {
  if (used === null || total === null) return h("p", { class: "meter-none" }, `${label}: not known yet`);
  const share = total > 0 ? Math.min(1, used / total) : 0;
  const pct = Math.round(share * 100);
  const text = `${label}: ${format(used)} of ${format(total)} requested (${pct}%)`;
  return h("div", { class: "meter-wrap" },
    h("span", { class: "meter-label" }, text),
    h("div", { class: `meter${share >= 0.9 ? " high" : ""}`, role: "meter", "aria-label": text,
      "aria-valuemin": 0, "aria-valuemax": total, "aria-valuenow": used },
    h("div", { class: "meter-fill", style: { width: `${pct}%` } })));
}

function clusterCard(c) {
  const st = c.status || {};
  const summary = st.resourceSummary || {};
  const alloc = summary.allocatable || {};
  const used = summary.allocated || {};
  const state = health(c);
  const sched = scheduling(c);
  const nodes = st.nodeSummary;
  return h("article", { class: "card", "data-cluster": c.metadata.name, "data-health": state,
    "aria-labelledby": `cluster-${c.metadata.name}` },
  h("header", {},
    h("h3", { id: `cluster-${c.metadata.name}` }, c.metadata.name),
    badge(`${ICON[state]} ${state}`, state === "Ready" ? "ok" : "bad", { "data-role": "health" }),
    sched !== "Schedulable" ? badge(`‖ ${sched}`, "warn", { "data-role": "scheduling" }) : null),
  h("dl", { class: "facts" },
    h("dt", {}, "Zones"), h("dd", {}, (st.zones || []).join(", ") || "—"),
    h("dt", {}, "Version"), h("dd", {}, st.kubernetesVersion || "—"),
    h("dt", {}, "Nodes"), h("dd", {}, nodes ? `${nodes.readyNum} of ${nodes.totalNum} ready` : "—"),
    h("dt", {}, "Federated objects"), h("dd", { "data-role": "objects" }, st.federatedObjects ?? "—")),
  meter("CPU", quantity(used.cpu), quantity(alloc.cpu), (n) => `${+n.toFixed(2)} cores`),
  meter("Memory", quantity(used.memory), quantity(alloc.memory), bytes),
  state !== "Ready" ? h("p", { class: "message", "data-role": "message" },
    condition(c, "Ready").message || "") : null);
}

// Cards by cluster name, kept while their Cluster's resourceVersion holds:
// a status write redraws one card, not a hundred.
const cards = new Map();

function cardOf(c) {
  const cached = cards.get(c.metadata.name);
  if (cached && cached.rv === c.metadata.resourceVersion) return cached.el;
  const el = clusterCard(c);
  cards.set(c.metadata.name, { rv: c.metadata.resourceVersion, el });
  return el;
}

// Region sections by name, kept like the cards.
const regions = new Map();

// Makes `parent`'s children exactly `children`, touching nothing when they
// already are: the browser then lays out only what changed.
function sync(parent, children) {
  const now = parent.children;
  if (now.length === children.length && children.every((c, i) => now[i] === c)) return;
  parent.replaceChildren(...children);
}

function regionOf(name) {
  if (!regions.has(name)) {
    const cardsEl = h("div", { class: "cards" });
    regions.set(name, { cards: cardsEl, el: h("section", { class: "region", "aria-label": `Region ${name}` },
      h("h3", { class: "region-name" }, name), cardsEl) });
  }
  return regions.get(name);
}

const clustersPage = { title: h("h2", {}, "Clusters"), summary: h("p", { class: "summary" }),
  regions: h("div", { class: "regions" }),
  empty: h("p", {}, "No member clusters joined yet: kubectl flotilla join NAME --cluster-kubeconfig FILE") };

function clustersView(main, d) {
  const names = new Set(d.clusters.map((c) => c.metadata.name));
  for (const name of cards.keys()) if (!names.has(name)) cards.delete(name);
  const byRegion = new Map();
  for (const c of [...d.clusters].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const region = (c.status || {}).region || "No region";
    if (!byRegion.has(region)) byRegion.set(region, []);
    byRegion.get(region).push(c);
  }
  const ready = d.clusters.filter((c) => health(c) === "Ready").length;
  clustersPage.summary.textContent = `${ready} of ${d.clusters.length} clusters ready`;
  const sections = [...byRegion.entries()].sort().map(([region, clusters]) => {
    const r = regionOf(region);
    sync(r.cards, clusters.map(cardOf));
    return r.el;
  });
  sync(clustersPage.regions, sections);
  sync(main, [clustersPage.title, clustersPage.summary,
    ...(d.clusters.length === 0 ? [clustersPage.empty] : []), clustersPage.regions]);
}

// Desired and ready: replicas; for a DaemonSet the nodes that should run
// its pod and those whose pod is ready; for a Job its completions and those
// that succeeded; for a PodDisruptionBudget the healthy pods it wants and
// has; for an Ingress or a claim its copies and those served or Bound.
function counts(o, kind, cells) {
  const status = o.status || {};
  const spec = o.spec || {};
  if (kind === "DaemonSet") {
    return { desired: status.desiredNumberScheduled || 0, ready: status.numberReady || 0 };
  }
  if (kind === "Job") {
    return { desired: spec.completions ?? spec.parallelism ?? 1, ready: status.succeeded || 0 };
  }
  if (kind === "PodDisruptionBudget") {
    return { desired: status.desiredHealthy || 0, ready: status.currentHealthy || 0 };
  }
  if (kind === "Ingress" || kind === "PersistentVolumeClaim") {
    return { desired: cells.reduce((s, c) => s + c.planned, 0),
      ready: cells.reduce((s, c) => s + c.ready, 0) };
  }
  return { desired: spec.replicas ?? 1, ready: status.readyReplicas || 0 };
}

// The workloads as rows: kind/name, totals and per-cluster cells.
function workloadsOf(d) {
  const hpas = new Map(d.hpas.map((h) => {
    const t = h.spec.scaleTargetRef || {};
    return [`${h.metadata.namespace}/${t.kind}/${t.name}`, h];
  }));
  const rows = [];
  const add = (o, kind, breakdown) => {
    const b = parsed(o, breakdown).clusters || {};
    const cells = Object.entries(b).map(([cluster, c]) => ({
      cluster, planned: c.planned || 0, ready: c.ready || 0, rollout: c.rollout || "",
    })).sort((x, y) => x.cluster.localeCompare(y.cluster));
    rows.push({ o, kind, breakdown, id: `${o.metadata.namespace}/${kind.toLowerCase()}/${o.metadata.name}`,
      ...counts(o, kind, cells), cells,
      hpa: hpas.get(`${o.metadata.namespace}/${kind}/${o.metadata.name}`),
      affinity: annotation(o, AFFINITY) || "strictly-decoupled" });
  };
  // A Deployment's shadow ReplicaSets are not workloads of their own.
  for (const w of d.workloadKinds) {
    w.items.filter((o) => annotation(o, SHADOW) !== "true")
      .forEach((o) => add(o, w.kind, w.breakdownAnnotation));
  }
  return rows.sort((a, b) => a.id.localeCompare(b.id));
}

function colourOf(clusters) {
  const names = clusters.map((c) => c.metadata.name).sort();
  return (name) => PALETTE[Math.max(0, names.indexOf(name)) % PALETTE.length];
}

function workloadRow(w, colour) {
  const total = Math.max(1, w.cells.reduce((s, c) => s + c.planned, 0));
  return h("li", { class: "row", "data-workload": w.id },
    h("div", { class: "row-name" },
      h("div", {}, h("strong", {}, `${w.kind.toLowerCase()}/${w.o.metadata.name}`),
        h("span", { class: "ns" }, w.o.metadata.namespace)),
      h("div", {},
        h("span", { class: `ready ${w.ready >= w.desired ? "ok" : "warn"}`, "data-role": "ready" },
          `${w.ready >= w.desired ? "✔" : "…"} ${w.ready}/${w.desired} ready`),
        w.hpa ? h("span", { class: "tag" }, `HPA ${w.hpa.spec.minReplicas ?? 1}–${w.hpa.spec.maxReplicas}`) : null,
        w.affinity !== "strictly-decoupled" ? h("span", { class: "tag" }, w.affinity) : null)),
    h("div", { class: "split", role: "img",
      "aria-label": w.cells.map((c) => `${c.cluster}: ${c.ready} of ${c.planned} ready`).join("; ") || "not placed" },
    w.cells.filter((c) => c.planned > 0 || c.ready > 0).map((c) =>
      h("div", { class: "segment", "data-cluster": c.cluster, "data-ready": c.ready, "data-planned": c.planned,
        style: { flexGrow: String(Math.max(c.planned, 1) / total), borderColor: colour(c.cluster) } },
      h("div", { class: "segment-fill", style: { width: `${c.planned ? Math.min(100, (100 * c.ready) / c.planned) : 0}%`, background: colour(c.cluster) } }),
      h("span", { class: "segment-label" }, `${c.cluster} ${c.ready}/${c.planned}`)))));
}

// A list that draws only the rows in sight, so a thousand workloads scroll
// as smoothly as ten. It keeps its DOM (and the filter's text and focus)
// across data updates.
class WorkloadList {
  constructor() {
    this.filter = h("input", { type: "search", id: "filter", placeholder: "Filter by namespace or name",
      "aria-label": "Filter workloads", oninput: () => this.draw() });
    this.count = h("p", { class: "summary", "aria-live": "polite" });
    this.inner = h("ol", { class: "vlist-inner" });
    this.viewport = h("div", { class: "vlist", tabindex: "0", "aria-label": "Federated workloads",
      onscroll: () => this.draw() }, this.inner);
    this.root = h("div", {}, h("h2", {}, "Workloads"), this.filter, this.count, this.viewport);
    this.rows = [];
  }

  update(d) {
    this.all = workloadsOf(d);
    this.colour = colourOf(d.clusters);
    this.draw();
  }

  draw() {
    const q = this.filter.value.trim().toLowerCase();
    this.rows = q ? this.all.filter((w) => w.id.toLowerCase().includes(q)) : this.all;
    this.count.textContent = `${this.rows.length} federated workloads`;
    this.inner.style.height = `${this.rows.length * ROW_HEIGHT}px`;
    const top = this.viewport.scrollTop;
    const height = this.viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.rows.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    const items = [];
    for (let i = first; i < last; i++) {
      const row = workloadRow(this.rows[i], this.colour);
      row.style.transform = `translateY(${i * ROW_HEIGHT}px)`;
      items.push(row);
    }
    this.inner.replaceChildren(...items);
  }
}

const ROLLOUT_ICON = { complete: "✔", updating: "↻", waiting: "○", paused: "‖", failed: "✖" };

function rolloutsView(main, d) {
  const rows = workloadsOf(d).filter((w) => w.kind !== "ReplicaSet");
  const order = (w) => {
    const first = (annotation(w.o, UPDATE_ORDER) || "").split(",").map((s) => s.trim()).filter(Boolean);
    const rank = (c) => (first.includes(c.cluster) ? first.indexOf(c.cluster) : first.length);
    return [...w.cells].sort((a, b) => rank(a) - rank(b) || a.cluster.localeCompare(b.cluster));
  };
  const progress = (w) => w.cells.some((c) => c.rollout && c.rollout !== "complete");
  rows.sort((a, b) => progress(b) - progress(a) || a.id.localeCompare(b.id));
  fill(main, h("h2", {}, "Rollouts"),
    rows.length === 0 ? h("p", {}, "No federated Deployments or StatefulSets.") : null,
    rows.map((w) => {
      const b = parsed(w.o, w.breakdown);
      const revision = b.revision || b.updateRevision || "";
      return h("section", { class: "rollout", "data-workload": w.id, "aria-label": `Rollout of ${w.id}` },
        h("h3", {}, `${w.kind.toLowerCase()}/${w.o.metadata.name}`, h("span", { class: "ns" }, w.o.metadata.namespace),
          revision ? h("span", { class: "tag" }, `revision ${revision}`) : null),
        h("ol", { class: "steps" }, order(w).map((c) => {
          const detail = (b.clusters || {})[c.cluster] || {};
          const updated = detail.updated ?? 0;
          return h("li", { class: `step ${c.rollout || "none"}`, "data-cluster": c.cluster, "data-rollout": c.rollout },
            h("span", { class: "step-icon", "aria-hidden": "true" }, ROLLOUT_ICON[c.rollout] || "·"),
            h("span", { class: "step-name" }, c.cluster),
            h("span", {}, `${c.rollout || "unknown"} · ${updated}/${c.planned} updated · ${c.ready} ready`));
        })));
    }));
}

function eventTime(e) {
  return e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata.creationTimestamp || "";
}

function eventsTable(events) {
  return h("table", { class: "events" },
    h("thead", {}, h("tr", {}, ["Time", "Type", "Object", "Reason", "Message"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, events.map((e) => h("tr", { class: e.type === "Warning" ? "warning" : "" },
      h("td", {}, h("time", { datetime: eventTime(e) }, eventTime(e).replace("T", " ").replace("Z", ""))),
      h("td", {}, e.type === "Warning" ? "⚠ Warning" : "Normal"),
      h("td", {}, `${(e.involvedObject || {}).kind || ""}/${(e.involvedObject || {}).name || ""}`),
      h("td", {}, e.reason || ""),
      h("td", {}, e.message || "")))));
}

function recent(events) {
  return [...events].sort((a, b) => eventTime(b).localeCompare(eventTime(a))).slice(0, MAX_EVENTS);
}

function autoscalingView(main, d) {
  fill(main, h("h2", {}, "Autoscaling"),
    d.hpas.length === 0 ? h("p", {}, "No federated HorizontalPodAutoscalers.") : null,
    [...d.hpas].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)).map((hpa) => {
      const clusters = parsed(hpa, HPA_STATUS).clusters || {};
      const t = hpa.spec.scaleTargetRef || {};
      const st = hpa.status || {};
      const events = recent(d.events.filter((e) => (e.involvedObject || {}).kind === "HorizontalPodAutoscaler" &&
        e.involvedObject.name === hpa.metadata.name && e.involvedObject.namespace === hpa.metadata.namespace)).slice(0, 10);
      return h("section", { class: "hpa", "data-hpa": `${hpa.metadata.namespace}/${hpa.metadata.name}` },
        h("h3", {}, hpa.metadata.name, h("span", { class: "ns" }, hpa.metadata.namespace)),
        h("p", {}, `Scales ${t.kind}/${t.name} between ${hpa.spec.minReplicas ?? 1} and ${hpa.spec.maxReplicas} replicas; ` +
          `now ${st.currentReplicas ?? 0}, wants ${st.desiredReplicas ?? 0}.`),
        h("table", {}, h("thead", {}, h("tr", {}, ["Cluster", "Min", "Max", "Current", "Desired", "Load", "Shares"].map((x) => h("th", { scope: "col" }, x)))),
          h("tbody", {}, Object.entries(clusters).sort().map(([name, c]) => h("tr", { "data-cluster": name },
            h("th", { scope: "row" }, name), h("td", {}, c.minReplicas), h("td", {}, c.maxReplicas),
            h("td", {}, c.currentReplicas ?? 0), h("td", {}, c.desiredReplicas ?? 0),
            h("td", {}, c.utilization === undefined ? "—" : `${c.utilization}% of target`),
            h("td", {}, c.frozen ? "‖ held" : "free"))))),
        h("h4", {}, "Why the bounds moved"),
        events.length ? eventsTable(events) : h("p", {}, "No events yet."));
    }));
}

function eventsView(main, d) {
  const events = recent(d.events);
  fill(main, h("h2", {}, "Events"),
    h("p", { class: "summary" }, `The ${events.length} most recent events, newest first`),
    eventsTable(events));
}

let list = null;
let drawn = "";

// Draws `view` into `main` from `d` ({clusters, deployments, ...}: arrays).
export function render(main, view, d) {
  if (view === "workloads") {
    if (drawn !== "workloads" || !list) {
      list = list || new WorkloadList();
      fill(main, list.root);
    }
    list.update(d);
  } else {
    ({ clusters: clustersView, rollouts: rolloutsView, autoscaling: autoscalingView, events: eventsView })[view](main, d);
  }
  drawn = view;
}
