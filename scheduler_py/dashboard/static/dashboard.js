// The dashboard pages: poll the JSON API (/api/v1, see scheduler_py/dashboard/openapi.py)
// and render it. Charts: Chart.js (+ chartjs-chart-matrix) and Cytoscape, vendored in static/vendor/.
// tests/test_dashboard_browser.py runs every page in headless Chromium.
"use strict";

const API = "/api/v1";
const body = document.body;
const POLL_MS = Number(body.dataset.pollMs) || 5000;

function num(value) {
  return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(3)));
}

function text(value) {
  if (value === null || value === undefined || value === "") return "–";
  return typeof value === "number" ? num(value) : String(value);
}

function percent(fraction) {
  return typeof fraction === "number" ? `${num(100 * fraction)} %` : "–";
}

function element(tag, content, className) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const part of [].concat(content)) {
    if (part instanceof Node) node.appendChild(part); else node.append(text(part));
  }
  return node;
}

function row(cells) {
  return element("tr", cells.map(cell => element("td", cell)));
}

function fill(tableId, rows) {
  document.querySelector(`#${tableId} tbody`).replaceChildren(...rows.map(row));
}

function link(href, label) {
  const a = element("a", label);
  a.href = href;
  return a;
}

function show(id, visible) {
  document.getElementById(id).hidden = !visible;
}

async function getJson(path, options) {
  const response = await fetch(API + path, options);
  let data = {};
  try { data = await response.json(); } catch (e) { data = { error: `${response.status} ${response.statusText}` }; }
  return { ok: response.ok, status: response.status, data };
}

function showHealth(brain) {
  const span = document.getElementById("health");
  const state = brain ? brain.status || "unknown" : "unknown";
  span.className = state === "ok" ? "ok" : state === "stale" ? "stale" : "bad";
  span.textContent = `brain: ${state}`;
  span.title = brain && brain.error ? brain.error : "";
}

// the brain's health for pages whose own answer does not carry it
async function readHealth() {
  const { ok, data } = await getJson("/topologies");
  showHealth(ok ? { status: data.brain } : { status: "unreachable", error: data.error });
  return ok ? data.topologies || [] : [];
}

function poll(render) {
  let running = false;
  const run = async () => {
    if (running) return;  // a slow answer: skip a beat rather than pile requests up
    running = true;
    try {
      await render();
    } catch (e) {
      console.error("dashboard:", e);
      showHealth({ status: "error", error: String(e) });
    } finally {
      running = false;
    }
  };
  run();
  return setInterval(run, POLL_MS);
}

