// The dashboard pages: poll the JSON API (/api/v1, see scheduler_py/dashboard/openapi.py)
// and render it. Charts: Chart.js (+ chartjs-chart-matrix) and Cytoscape, vendored in static/vendor/.
"use strict";

const API = "/api/v1";
const body = document.body;
const POLL_MS = Number(body.dataset.pollMs) || 5000;

function text(value) {
  return value === null || value === undefined ? "–" : String(value);
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const cell of cells) {
    const td = document.createElement("td");
    if (cell instanceof Node) td.appendChild(cell); else td.textContent = text(cell);
    tr.appendChild(td);
  }
  return tr;
}

function fill(tableId, rows) {
  const tbody = document.querySelector(`#${tableId} tbody`);
  tbody.replaceChildren(...rows.map(row));
}

function link(href, label) {
  const a = document.createElement("a");
  a.href = href;
  a.textContent = label;
  return a;
}

async function getJson(path, options) {
  const response = await fetch(API + path, options);
  let data = {};
  try { data = await response.json(); } catch (e) { data = { error: `${response.status}` }; }
  return { ok: response.ok, status: response.status, data };
}

function showHealth(brain) {
  const span = document.getElementById("health");
  const state = brain ? brain.status || brain : "unknown";
  span.className = state === "ok" ? "ok" : state === "stale" ? "stale" : "bad";
  span.textContent = `brain: ${state}` + (brain && brain.error ? ` (${brain.error})` : "");
}

function poll(render) {
  const run = async () => {
    try { await render(); } catch (e) { showHealth({ status: "error", error: String(e) }); }
  };
  run();
  setInterval(run, POLL_MS);
}

// -- cluster ---------------------------------------------------------------------
let cpuChart = null;
async function renderCluster() {
  const { data } = await getJson("/cluster");
  showHealth(data.brain);
  const b = data.brain || {};
  document.getElementById("brain").textContent =
    `last round ${text(b.last_round)} (${text(b.last_round_age_s)} s ago), latency ` +
    `${text(b.round_latency_ms)} ms, fallbacks last round ${text(b.fallbacks_last_round)}, ` +
    `total ${text(b.fallbacks_total)}; Storm ${text(data.storm_version)}` +
    (data.aggregates_error ? `; ZooKeeper: ${data.aggregates_error}` : "");
  const sups = data.supervisors || [];
  fill("supervisors", sups.map(s => [s.host, s.rack, s.id, `${s.slots_used} / ${s.slots_free}`,
    s.cpu_capacity, s.cpu_declared_used, s.cpu_measured,
    s.slots.filter(x => x.topology_id).map(x => `${x.port}:${x.topology_name || x.topology_id}`).join(" ")]));
  const labels = sups.map(s => s.host + " " + s.id.slice(0, 8));
  const sets = [
    { label: "declared CPU used (%)", data: sups.map(s => s.cpu_declared_used) },
    { label: "measured CPU (%)", data: sups.map(s => s.cpu_measured || 0) },
  ];
  if (!cpuChart) {
    cpuChart = new Chart(document.getElementById("cpu-chart"),
      { type: "bar", data: { labels, datasets: sets }, options: { animation: false } });
  } else {
    cpuChart.data.labels = labels;
    cpuChart.data.datasets.forEach((d, i) => { d.data = sets[i].data; });
    cpuChart.update();
  }
  const topologies = await getJson("/topologies");
  fill("topologies", (topologies.data.topologies || []).map(t => [
    link(`/topology/${encodeURIComponent(t.name)}`, t.name), t.executors,
    `${t.workers_used} / ${t.num_workers}`, t.algorithm, t.storm_status]));
  const missing = data.missing_supervisors || [];
  const blacklisted = (data.blacklisted_supervisors || []).map(b =>
    `${b.host} (${b.id})` + (b.placed_topologies.length ? ` still running ${b.placed_topologies.join(", ")}` : ""));
  document.getElementById("missing").textContent = [
    missing.length ? `Supervisors placements name but Storm no longer reports: ${missing.join(", ")}` : "",
    blacklisted.length ? `Blacklisted by Nimbus this round: ${blacklisted.join("; ")}` : "",
  ].filter(Boolean).join(". ");
}

