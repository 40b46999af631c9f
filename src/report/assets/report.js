// cleansweep's study report: draws every figure as SVG from the JSON in #study-data. No library,
// nothing fetched: the file works offline. Each figure's <svg> gets data-drawn = how many marks it
// drew (points, lines, bars, spans), which tests/report/report_test.sh reads from the DOM.
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";
const STATE_COLORS = {
  COMPLETE: "#2e90fa", PRUNED: "#98a2b3", FAIL: "#f04438", CRASH: "#b42318", OOM_GPU: "#f79009",
  OOM_HOST: "#dc6803", TIMEOUT: "#9e77ed", INTERRUPTED: "#d0d5dd", RUNNING: "#12b76a", PAUSED: "#fdb022",
};
const data = JSON.parse(document.getElementById("study-data").textContent);
const study = data.study;
const maximize = study.direction === "maximize";
// The study's objectives in order (the first is the one pruning and the single-metric figures use).
const metrics = study.metrics && study.metrics.length ? study.metrics : [{ name: study.metric, direction: study.direction }];
const multi = metrics.length > 1;
const constraints = study.constraints || [];
const tooltip = document.getElementById("tooltip");

function svgEl(tag, attrs, parent) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function htmlEl(tag, text, parent, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  if (cls) node.className = cls;
  if (parent) parent.appendChild(node);
  return node;
}

function fmt(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(3) : String(+v.toPrecision(5));
}

function fmtDuration(seconds) {
  if (!(seconds >= 0)) return "–";
  if (seconds < 60) return seconds.toFixed(seconds < 10 ? 2 : 1) + " s";
  if (seconds < 3600) return (seconds / 60).toFixed(1) + " min";
  return (seconds / 3600).toFixed(2) + " h";
}

function trialText(t) {
  const values = multi && t.vs ? metrics.map((m, i) => `${m.name} = ${fmt(t.vs[i])}`).join(", ")
    : (t.v === null ? "" : `${study.metric} = ${fmt(t.v)}`);
  const lines = [`trial ${t.n}  ${t.s}` + (values ? `  ${values}` : "")];
  if (t.pf) lines.push("on the Pareto front");
  if (infeasible(t)) lines.push(`infeasible: violation ${fmt(t.vi)} (${constraints.join(", ")})`);
  for (const p of data.params) if (p.name in t.p) lines.push(`${p.name} = ${fmt(t.p[p.name])}`);
  lines.push((t.ws ? `${t.gp} workers (ranks ${t.ws}), rank 0 on ${t.h}` : `rank ${t.w} on ${t.h}`) +
    (t.g ? ` (GPU ${t.g})` : "") + (t.t1 > 0 ? `, ${fmtDuration(t.t1 - t.t0)}` : ""));
  if (t.gm) lines.push(`GPU memory (MiB): ${fmt(t.gm[0])} before, ${fmt(t.gm[1])} peak, ${fmt(t.gm[2])} after`);
  if (t.r) lines.push(t.r.length > 200 ? t.r.slice(0, 200) + "…" : t.r);
  return lines.join("\n");
}

function hover(node, text) {
  node.addEventListener("mousemove", (e) => {
    tooltip.textContent = typeof text === "function" ? text() : text;
    tooltip.style.display = "block";
    const x = Math.min(e.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8);
    tooltip.style.left = x + "px";
    tooltip.style.top = (e.clientY + 14) + "px";
  });
  node.addEventListener("mouseleave", () => { tooltip.style.display = "none"; });
}

// A scale from a domain onto [r0, r1]: linear, logarithmic or by category.
function scale(kind, domain, r0, r1) {
  if (kind === "category") {
    const step = (r1 - r0) / Math.max(domain.length, 1);
    const f = (v) => r0 + step * (domain.findIndex((d) => String(d) === String(v)) + 0.5);
    f.ticks = () => domain;
    return f;
  }
  let [d0, d1] = domain;
  if (!(d1 > d0)) { d0 -= 0.5; d1 += 0.5; }
  const tf = kind === "log" ? Math.log10 : (v) => v;
  const t0 = tf(d0), t1 = tf(d1);
  const f = (v) => r0 + (tf(v) - t0) / (t1 - t0) * (r1 - r0);
  f.ticks = () => {
    if (kind === "log") {
      const out = [];
      for (let e = Math.ceil(t0); e <= Math.floor(t1); e++) out.push(Math.pow(10, e));
      return out.length >= 2 ? out : [d0, d1];
    }
    const span = d1 - d0, raw = span / 5, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= 6);
    const out = [];
    for (let v = Math.ceil(d0 / step) * step; v <= d1 + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  };
  return f;
}