// -- cluster ---------------------------------------------------------------------
let cpuChart = null;
async function renderCluster() {
  const { data } = await getJson("/cluster");
  showHealth(data.brain);
  const b = data.brain || {};
  const parts = [
    data.error ? data.error : `last round ${text(b.last_round)} (${text(b.last_round_age_s)} s ago)`,
    `round latency ${text(b.round_latency_ms)} ms`,
    `fallbacks to Storm's scheduler: ${text(b.fallbacks_last_round)} last round, ${text(b.fallbacks_total)} in total`,
  ];
  if (data.storm_version) parts.push(`Storm ${data.storm_version}`);
  if (b.version) parts.push(`brain ${b.version}`);
  if (data.aggregates_error) parts.push(`ZooKeeper: ${data.aggregates_error}`);
  document.getElementById("brain").textContent = parts.join("; ");
  const sups = data.supervisors || [];
  fill("supervisors", sups.map(s => [s.host, s.rack, s.id, `${s.slots_used} / ${s.slots_free}`,
    s.cpu_capacity, s.cpu_declared_used, s.cpu_measured,
    s.slots.filter(x => x.topology_id).map(x => `${x.port}:${x.topology_name || x.topology_id}`).join(" ")]));
  const labels = sups.map(s => s.host === s.id ? s.host : `${s.host} (${String(s.id).slice(0, 8)})`);
  const sets = [
    { label: "CPU capacity", data: sups.map(s => s.cpu_capacity), backgroundColor: "#dde3e8" },
    { label: "declared CPU used", data: sups.map(s => s.cpu_declared_used), backgroundColor: "#6a9fd4" },
    { label: "measured CPU", data: sups.map(s => s.cpu_measured || 0), backgroundColor: "#e0703a" },
  ];
  if (!cpuChart) {
    cpuChart = new Chart(document.getElementById("cpu-chart"), {
      type: "bar", data: { labels, datasets: sets },
      options: { animation: false, maintainAspectRatio: false,
        scales: { y: { beginAtZero: true, title: { display: true, text: "% of a core" } } } },
    });
  } else {
    cpuChart.data.labels = labels;
    cpuChart.data.datasets.forEach((d, i) => { d.data = sets[i].data; });
    cpuChart.update();
  }
  const answer = data.error ? { data: {} } : await getJson("/topologies");
  fill("topologies", (answer.data.topologies || []).map(t => [
    link(`/topology/${encodeURIComponent(t.name)}`, t.name), t.id, t.executors,
    `${t.workers_used} / ${t.num_workers}`, t.decision, t.algorithm, t.storm_status]));
  const notes = [];
  const missing = data.missing_supervisors || [];
  if (missing.length) notes.push(`Supervisors placements name but Storm no longer reports: ${missing.join(", ")}`);
  const blacklisted = (data.blacklisted_supervisors || []).map(b =>
    `${b.host} (${b.id})` + (b.placed_topologies.length ? ` still running ${b.placed_topologies.join(", ")}` : ""));
  if (blacklisted.length) notes.push(`Blacklisted by Nimbus this round: ${blacklisted.join("; ")}`);
  for (const [id, reason] of Object.entries(data.rejected_topologies || {})) notes.push(`${id} not planned: ${reason}`);
  document.getElementById("missing").textContent = notes.join("\n");
}

// -- topology --------------------------------------------------------------------
let graph = null;
let heatmap = null;
const NODE = 64;  // px between executor nodes in the graph

// hosts side by side (rows of at most 4), each host's workers stacked, each worker's
// executors in rows of at most 4: where the placement graph puts every executor
function placementPositions(placement) {
  const positions = {};
  const perRow = Math.max(3, Math.ceil(Math.sqrt(placement.length)));
  let x = 0, y = 0, rowHeight = 0;
  placement.forEach((h, index) => {
    if (index > 0 && index % perRow === 0) { x = 0; y += rowHeight + NODE; rowHeight = 0; }
    const columns = Math.min(4, Math.max(1, ...h.workers.map(w => w.executors.length)));
    let hy = y;
    for (const w of h.workers) {
      w.executors.forEach((e, i) => {
        positions[`e:${e.executor}`] = { x: x + (i % columns) * NODE, y: hy + Math.floor(i / columns) * NODE };
      });
      hy += Math.ceil(w.executors.length / columns) * NODE + NODE;
    }
    rowHeight = Math.max(rowHeight, hy - y);
    x += columns * NODE + NODE;
  });
  return positions;
}