// -- topology --------------------------------------------------------------------
let graph = null;
let heatmap = null;
async function renderTopology() {
  const key = body.dataset.topology;
  const { ok, data } = await getJson(`/topologies/${encodeURIComponent(key)}`);
  showHealth(data.brain ? { status: data.brain } : null);
  const summary = document.getElementById("summary");
  if (!ok) { summary.textContent = data.error; return; }
  const basis = data.cost_basis || {};
  summary.textContent = `${data.id}: ${data.decision || "–"} by ${text(data.algorithm)} — ` +
    `${text(data.storm_status)}; costs ${basis.basis}` +
    (basis.aggregate_age_s !== null ? ` (aggregate ${basis.aggregate_age_s} s old)` : "") +
    (data.aggregate_error ? `; ZooKeeper: ${data.aggregate_error}` : "");
  const rows = [];
  const elements = [];
  for (const h of data.placement) {
    elements.push({ data: { id: `h:${h.host}`, label: h.host } });
    for (const w of h.workers) {
      elements.push({ data: { id: `w:${w.worker}`, label: w.worker, parent: `h:${h.host}` } });
      for (const e of w.executors) {
        elements.push({ data: { id: `e:${e.executor}`, label: `${e.component} ${e.executor}`, parent: `w:${w.worker}` } });
        rows.push([h.host, w.worker, e.executor, e.component, e.cpu_declared, e.cpu_measured]);
      }
    }
  }
  const known = new Set(elements.map(x => x.data.id));
  const peak = Math.max(1, ...data.edges.map(e => e.tuples_per_s || 0));
  for (const e of data.edges) {
    if (!known.has(`e:${e.src}`) || !known.has(`e:${e.dst}`)) continue;
    const colour = e.inter_host ? "#c33" : e.inter_worker ? "#e90" : "#9ab";
    elements.push({ data: { id: `x:${e.src}>${e.dst}`, source: `e:${e.src}`, target: `e:${e.dst}`,
      width: 1 + 6 * (e.tuples_per_s || 0) / peak, colour } });
  }
  fill("executors", rows);
  if (!graph) {
    graph = cytoscape({
      container: document.getElementById("graph"),
      style: [
        { selector: "node", style: { label: "data(label)", "font-size": 8 } },
        { selector: ":parent", style: { "background-opacity": 0.08, "text-valign": "top" } },
        { selector: "edge", style: { width: "data(width)", "line-color": "data(colour)",
          "curve-style": "bezier", "target-arrow-shape": "triangle", "target-arrow-color": "data(colour)" } },
      ],
    });
  }
  const signature = elements.map(x => x.data.id).join(",");
  if (graph.scratch("signature") !== signature) {
    graph.elements().remove();
    graph.add(elements);
    graph.layout({ name: "cose", animate: false }).run();
    graph.scratch("signature", signature);
  } else {
    for (const x of elements) if (x.data.source) graph.getElementById(x.data.id).data(x.data);
  }
  const labels = data.matrix.executors;
  const cells = data.matrix.cells.map(([i, j, v]) => ({ x: labels[j], y: labels[i], v: v || 0 }));
  const high = Math.max(1, ...cells.map(c => c.v));
  const dataset = {
    label: "tuples/s", data: cells,
    backgroundColor: c => `rgba(200,40,40,${0.1 + 0.9 * ((c.raw && c.raw.v) || 0) / high})`,
    width: ({ chart }) => (chart.chartArea || {}).width / Math.max(1, labels.length) - 1,
    height: ({ chart }) => (chart.chartArea || {}).height / Math.max(1, labels.length) - 1,
  };
  const scales = { x: { type: "category", labels, title: { display: true, text: "destination" } },
                   y: { type: "category", labels, offset: true, title: { display: true, text: "source" } } };
  if (!heatmap) {
    heatmap = new Chart(document.getElementById("heatmap"),
      { type: "matrix", data: { datasets: [dataset] }, options: { animation: false, scales,
        plugins: { legend: { display: false } } } });
  } else {
    heatmap.data.datasets[0].data = cells;
    heatmap.options.scales = scales;
    heatmap.update();
  }
}

// -- decisions -------------------------------------------------------------------
function timelineItem(item) {
  const li = document.createElement("li");
  const when = item.time_ms ? new Date(item.time_ms).toISOString() : "–";
  if (item.kind === "plan") {
    li.textContent = `${when} plan ${text(item.topology_id)}: ${text(item.decision)} by ` +
      `${text(item.algorithm)} in ${text(item.round_ms)} ms — ${text(item.reason)}`;
  } else {
    li.textContent = `${when} reconfiguration ${text(item.topology)} ${text(item.id)}: ` +
      `${text(item.state)} (trigger ${text(item.trigger)}, pause ${text(item.pause_secs)} s, ` +
      `workers restarted ${text(item.workers_restarted)}, predicted gain ` +
      `${text(item.predicted_gain)}, measured ${item.measured_gain ? JSON.stringify(item.measured_gain) : "–"})` +
      (item.reason ? ` — ${item.reason}` : "");
  }
  return li;
}

async function renderDecisions() {
  const { data } = await getJson("/decisions?limit=200");
  document.getElementById("sources").textContent =
    [data.plan_log_error, data.history_error].filter(Boolean).join("; ");
  document.getElementById("timeline").replaceChildren(...(data.items || []).map(timelineItem));
  showTrigger(data.trigger);
}