// The least and the greatest of many numbers. Math.min(...values) passes each as an argument,
// and past about 100,000 (a trial that reports every batch) that overflows the call stack.
function minOf(values) {
  let m = Infinity;
  for (const v of values) if (v < m) m = v;
  return m;
}
function maxOf(values) {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return m;
}

function extent(values) {
  const finite = values.filter((v) => typeof v === "number" && isFinite(v));
  return finite.length ? [minOf(finite), maxOf(finite)] : [0, 1];
}

// An extent with 5% room on both sides, so no mark sits on the frame.
function padded(values) {
  const [lo, hi] = extent(values);
  const room = hi > lo ? 0.05 * (hi - lo) : 0.5;
  return [lo - room, hi + room];
}

// Frame with axes; returns the plotting area.
function frame(svg, width, height, x, y, xLabel, yLabel) {
  const m = { l: 62, r: 16, t: 10, b: 38 };
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const area = { x0: m.l, x1: width - m.r, y0: height - m.b, y1: m.t };
  const g = svgEl("g", { class: "axis" }, svg);
  for (const t of y.ticks()) {
    const py = y(t);
    svgEl("line", { x1: area.x0, x2: area.x1, y1: py, y2: py, class: "gridline" }, g);
    svgEl("text", { x: area.x0 - 6, y: py + 4, "text-anchor": "end" }, g).textContent = fmt(t);
  }
  for (const t of x.ticks()) {
    const px = x(t);
    svgEl("line", { x1: px, x2: px, y1: area.y0, y2: area.y0 + 4 }, g);
    svgEl("text", { x: px, y: area.y0 + 16, "text-anchor": "middle" }, g).textContent = fmt(t);
  }
  svgEl("line", { x1: area.x0, x2: area.x1, y1: area.y0, y2: area.y0 }, g);
  svgEl("text", { x: (area.x0 + area.x1) / 2, y: height - 4, "text-anchor": "middle", class: "title" }, g).textContent = xLabel;
  svgEl("text", { x: 12, y: (area.y0 + area.y1) / 2, transform: `rotate(-90 12 ${(area.y0 + area.y1) / 2})`,
    "text-anchor": "middle", class: "title" }, g).textContent = yLabel;
  return area;
}

function paramScale(p, values, r0, r1) {
  if (p.kind === "categorical" || p.kind === "fixed") {
    const domain = p.kind === "categorical" ? p.choices : [p.value];
    return scale("category", domain, r0, r1);
  }
  const [lo, hi] = p.low !== undefined ? [p.low, p.high] : extent(values);
  return scale(p.log ? "log" : "linear", [lo, hi], r0, r1);
}

const trials = data.trials;
// A COMPLETE trial outside study.constraints: shown, marked, never the best nor on the front.
function infeasible(t) { return t.vi > 0; }
// Trial t's value of metric i (null where it has none: a pruned trial has only the first).
function metricValue(t, i) {
  const v = multi && t.vs ? t.vs[i] : (i === 0 ? t.v : null);
  return typeof v === "number" && isFinite(v) ? v : null;
}
const scored = trials.filter((t) => t.v !== null && (t.s === "COMPLETE" || t.s === "PRUNED"));
const completed = trials.filter((t) => t.s === "COMPLETE" && t.v !== null);
const feasible = completed.filter((t) => !infeasible(t));
const betterIn = (i) => (metrics[i].direction === "maximize" ? (a, b) => a > b : (a, b) => a < b);
const better = betterIn(0);
const nothingBest = () => (completed.length ? "No COMPLETE trial meets the constraints yet." : "No trial has completed yet.");
const INFEASIBLE_COLOR = "#f04438";
const FRONT_COLOR = "#1849a9";
const width = Math.min(1220, Math.max(640, document.querySelector("main").clientWidth || 1000));

function drawHeader() {
  document.getElementById("title").textContent = `Study ${study.name}`;
  const running = study.refresh > 0 ? ` · refreshed every ${study.refresh} s while the sweep runs` : "";
  document.getElementById("meta").textContent =
    `${study.path} · ${metrics.map((m) => `${m.direction} ${m.name}`).join(", ")}` +
    (constraints.length ? ` subject to ${constraints.join(", ")}` : "") + ` · ${study.sampler} sampler (seed ${study.seed}) · ` +
    `pruner ${study.pruner} · created ${study.created} · report ${study.generated}${running}` +
    (study.warm_start ? ` · warm start: ${study.warm_start.trim().split("\n").join("; ")}` : "");
}