async function renderTopology() {
  const key = body.dataset.topology;
  const { ok, data } = await getJson(`/topologies/${encodeURIComponent(key)}`);
  const summary = document.getElementById("summary");
  if (!ok) {
    await readHealth();
    summary.textContent = data.error;
    summary.className = "panel bad";
    return;
  }
  showHealth({ status: data.brain });
  summary.className = "panel";
  const basis = data.cost_basis || {};
  summary.replaceChildren(
    element("div", [element("strong", data.id), `: ${text(data.decision)}${data.algorithm ? ` by ${data.algorithm}` : ""}, ` +
      `${data.executors} executors on ${data.workers_used} of ${text(data.num_workers)} workers`]),
    element("div", `Storm's status: ${text(data.storm_status)}`),
    element("div", basis.basis === "measured"
      ? `Traffic and CPU measured: aggregate of ${text(basis.windows)} windows, ${text(basis.aggregate_age_s)} s old`
      : "Traffic and CPU not measured yet (no aggregate in ZooKeeper): declared costs only"),
    ...(data.aggregate_error ? [element("div", `ZooKeeper: ${data.aggregate_error}`, "bad")] : []));
  const rows = [];
  const elements = [];
  const positions = placementPositions(data.placement);
  for (const h of data.placement) {
    elements.push({ group: "nodes", data: { id: `h:${h.host}`, label: `host ${h.host}` }, classes: "host" });
    for (const w of h.workers) {
      elements.push({ group: "nodes", data: { id: `w:${w.worker}`, label: `worker :${w.worker.split(":").pop()}`, parent: `h:${h.host}` }, classes: "worker" });
      for (const e of w.executors) {
        elements.push({ group: "nodes", data: { id: `e:${e.executor}`, label: `${e.component} ${e.executor}`,
          parent: `w:${w.worker}`, component: e.component }, position: positions[`e:${e.executor}`] });
        rows.push([h.host, w.worker, e.executor, e.component, e.cpu_declared, e.cpu_measured]);
      }
    }
  }
  const known = new Set(elements.map(x => x.data.id));
  const edges = data.edges.filter(e => known.has(`e:${e.src}`) && known.has(`e:${e.dst}`));
  const peak = Math.max(1e-9, ...edges.map(e => e.tuples_per_s || 0));
  for (const e of edges) {
    const colour = e.inter_host ? "#c33" : e.inter_worker ? "#e90" : "#9ab";
    elements.push({ group: "edges", data: { id: `x:${e.src}>${e.dst}`, source: `e:${e.src}`, target: `e:${e.dst}`,
      width: 1 + 6 * (e.tuples_per_s || 0) / peak, colour } });
  }
  fill("executors", rows);
  document.getElementById("graph-note").textContent = edges.length ? ""
    : "No measured traffic between executors yet: the graph shows the placement only.";
  if (!graph) {
    graph = cytoscape({
      container: document.getElementById("graph"),
      style: [
        { selector: "node", style: { label: "data(label)", "font-size": 9, "background-color": "#567",
          "text-valign": "bottom", "text-margin-y": 2, width: 18, height: 18 } },
        { selector: "node.worker", style: { "background-color": "#f3ead8", "border-color": "#d9b36c",
          "text-valign": "top", "font-size": 10, padding: 12 } },
        { selector: "node.host", style: { "background-color": "#e8eef4", "border-color": "#789",
          "text-valign": "top", "font-size": 12, "font-weight": "bold", padding: 16 } },
        { selector: "edge", style: { width: "data(width)", "line-color": "data(colour)", "opacity": 0.85,
          "curve-style": "unbundled-bezier", "control-point-distances": -28, "control-point-weights": 0.5, "target-arrow-shape": "triangle", "target-arrow-color": "data(colour)" } },
      ],
      wheelSensitivity: 0.3,
    });
  }
  const signature = elements.map(x => x.data.id).join(",");
  if (graph.scratch("signature") !== signature) {
    graph.elements().remove();
    graph.add(elements);
    graph.layout({ name: "preset", fit: false }).run();
    // as tall as the placement needs at the container's width (within 220..640 px)
    const box = graph.elements().boundingBox();
    const container = document.getElementById("graph");
    const wanted = (box.h + 48) * Math.min(1.5, (container.clientWidth - 48) / Math.max(1, box.w));
    container.style.height = `${Math.round(Math.min(640, Math.max(220, wanted)))}px`;
    graph.resize();
    graph.fit(undefined, 24);
    graph.scratch("signature", signature);
  } else {
    for (const x of elements) if (x.data.source) graph.getElementById(x.data.id).data(x.data);
  }
  const components = {};
  for (const h of data.placement) for (const w of h.workers) for (const e of w.executors) components[e.executor] = e.component;
  renderHeatmap(data.matrix, components);
}