// the automatic trigger's state (status "trigger") and its pause/resume button
function showTrigger(t) {
  const paused = Boolean(t && (t.paused || Object.keys(t.paused_topologies || {}).length));
  const some = Object.keys((t && t.paused_topologies) || {});
  document.getElementById("trigger-line").textContent = !t || !t.controller
    ? "automatic trigger: no reconfiguration controller"
    : `automatic trigger: ${!t.enabled ? "disabled by configuration" : t.paused ? "paused for every topology" : "running"}`
      + (some.length ? `; paused for ${some.join(", ")}` : "");
  const button = document.getElementById("trigger-toggle");
  button.dataset.action = paused ? "resume" : "pause";
  button.textContent = paused ? "Resume automatic trigger" : "Pause automatic trigger";
}

async function toggleTrigger() {
  const action = document.getElementById("trigger-toggle").dataset.action;
  const token = document.getElementById("trigger-token").value;
  const result = await getJson(`/trigger/${action}`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
  if (result.ok) showTrigger(result.data.trigger);
  else document.getElementById("sources").textContent = result.data.error || `${result.status}`;
}

// -- what-if ---------------------------------------------------------------------
async function setUpWhatif() {
  const [topologies, algorithms] = await Promise.all([getJson("/topologies"), getJson("/algorithms")]);
  const topo = document.getElementById("wf-topology");
  topo.replaceChildren(...(topologies.data.topologies || []).map(t => new Option(t.name, t.name)));
  const alg = document.getElementById("wf-algorithm");
  alg.replaceChildren(new Option("(configured)", ""),
    ...(algorithms.data.algorithms || []).map(a => new Option(a.name, a.name)));
  const send = async (path, headers) => {
    let params;
    try { params = JSON.parse(document.getElementById("wf-params").value || "{}"); }
    catch (e) { document.getElementById("wf-proposal").textContent = `parameters: ${e}`; return null; }
    const result = await getJson(`/topologies/${encodeURIComponent(topo.value)}/${path}`, {
      method: "POST", headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ algorithm: alg.value, params }) });
    showComparison(result.ok ? result.data.proposal : null);
    document.getElementById("wf-running").textContent = JSON.stringify(result.data.running || {}, null, 2);
    document.getElementById("wf-proposal").textContent =
      JSON.stringify(result.ok ? result.data.proposal : result.data, null, 2);
    return result;
  };
  document.getElementById("whatif-form").addEventListener("submit", e => { e.preventDefault(); send("whatif", {}); });
  document.getElementById("wf-apply").addEventListener("click", async () => {
    const token = document.getElementById("wf-token").value;
    const result = await send("apply", { Authorization: `Bearer ${token}` });
    if (result && result.ok) poll(() => followProgress(topo.value, result.data.proposal.reconfiguration_id));
  });
}

function showComparison(p) {
  if (!p) { fill("wf-compare", []); fill("wf-moves", []); return; }
  fill("wf-compare", [
    ["inter-worker traffic", p.interworker_before, p.interworker_after],
    ["max host utilisation", p.max_node_utilisation_before, p.max_node_utilisation_after],
    ["workers used", p.workers_before, p.workers_after],
    ["workers restarted / stopped", "", `${text(p.workers_restarted)} / ${text(p.workers_stopped)}`],
    ["predicted gain (inter-worker traffic)", "", p.predicted_gain],
    ["costs", p.costs, p.algorithm],
  ]);
  fill("wf-moves", (p.moves || []).filter(m => m.from !== m.to).map(m => [m.executor, m.tasks, m.from, m.to]));
}

async function followProgress(topology, id) {
  const { data } = await getJson(`/decisions?topology=${encodeURIComponent(topology)}&limit=50`);
  const items = (data.items || []).filter(i => i.kind === "reconfiguration" && (!id || i.id === id));
  document.getElementById("wf-progress").replaceChildren(...items.map(timelineItem));
}

// -- algorithms ------------------------------------------------------------------
async function renderAlgorithms() {
  const { data } = await getJson("/algorithms");
  fill("algorithms", (data.algorithms || []).map(a => [a.name, a.paper, a.summary,
    a.params.map(p => `${p.name} = ${JSON.stringify(p.default)}: ${p.description}`).join("\n")]));
}

const PAGES = {
  cluster: () => poll(renderCluster),
  topology: () => poll(renderTopology),
  decisions: () => {
    document.getElementById("trigger-toggle").addEventListener("click", toggleTrigger);
    poll(renderDecisions);
  },
  whatif: setUpWhatif,
  algorithms: renderAlgorithms,
};
(PAGES[body.dataset.page] || (() => {}))();