function drawSummary() {
  const section = document.getElementById("summary");
  const counts = {};
  for (const t of trials) counts[t.s] = (counts[t.s] || 0) + 1;
  const cards = htmlEl("div", null, section, "cards");
  const card = (value, label, color) => {
    const c = htmlEl("div", null, cards, "card");
    const b = htmlEl("b", value, c);
    if (color) b.style.color = color;
    htmlEl("span", label, c);
  };
  card(`${trials.filter((t) => !["RUNNING", "INTERRUPTED", "PAUSED"].includes(t.s)).length} / ${study.n_trials}`, "trials finished");
  for (const s of Object.keys(STATE_COLORS)) if (counts[s]) card(counts[s], s, STATE_COLORS[s]);
  const starts = trials.map((t) => t.t0).filter((v) => v > 0);
  const ends = trials.map((t) => (t.t1 > 0 ? t.t1 : t.t0)).filter((v) => v > 0);
  if (starts.length) card(fmtDuration(maxOf(ends) - minOf(starts)), "wall time");
  card(new Set(trials.map((t) => t.w)).size, "workers used");
  const outside = completed.length - feasible.length;
  if (constraints.length) card(outside, "COMPLETE, infeasible", outside ? INFEASIBLE_COLOR : null);
  const box = htmlEl("div", null, section, "best");
  if (multi) {
    drawFrontTable(box);
    return;
  }
  let best = null;
  for (const t of feasible) if (!best || better(t.v, best.v)) best = t;
  if (best) {
    htmlEl("b", `Best: trial ${best.n}, ${study.metric} = ${fmt(best.v)}`, box);
    const params = data.params.filter((p) => p.name in best.p).map((p) => `${p.name}=${fmt(best.p[p.name])}`);
    htmlEl("div", null, box).appendChild(htmlEl("code", params.join("  ")));
  } else {
    htmlEl("b", nothingBest(), box);
  }
}

// The summary of a multi-metric study: its Pareto front, best first by the first metric.
function drawFrontTable(box) {
  const front = completed.filter((t) => t.pf).sort((a, b) => (betterIn(0)(a.vs[0], b.vs[0]) ? -1 : 1));
  if (!front.length) {
    htmlEl("b", nothingBest(), box);
    return;
  }
  htmlEl("b", `Pareto front: ${front.length} trial${front.length === 1 ? "" : "s"}` +
    (front.length > 20 ? " (the first 20 by " + metrics[0].name + ")" : ""), box);
  const table = htmlEl("table", null, box, "front");
  const head = htmlEl("tr", null, htmlEl("thead", null, table));
  for (const h of ["trial", ...metrics.map((m) => m.name), "parameters"]) htmlEl("th", h, head);
  const body = htmlEl("tbody", null, table);
  for (const t of front.slice(0, 20)) {
    const row = htmlEl("tr", null, body);
    htmlEl("td", t.n, row);
    metrics.forEach((m, i) => htmlEl("td", fmt(t.vs[i]), row));
    const params = data.params.filter((p) => p.name in t.p).map((p) => `${p.name}=${fmt(t.p[p.name])}`);
    htmlEl("td", null, row).appendChild(htmlEl("code", params.join("  ")));
  }
  table.dataset.drawn = Math.min(front.length, 20);
}

// Pixel-space corner between two neighbours of a 2-D front: the worse of each coordinate, so the
// staircase bounds what the front dominates.
function worse(direction, a, b) { return direction === "maximize" ? Math.min(a, b) : Math.max(a, b); }