function renderHeatmap(matrix, components) {
  const labels = matrix.executors.map(x => (components[x] ? `${components[x]} ${x}` : x));
  show("heatmap-box", labels.length > 0);
  document.getElementById("heatmap-note").textContent = labels.length ? ""
    : "No executor pair has measured traffic yet (the worker monitor's aggregate has no pairs).";
  if (!labels.length) return;
  const cells = matrix.cells.map(([i, j, v]) => ({ x: labels[j], y: labels[i], v: v || 0 }));
  const high = Math.max(1e-9, ...cells.map(c => c.v));
  const dataset = {
    label: matrix.unit || "tuples/s", data: cells,
    backgroundColor: c => `rgba(200,40,40,${0.15 + 0.85 * ((c.raw && c.raw.v) || 0) / high})`,
    borderColor: "rgba(120,20,20,0.4)", borderWidth: 1,
    width: ({ chart }) => (chart.chartArea || {}).width / labels.length - 1,
    height: ({ chart }) => (chart.chartArea || {}).height / labels.length - 1,
  };
  const scales = {
    x: { type: "category", labels, offset: true, grid: { display: false }, title: { display: true, text: "destination executor" } },
    y: { type: "category", labels, offset: true, grid: { display: false }, title: { display: true, text: "source executor" } },
  };
  const tooltip = { callbacks: { title: () => "", label: c => `${c.raw.y} → ${c.raw.x}: ${num(c.raw.v)} ${dataset.label}` } };
  if (!heatmap) {
    heatmap = new Chart(document.getElementById("heatmap"), {
      type: "matrix", data: { datasets: [dataset] },
      options: { animation: false, maintainAspectRatio: false, scales, plugins: { legend: { display: false }, tooltip } },
    });
  } else {
    heatmap.data.datasets[0] = dataset;
    heatmap.options.scales = scales;
    heatmap.update();
  }
}