function drawPareto() {
  const section = document.getElementById("pareto-section");
  if (!multi) return;
  section.hidden = false;
  const svg = document.getElementById("pareto");
  const [mx, my] = metrics;
  const points = completed.filter((t) => metricValue(t, 0) !== null && metricValue(t, 1) !== null);
  document.getElementById("pareto-note").textContent =
    `Every COMPLETE trial by ${mx.name} (${mx.direction}) and ${my.name} (${my.direction}). Filled dark: ` +
    `the Pareto front, the feasible trials no other feasible trial beats in every metric` +
    (metrics.length > 2 ? ` (over all ${metrics.length} metrics: this is its projection onto the first two)` : "") +
    `; light: dominated` + (constraints.length ? `; ✕: infeasible, outside ${constraints.join(", ")}` : "") + ".";
  const height = 380;
  const x = scale("linear", padded(points.map((t) => metricValue(t, 0))), 62, width - 16);
  const y = scale("linear", padded(points.map((t) => metricValue(t, 1))), height - 38, 10);
  frame(svg, width, height, x, y, `${mx.name} (${mx.direction})`, `${my.name} (${my.direction})`);
  const front = points.filter((t) => t.pf).sort((a, b) => metricValue(a, 0) - metricValue(b, 0));
  if (metrics.length === 2 && front.length > 1) {
    let d = `M${x(metricValue(front[0], 0))},${y(metricValue(front[0], 1))}`;
    for (let i = 1; i < front.length; i++) {
      const [x0, y0, x1, y1] = [metricValue(front[i - 1], 0), metricValue(front[i - 1], 1), metricValue(front[i], 0), metricValue(front[i], 1)];
      d += `L${x(worse(mx.direction, x0, x1))},${y(worse(my.direction, y0, y1))}L${x(x1)},${y(y1)}`;
    }
    svgEl("path", { d, fill: "none", stroke: FRONT_COLOR, "stroke-width": 1.2, "stroke-opacity": 0.7, class: "front-line" }, svg);
  }
  const counts = { front: 0, dominated: 0, infeasible: 0 };
  const mark = (t) => {
    const [px, py] = [x(metricValue(t, 0)), y(metricValue(t, 1))];
    let node;
    if (infeasible(t)) {
      node = svgEl("path", { d: `M${px - 4},${py - 4}L${px + 4},${py + 4}M${px - 4},${py + 4}L${px + 4},${py - 4}`,
        stroke: INFEASIBLE_COLOR, "stroke-width": 2, class: "pt infeasible" }, svg);
      counts.infeasible++;
    } else if (t.pf) {
      node = svgEl("circle", { cx: px, cy: py, r: 5, fill: FRONT_COLOR, class: "pt front" }, svg);
      counts.front++;
    } else {
      node = svgEl("circle", { cx: px, cy: py, r: 4, fill: "#84adff", "fill-opacity": 0.6, class: "pt dominated" }, svg);
      counts.dominated++;
    }
    node.dataset.n = t.n;
    node.dataset.px = px;
    node.dataset.py = py;
    hover(node, trialText(t));
  };
  // Drawn last is on top: the front over the dominated and the infeasible.
  for (const t of points.filter(infeasible)) mark(t);
  for (const t of points.filter((u) => !infeasible(u) && !u.pf)) mark(t);
  for (const t of front) mark(t);
  Object.assign(svg.dataset, counts, { drawn: points.length });
}

// One history per metric: its value by trial number, coloured by state (infeasible trials hollow,
// the Pareto front ringed), and the best value so far among the feasible COMPLETE trials.
function drawHistory() {
  if (multi) {
    document.getElementById("history-note").textContent = "Each metric by trial number, coloured by state; a ring " +
      "marks the Pareto front, a hollow red point an infeasible trial; the line is the metric's best value so far " +
      "among the feasible trials (a pruned trial has the first metric only).";
  }
  metrics.forEach((m, i) => {
    const svg = i === 0 ? document.getElementById("history")
      : svgEl("svg", { class: "history" }, document.getElementById("histories"));
    svg.dataset.metric = m.name;
    drawMetricHistory(svg, i);
  });
}

function drawMetricHistory(svg, i) {
  const m = metrics[i], height = multi ? 260 : 320, improves = betterIn(i);
  const shown = scored.filter((t) => metricValue(t, i) !== null);
  const x = scale("linear", extent(trials.map((t) => t.n)), 62, width - 16);
  const y = scale("linear", padded(shown.map((t) => metricValue(t, i))), height - 38, 10);
  frame(svg, width, height, x, y, "trial number", m.name);
  let drawn = 0;
  for (const t of shown) {
    const look = infeasible(t) ? { fill: "none", stroke: INFEASIBLE_COLOR, "stroke-width": 1.5, class: "pt infeasible" }
      : { fill: STATE_COLORS[t.s], "fill-opacity": 0.85, class: "pt", ...(t.pf ? { stroke: FRONT_COLOR, "stroke-width": 2 } : {}) };
    const c = svgEl("circle", { cx: x(t.n), cy: y(metricValue(t, i)), r: 4, ...look }, svg);
    hover(c, trialText(t));
    drawn++;
  }
  let best = null, d = "";
  for (const t of [...feasible].sort((a, b) => a.n - b.n)) {
    const v = metricValue(t, i);
    if (v !== null && (best === null || improves(v, best))) {
      d += (d ? `H${x(t.n)}V${y(v)}` : `M${x(t.n)},${y(v)}`);
      best = v;
    }
  }
  if (d) {
    d += `H${x(maxOf(trials.map((t) => t.n)))}`;
    svgEl("path", { d, fill: "none", stroke: "#101828", "stroke-width": 1.5, class: "best-line" }, svg);
  }
  svg.dataset.drawn = drawn;
}