// -- decisions -------------------------------------------------------------------
function when(ms) {
  if (!ms) return "–";
  const d = new Date(ms);
  const pad = n => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function timelineItem(item) {
  const time = element("time", when(item.time_ms));
  if (item.time_ms) time.dateTime = new Date(item.time_ms).toISOString();
  if (item.kind === "plan") {
    return element("li", [time, " ", element("span", "plan", "kind plan"), " ",
      element("strong", text(item.topology_id)),
      `: ${text(item.decision)} by ${text(item.algorithm)} (round ${text(item.round)}, ${text(item.round_ms)} ms)`,
      element("div", text(item.reason), "reason")]);
  }
  const measured = item.measured_gain;
  const states = ((item.entry || {}).states || []).map(s => (typeof s === "object" ? s.state : s)).filter(Boolean);
  return element("li", [time, " ", element("span", "reconfiguration", "kind reconfiguration"), " ",
    element("strong", text(item.topology)), ` ${text(item.id)}: ${text(item.state)}`,
    element("div", `trigger ${text(item.trigger)}, pause ${text(item.pause_secs)} s, workers restarted ` +
      `${text(item.workers_restarted)}, predicted gain ${text(item.predicted_gain)}, measured ` +
      `${measured ? JSON.stringify(measured) : "–"}` + (states.length ? `; states ${states.join(" → ")}` : ""), "reason"),
    ...(item.reason ? [element("div", item.reason, "reason")] : [])]);
}

// bumped around every pause/resume click: a poll that began before the click must not show
// the trigger's state from before it (the button would then repeat the action)
let triggerChanges = 0;

async function renderDecisions() {
  const seen = triggerChanges;
  const [{ data }] = await Promise.all([getJson("/decisions?limit=200"), readHealth()]);
  const problems = [data.plan_log_error, data.history_error, data.error].filter(Boolean);
  document.getElementById("sources").textContent = problems.join("; ");
  const items = data.items || [];
  document.getElementById("timeline").replaceChildren(...items.map(timelineItem));
  document.getElementById("empty").hidden = items.length > 0;
  if (seen === triggerChanges) showTrigger(data.trigger);
}

// the automatic trigger's state (status "trigger") and its pause/resume button
function triggerLine(t) {
  if (!t || !t.controller) return "automatic trigger: no reconfiguration controller";
  if (t.error) return `automatic trigger: state unknown (${t.error})`;
  const some = Object.keys(t.paused_topologies || {});
  return `automatic trigger: ${!t.enabled ? "disabled by configuration" : t.paused ? "paused for every topology" : "running"}`
    + (some.length ? `; paused for ${some.join(", ")}` : "");
}

function showTrigger(t) {
  const paused = Boolean(t && (t.paused || Object.keys(t.paused_topologies || {}).length));
  document.getElementById("trigger-line").textContent = triggerLine(t);
  const button = document.getElementById("trigger-toggle");
  button.dataset.action = paused ? "resume" : "pause";
  button.textContent = paused ? "Resume automatic trigger" : "Pause automatic trigger";
}

async function toggleTrigger() {
  const button = document.getElementById("trigger-toggle");
  const note = document.getElementById("trigger-status");
  const action = button.dataset.action;
  const token = document.getElementById("trigger-token").value;
  triggerChanges += 1;
  button.disabled = true;  // one change at a time
  note.textContent = `${action === "pause" ? "pausing" : "resuming"}…`;
  note.className = "";
  try {
    const result = await getJson(`/trigger/${action}`, { method: "POST", headers: { Authorization: `Bearer ${token}` } });
    triggerChanges += 1;
    if (result.ok) showTrigger(result.data.trigger);
    note.textContent = result.ok ? `${action}d at ${when(Date.now())}` : `${result.status}: ${result.data.error}`;
    note.className = result.ok ? "ok" : "bad";
  } finally {
    button.disabled = false;
  }
}

// -- what-if ---------------------------------------------------------------------
let progress = null;
async function setUpWhatif() {
  const [topologies, algorithms] = await Promise.all([readHealth(), getJson("/algorithms")]);
  setInterval(() => readHealth().catch(e => console.error("dashboard:", e)), POLL_MS);
  const topo = document.getElementById("wf-topology");
  topo.replaceChildren(...topologies.map(t => new Option(t.name, t.name)));
  const alg = document.getElementById("wf-algorithm");
  alg.replaceChildren(new Option("(configured)", ""),
    ...(algorithms.data.algorithms || []).map(a => new Option(a.name, a.name)));
  const status = document.getElementById("wf-status");
  const send = async (path, headers) => {
    let params;
    try { params = JSON.parse(document.getElementById("wf-params").value || "{}"); }
    catch (e) { status.textContent = `parameters: expected a JSON object, ${e.message}`; status.className = "bad"; return null; }
    status.textContent = `${path === "apply" ? "applying" : "planning"} ${topo.value} with ${alg.value || "the configured algorithm"}…`;
    status.className = "";
    const result = await getJson(`/topologies/${encodeURIComponent(topo.value)}/${path}`, {
      method: "POST", headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ algorithm: alg.value, params }) });
    showComparison(result.ok ? result.data : null);
    document.getElementById("wf-json").textContent = JSON.stringify(result.data, null, 2);
    status.textContent = result.ok
      ? `${result.data.dry_run ? "dry run" : "applying"}: ${topo.value} by ${result.data.proposal.algorithm}` +
        (result.data.proposal.unchanged ? " (the plan is the running placement: nothing to change)" : "")
      : `${result.status}: ${result.data.error}`;
    status.className = result.ok ? "ok" : "bad";
    return result;
  };
  document.getElementById("whatif-form").addEventListener("submit", e => { e.preventDefault(); send("whatif", {}); });
  document.getElementById("wf-apply").addEventListener("click", async () => {
    const token = document.getElementById("wf-token").value;
    const result = await send("apply", { Authorization: `Bearer ${token}` });
    if (result && result.ok) {
      if (progress !== null) clearInterval(progress);
      show("wf-progress-box", true);
      progress = poll(() => followProgress(topo.value, result.data.proposal.reconfiguration_id));
    }
  });
}