function drawParallel() {
  const svg = document.getElementById("parallel");
  if (multi) {
    document.getElementById("parallel-note").textContent = "One line per completed trial across its parameters and " +
      "every metric; dark: the Pareto front" + (constraints.length ? "; red: infeasible." : ".");
  } else if (constraints.length) {
    document.getElementById("parallel-note").textContent += " Red: infeasible (outside the constraints).";
  }
  const height = 340;
  const axes = data.params.filter((p) => p.kind !== "fixed")
    .map((p) => ({ label: p.name, get: (t) => t.p[p.name], scale: paramScale(p, completed.map((t) => t.p[p.name]), height - 40, 24) }));
  metrics.forEach((m, i) => axes.push({ label: m.name, get: (t) => metricValue(t, i),
    scale: scale("linear", extent(completed.map((t) => metricValue(t, i))), height - 40, 24) }));
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const step = (width - 120) / Math.max(axes.length - 1, 1);
  const ax = (i) => 60 + i * step;
  const [lo, hi] = extent(completed.map((t) => t.v));
  // One metric: darker is better. Several: the Pareto front dark, the rest light. Infeasible: red.
  const shade = (t) => {
    if (infeasible(t)) return "#fda29b";
    if (multi) return t.pf ? FRONT_COLOR : "hsl(214, 85%, 82%)";
    const q = hi > lo ? (t.v - lo) / (hi - lo) : 1;
    const good = maximize ? q : 1 - q;
    return `hsl(214, 85%, ${82 - 50 * good}%)`;
  };
  const rank = (t) => (infeasible(t) ? 0 : multi ? (t.pf ? 2 : 1) : 1);  // drawn in this order: the best on top
  let drawn = 0;
  for (const t of [...completed].sort((a, b) => rank(a) - rank(b) || (multi ? 0 : (better(a.v, b.v) ? 1 : -1)))) {
    let d = "", pen = "M";
    axes.forEach((a, i) => {
      const v = a.get(t);
      if (v === undefined || v === null) { pen = "M"; return; }
      d += `${pen}${ax(i)},${a.scale(v)}`;
      pen = "L";
    });
    const line = svgEl("path", { d, fill: "none", stroke: shade(t), "stroke-width": 1.4, class: "line", "stroke-opacity": 0.9 }, svg);
    hover(line, trialText(t));
    drawn++;
  }
  axes.forEach((a, i) => {
    const g = svgEl("g", { class: "axis" }, svg);
    svgEl("line", { x1: ax(i), x2: ax(i), y1: 24, y2: height - 40 }, g);
    svgEl("text", { x: ax(i), y: height - 20, "text-anchor": "middle", class: "title" }, g).textContent = a.label;
    for (const t of a.scale.ticks()) {
      svgEl("text", { x: ax(i) + 5, y: a.scale(t) + 4 }, g).textContent = fmt(t);
    }
  });
  svg.dataset.drawn = drawn;
}

function drawImportance() {
  const svg = document.getElementById("importance");
  const imp = data.importance;
  const note = document.getElementById("importance-note");
  note.textContent = "fANOVA over a random forest fitted to the completed trials (64 trees), as Optuna does: " +
    `the share of ${multi ? `the first metric's (${metrics[0].name}) ` : "the objective's "}variance each parameter ` +
    "explains alone, normalised to sum to 1." +
    (imp.params.length ? ` Fitted to ${imp.trials_used} trials.` : ` Not available: ${imp.note}.`) +
    (imp.skipped.length ? ` Not evaluated: ${imp.skipped.join("; ")}.` : "");
  const bar = 22, height = imp.params.length * (bar + 6) + 20;
  svg.setAttribute("width", width);
  svg.setAttribute("height", Math.max(height, 10));
  const x = scale("linear", [0, 1], 160, width - 60);
  let drawn = 0;
  imp.params.forEach((p, i) => {
    const y = 4 + i * (bar + 6);
    svgEl("text", { x: 152, y: y + bar * 0.7, "text-anchor": "end", class: "title" }, svg).textContent = p.name;
    const r = svgEl("rect", { x: x(0), y, width: Math.max(x(p.importance) - x(0), 1), height: bar, fill: "#2e90fa", class: "bar" }, svg);
    hover(r, `${p.name}: ${(100 * p.importance).toFixed(1)} % of the variance`);
    svgEl("text", { x: x(p.importance) + 6, y: y + bar * 0.7 }, svg).textContent = (100 * p.importance).toFixed(1) + " %";
    drawn++;
  });
  svg.dataset.drawn = drawn;
}

function drawSlices() {
  const holder = document.getElementById("slices");
  if (multi || constraints.length) {
    document.getElementById("slices-note").textContent = `${multi ? `The first metric (${metrics[0].name})` : "The objective"} ` +
      "against each parameter (completed trials)" + (multi ? "; dark: the Pareto front" : "") +
      (constraints.length ? "; red: infeasible." : ".");
  }
  let drawn = 0;
  for (const p of data.params.filter((q) => q.kind !== "fixed")) {
    const svg = svgEl("svg", { class: "slice", "data-param": p.name }, holder);
    const w = 300, h = 220;
    const withParam = completed.filter((t) => p.name in t.p);
    const x = paramScale(p, withParam.map((t) => t.p[p.name]), 62, w - 16);
    const y = scale("linear", padded(completed.map((t) => t.v)), h - 38, 10);
    frame(svg, w, h, x, y, p.name + (p.log ? " (log)" : ""), study.metric);
    let marks = 0;
    for (const t of withParam) {
      const jitter = p.kind === "categorical" ? ((t.n * 7919) % 17 - 8) : 0;
      const c = svgEl("circle", { cx: x(t.p[p.name]) + jitter, cy: y(t.v), r: 3.2, class: "pt",
        fill: infeasible(t) ? INFEASIBLE_COLOR : t.pf ? FRONT_COLOR : STATE_COLORS.COMPLETE, "fill-opacity": 0.75 }, svg);
      hover(c, trialText(t));
      marks++;
    }
    svg.dataset.drawn = marks;
    drawn += marks;
  }
  holder.dataset.drawn = drawn;
}

function drawCurves() {
  const svg = document.getElementById("curves");
  const curves = Object.entries(data.steps).map(([n, points]) => ({ trial: trials.find((t) => t.n === +n), points }))
    .filter((c) => c.trial && c.points.length);
  const all = curves.flatMap((c) => c.points);
  const x = scale("linear", extent(all.map((p) => p[0])), 62, width - 16);
  const y = scale("linear", padded(all.map((p) => p[1])), 320 - 38, 10);
  frame(svg, width, 320, x, y, "step", `reported ${metrics[0].name}`);
  let drawn = 0;
  for (const c of curves) {
    const d = c.points.map((p, i) => `${i ? "L" : "M"}${x(p[0])},${y(p[1])}`).join("");
    const color = STATE_COLORS[c.trial.s] || "#667085";
    const path = svgEl("path", { d, fill: "none", stroke: color, "stroke-width": 1.3, "stroke-opacity": 0.8, class: "curve" }, svg);
    hover(path, trialText(c.trial));
    drawn++;
    if (c.trial.s === "PRUNED") {
      const [s, v] = c.points[c.points.length - 1];
      const mark = svgEl("text", { x: x(s), y: y(v) + 4, "text-anchor": "middle", class: "pruned-mark", fill: "#b42318" }, svg);
      mark.textContent = "✕";
      mark.style.fill = "#b42318";
      hover(mark, trialText(c.trial));
    }
  }
  svg.dataset.drawn = drawn;
}