function slotTable(moves, side) {
  const workers = new Map();
  for (const m of moves) {
    const slot = m[side] || "(not placed)";
    if (!workers.has(slot)) workers.set(slot, []);
    workers.get(slot).push(m);
  }
  const table = element("table", element("thead", element("tr", [element("th", "worker"), element("th", "executors")])));
  const tbody = element("tbody", []);
  for (const slot of [...workers.keys()].sort()) {
    tbody.appendChild(row([slot, workers.get(slot).map(m => {
      const moved = m.from !== m.to;
      return element("span", `${m.executor} (${m.tasks})`, moved ? "exec moved" : "exec");
    })]));
  }
  table.appendChild(tbody);
  return table;
}

function showComparison(answer) {
  const p = answer ? answer.proposal : null;
  document.getElementById("wf-result").hidden = !p;
  if (!p) return;
  const running = answer.running || {};
  const share = v => (p.total_traffic > 0 && typeof v === "number" ? ` (${percent(v / p.total_traffic)} of all)` : "");
  fill("wf-compare", [
    ["algorithm", running.algorithm, p.algorithm],
    ["inter-worker traffic", `${text(p.interworker_before)}${share(p.interworker_before)}`,
      `${text(p.interworker_after)}${share(p.interworker_after)}`],
    ["max host CPU utilisation", percent(p.max_node_utilisation_before), percent(p.max_node_utilisation_after)],
    ["workers used", p.workers_before, p.workers_after],
    ["workers restarted / stopped", "", `${text(p.workers_restarted)} / ${text(p.workers_stopped)}`],
    ["predicted gain (inter-worker traffic)", "", p.predicted_gain],
    ...(p.objective === "throughput" ? [
      ["predicted throughput (spout tuples/s)", text(p.predicted_throughput_before), text(p.predicted_throughput_after)],
      ["bottleneck", p.bottleneck_before || "none", p.bottleneck_after || "none"],
    ] : []),
    ["cost basis", p.costs, p.costs],
  ]);
  const moved = (p.moves || []).filter(m => m.from !== m.to);
  document.getElementById("wf-moved").textContent =
    `${moved.length} of ${(p.moves || []).length} executors move (marked).`;
  document.getElementById("wf-running").replaceChildren(slotTable(p.moves || [], "from"));
  document.getElementById("wf-proposal").replaceChildren(slotTable(p.moves || [], "to"));
  const broken = p.violations_before || [];
  document.getElementById("wf-violations").textContent = broken.length ? `The running placement breaks: ${broken.join("; ")}` : "";
}

async function followProgress(topology, id) {
  const { data } = await getJson(`/decisions?topology=${encodeURIComponent(topology)}&limit=50`);
  const items = (data.items || []).filter(i => i.kind === "reconfiguration" && (!id || i.id === id));
  document.getElementById("wf-progress").replaceChildren(...items.map(timelineItem));
}

// -- algorithms ------------------------------------------------------------------
async function renderAlgorithms() {
  const [{ data }] = await Promise.all([getJson("/algorithms"), readHealth()]);
  fill("algorithms", (data.algorithms || []).map(a => [element("strong", a.name), a.paper, a.summary,
    a.params.length ? element("ul", a.params.map(p => element("li", [element("code", `${p.name} = ${JSON.stringify(p.default)}`), ` ${p.description}`])))
      : "none"]));
}

const PAGES = {
  cluster: () => poll(renderCluster),
  topology: () => poll(renderTopology),
  decisions: () => {
    document.getElementById("trigger-toggle").addEventListener("click",
      () => toggleTrigger().catch(e => console.error("dashboard:", e)));
    poll(renderDecisions);
  },
  whatif: () => setUpWhatif().catch(e => { console.error("dashboard:", e); showHealth({ status: "error", error: String(e) }); }),
  algorithms: () => renderAlgorithms().catch(e => { console.error("dashboard:", e); showHealth({ status: "error", error: String(e) }); }),
};
(PAGES[body.dataset.page] || (() => {}))();