// Population-based training: one figure per searched numeric parameter, its value over the steps
// each trial trained (a segment from the step it started at to its last), joined to the parent it
// started from; the best trial's ancestry is drawn dark, the others light.
function drawLineage() {
  const holder = document.getElementById("lineage");
  const children = trials.filter((t) => t.pa !== undefined);
  if (!children.length) {
    holder.dataset.drawn = 0;
    return;
  }
  document.getElementById("lineage-section").hidden = false;
  const byNumber = new Map(trials.map((t) => [t.n, t]));
  const done = trials.filter((t) => t.s === "COMPLETE" && t.v !== null);
  const best = done.length ? done.reduce((a, b) => ((maximize ? b.v > a.v : b.v < a.v) ? b : a)) : null;
  const ancestry = new Set();
  for (let t = best; t && !ancestry.has(t.n); t = t.pa !== undefined ? byNumber.get(t.pa) : null) ancestry.add(t.n);
  // Where a trial started: a child at the step after its parent's checkpoint, its first report.
  const start = (t) => (t.pa !== undefined && (data.steps[t.n] || []).length ? data.steps[t.n][0][0] - 1 : 0);
  const spans = trials.filter((t) => t.ls >= 0);
  document.getElementById("lineage-note").textContent = `${children.length} trials started from another's checkpoint, ` +
    `up to generation ${maxOf(trials.map((t) => t.ge || 0))}` +
    (best ? `; dark: the ancestry of the best trial, ${best.n} (${fmt(best.v)}).` : ".");
  let drawn = 0;
  for (const p of data.params.filter((q) => q.kind === "float" || q.kind === "int")) {
    const svg = svgEl("svg", { class: "slice lineage", "data-param": p.name }, holder);
    const w = 460, h = 240;
    const withParam = spans.filter((t) => p.name in t.p);
    const x = scale("linear", extent(withParam.flatMap((t) => [start(t), t.ls])), 62, w - 16);
    const y = paramScale(p, withParam.map((t) => t.p[p.name]), h - 38, 10);
    frame(svg, w, h, x, y, "step", p.name + (p.log ? " (log)" : ""));
    let marks = 0;
    for (const t of withParam.sort((a, b) => ancestry.has(a.n) - ancestry.has(b.n))) {
      const dark = ancestry.has(t.n);
      const style = { stroke: dark ? "#1849a9" : "#98a2b3", "stroke-width": dark ? 2.4 : 1.2, "stroke-opacity": dark ? 1 : 0.7 };
      const parent = t.pa !== undefined ? byNumber.get(t.pa) : null;
      if (parent && p.name in parent.p) {
        svgEl("line", { x1: x(start(t)), x2: x(start(t)), y1: y(parent.p[p.name]), y2: y(t.p[p.name]),
          "stroke-dasharray": "3 2", class: "lineage-link", ...style }, svg);
      }
      const seg = svgEl("line", { x1: x(start(t)), x2: x(Math.max(t.ls, start(t))), y1: y(t.p[p.name]), y2: y(t.p[p.name]),
        class: "lineage-span", ...style }, svg);
      hover(seg, trialText(t) + (parent ? ` — from trial ${parent.n}'s checkpoint at step ${start(t)}, generation ${t.ge}` : ""));
      marks++;
    }
    svg.dataset.drawn = marks;
    drawn += marks;
  }
  holder.dataset.drawn = drawn;
}

// The worker ranks a trial held: a gang's ("1-4,9" -> [1, 2, 3, 4, 9]), or its one worker.
function heldRanks(t) {
  if (!t.ws) return [t.w];
  const out = [];
  for (const part of t.ws.split(",")) {
    const [a, b] = part.split("-").map(Number);
    for (let r = a; r <= (b === undefined ? a : b); r++) out.push(r);
  }
  return out;
}

function drawTimeline() {
  const svg = document.getElementById("timeline");
  const spans = trials.filter((t) => t.t0 > 0);
  if (!spans.length) {
    svg.dataset.drawn = 0;
    return;
  }
  const ranks = [...new Set(spans.flatMap(heldRanks))].sort((a, b) => a - b);
  const now = study.generated_unix;
  const start = minOf(spans.map((t) => t.t0));
  const end = maxOf(spans.map((t) => (t.t1 > 0 ? t.t1 : now)));
  const rowH = 18, height = ranks.length * (rowH + 4) + 50;
  const x = scale("linear", [0, Math.max(end - start, 1e-3)], 62, width - 70);
  const y = (rank) => 10 + ranks.indexOf(rank) * (rowH + 4);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  const g = svgEl("g", { class: "axis" }, svg);
  for (const t of x.ticks()) {
    svgEl("line", { x1: x(t), x2: x(t), y1: 6, y2: height - 36, class: "gridline" }, g);
    svgEl("text", { x: x(t), y: height - 22, "text-anchor": "middle" }, g).textContent = fmtDuration(t);
  }
  svgEl("text", { x: (62 + width - 70) / 2, y: height - 4, "text-anchor": "middle", class: "title" }, g).textContent = "time since the first trial started";
  let drawn = 0;
  const busy = {};
  let gangs = 0;
  for (const t of spans) {
    const t1 = t.t1 > 0 ? t.t1 : now;
    const held = heldRanks(t);
    for (const w of held) {  // a gang: one bar on each of its workers' rows
      busy[w] = (busy[w] || 0) + (t1 - t.t0);
      const r = svgEl("rect", { x: x(t.t0 - start), y: y(w), width: Math.max(x(t1 - start) - x(t.t0 - start), 1.5),
        height: rowH, fill: STATE_COLORS[t.s] || "#667085", class: held.length > 1 ? "span gang" : "span",
        stroke: "#fff", "stroke-width": 0.5 }, svg);
      hover(r, trialText(t));
      drawn++;
    }
    if (held.length > 1) {  // ties the gang's bars together at its start
      const rows = held.map(y);
      svgEl("line", { x1: x(t.t0 - start) + 1, x2: x(t.t0 - start) + 1, y1: minOf(rows) + 2,
        y2: maxOf(rows) + rowH - 2, class: "gang-link", stroke: "#101828", "stroke-width": 2 }, svg);
      gangs++;
    }
  }
  svg.dataset.gangs = gangs;
  // The idle gap: from a worker's previous trial's end to this trial's start (ms, both its stamps).
  const gapText = (gaps) => {
    if (!gaps.length) return "";
    const sorted = [...gaps].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return `idle gap between trials: median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms (${gaps.length})`;
  };
  for (const rank of ranks) {
    const host = (spans.find((t) => t.w === rank) || {}).h || "";
    svgEl("text", { x: 56, y: y(rank) + rowH * 0.72, "text-anchor": "end" }, svg).textContent = `rank ${rank}`;
    const use = end > start ? busy[rank] / (end - start) : 0;
    const label = svgEl("text", { x: width - 64, y: y(rank) + rowH * 0.72, class: "utilisation" }, svg);
    label.textContent = `${(100 * use).toFixed(0)} %`;
    const gaps = gapText(spans.filter((t) => t.w === rank && t.ig !== undefined).map((t) => t.ig));
    hover(label, `rank ${rank} on ${host}: busy ${fmtDuration(busy[rank])} of ${fmtDuration(end - start)}` +
      (gaps ? `; ${gaps}` : ""));
  }
  const allGaps = gapText(spans.filter((t) => t.ig !== undefined).map((t) => t.ig));
  document.getElementById("idle-gap").textContent = allGaps ? `Every worker: ${allGaps}.` : "";
  svg.dataset.drawn = drawn;
  const legend = document.createElement("div");
  legend.className = "legend";
  for (const [s, c] of Object.entries(STATE_COLORS)) {
    if (!spans.some((t) => t.s === s)) continue;
    const item = htmlEl("span", null, legend);
    const swatch = htmlEl("i", null, item);
    swatch.style.background = c;
    item.appendChild(document.createTextNode(s));
  }
  svg.parentNode.insertBefore(legend, svg);
}

function drawFailures() {
  const table = document.getElementById("failures");
  const failed = trials.filter((t) => !["COMPLETE", "PRUNED", "RUNNING"].includes(t.s));
  document.getElementById("failures-note").textContent = failed.length
    ? `${failed.length} trials did not complete (pruned ones excluded); the reason is what the worker recorded.`
    : "No trial failed.";
  if (!failed.length) return;
  const head = htmlEl("tr", null, htmlEl("thead", null, table));
  for (const h of ["trial", "state", "rank / host / GPU", "attempt", "reason"]) htmlEl("th", h, head);
  const body = htmlEl("tbody", null, table);
  for (const t of failed) {
    const row = htmlEl("tr", null, body);
    htmlEl("td", t.n, row);
    const s = htmlEl("td", t.s, row, "state");
    s.style.color = STATE_COLORS[t.s];
    htmlEl("td", `${t.w} / ${t.h}` + (t.g ? ` / ${t.g}` : ""), row);
    htmlEl("td", t.a + (t.ro >= 0 ? ` (re-runs ${t.ro})` : ""), row);
    htmlEl("td", t.r, row, "reason");
  }
  table.dataset.drawn = failed.length;
}

for (const draw of [drawHeader, drawSummary, drawPareto, drawHistory, drawParallel, drawImportance, drawSlices, drawCurves,
  drawLineage, drawTimeline, drawFailures]) {
  draw();
}
document.body.dataset.rendered = "yes";
