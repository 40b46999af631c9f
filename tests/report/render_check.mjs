// Renders an HTML report in headless Chromium through the DevTools protocol (Node's WebSocket,
// no npm packages) and prints what it drew, read back from the DOM, as JSON. Fails (exit 1) on
// any console error, uncaught exception or network request other than the file itself.
//   node --experimental-websocket render_check.mjs CHROMIUM REPORT.html PROFILE_DIR
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const [chromium, report, profile] = process.argv.slice(2);
const fail = (why) => {
  console.error(`render_check: ${why}`);
  process.exitCode = 1;
};

const browser = spawn(chromium, [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-extensions", `--user-data-dir=${profile}`,
  "--remote-debugging-port=0", "--window-size=1280,2000", "about:blank",
], { stdio: ["ignore", "ignore", "pipe"] });
let browserLog = "";
browser.stderr.on("data", (d) => { browserLog += d; });

try {
  let port = null;
  for (let i = 0; i < 200 && !port; i++) {  // Chromium writes its port here once it listens
    const file = `${profile}/DevToolsActivePort`;
    if (existsSync(file)) port = readFileSync(file, "utf8").split("\n")[0].trim() || null;
    if (!port) await sleep(100);
  }
  if (!port) throw new Error(`Chromium did not start:\n${browserLog.slice(-2000)}`);
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === "page");
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  let nextId = 1;
  const pending = new Map();
  const events = [];
  const problems = [];
  ws.onmessage = (message) => {
    const m = JSON.parse(message.data);
    if (m.id && pending.has(m.id)) {
      pending.get(m.id)(m);
      pending.delete(m.id);
    } else if (m.method) {
      events.push(m);
      const p = m.params;
      if (m.method === "Runtime.exceptionThrown") problems.push(`exception: ${p.exceptionDetails.exception?.description || p.exceptionDetails.text}`);
      if (m.method === "Runtime.consoleAPICalled" && (p.type === "error" || p.type === "assert")) {
        problems.push(`console.${p.type}: ${p.args.map((a) => a.value ?? a.description).join(" ")}`);
      }
      if (m.method === "Log.entryAdded" && p.entry.level === "error") problems.push(`log: ${p.entry.text} (${p.entry.url || ""})`);
      if (m.method === "Network.requestWillBeSent" && !p.request.url.startsWith("file://") && !p.request.url.startsWith("data:")) {
        problems.push(`network request: ${p.request.url}`);
      }
    }
  };
  const send = (method, params = {}) => new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
  for (const domain of ["Runtime", "Log", "Network", "Page"]) await send(`${domain}.enable`);
  await send("Page.navigate", { url: `file://${report}` });
  for (let i = 0; i < 200 && !events.some((e) => e.method === "Page.loadEventFired"); i++) await sleep(50);
  if (!events.some((e) => e.method === "Page.loadEventFired")) throw new Error("the page did not load");
  await sleep(200);
  const probe = `(() => {
    const drawn = (sel) => { const n = document.querySelector(sel); return n && n.dataset.drawn !== undefined ? +n.dataset.drawn : null; };
    const count = (sel) => document.querySelectorAll(sel).length;
    const hoverText = (sel) => {  // what the tooltip says while the mouse is over the first match
      const mark = document.querySelector(sel);
      if (!mark) return "";
      const box = mark.getBoundingClientRect();
      mark.dispatchEvent(new MouseEvent("mousemove", { clientX: box.x + 2, clientY: box.y + 2, bubbles: true }));
      const tip = document.getElementById("tooltip");
      const text = tip.style.display === "block" ? tip.textContent : "";
      mark.dispatchEvent(new MouseEvent("mouseleave", { bubbles: false }));
      return text;
    };
    const tooltip = hoverText("#history circle.pt");
    const pareto = document.getElementById("pareto");
    const paretoShown = !document.getElementById("pareto-section").hidden;
    return JSON.stringify({
      rendered: document.body.dataset.rendered || "no",
      title: document.getElementById("title").textContent,
      history: drawn("#history"), history_circles: count("#history circle.pt"), best_line: count("#history path.best-line"),
      parallel: drawn("#parallel"), parallel_lines: count("#parallel path.line"),
      importance: drawn("#importance"), importance_bars: count("#importance rect.bar"),
      slices: drawn("#slices"), slice_plots: count("#slices svg.slice"), slice_points: count("#slices circle.pt"),
      curves: drawn("#curves"), curve_paths: count("#curves path.curve"), pruned_marks: count("#curves .pruned-mark"),
      timeline: drawn("#timeline"), timeline_spans: count("#timeline rect.span"), utilisation: count("#timeline text.utilisation"),
      gang_links: count("#timeline line.gang-link"), timeline_rows: count("#timeline text.utilisation"),
      failures: count("#failures tbody tr"), tooltip,
      histories: [...document.querySelectorAll("#histories svg.history")].map((h) =>
        ({ metric: h.dataset.metric, drawn: +h.dataset.drawn, points: h.querySelectorAll("circle.pt").length,
           infeasible: h.querySelectorAll("circle.infeasible").length, best_line: h.querySelectorAll("path.best-line").length })),
      pareto_shown: paretoShown,
      pareto: paretoShown ? { drawn: +pareto.dataset.drawn, front: +pareto.dataset.front, dominated: +pareto.dataset.dominated,
        infeasible: +pareto.dataset.infeasible, front_line: count("#pareto path.front-line"),
        points: [...pareto.querySelectorAll(".pt")].map((p) => ({ n: +p.dataset.n, kind: p.classList[1], px: +p.dataset.px, py: +p.dataset.py })),
        front_tooltip: hoverText("#pareto circle.front"), infeasible_tooltip: hoverText("#pareto .pt.infeasible"),
        front_table: count("#summary table.front tbody tr") } : null,
      refresh: !!document.querySelector('meta[http-equiv="refresh"]'),
      lineage_shown: !document.getElementById("lineage-section").hidden, lineage: drawn("#lineage"),
      lineage_spans: count("#lineage line.lineage-span"), lineage_links: count("#lineage line.lineage-link"),
      lineage_ancestry: [...document.querySelectorAll("#lineage line.lineage-span")].filter((l) => l.getAttribute("stroke") === "#1849a9").length,
    });
  })()`;
  const result = await send("Runtime.evaluate", { expression: probe, returnByValue: true });
  if (result.result.exceptionDetails) throw new Error(`probe failed: ${JSON.stringify(result.result.exceptionDetails)}`);
  console.log(result.result.result.value);
  for (const p of problems) fail(p);
  ws.close();
} catch (e) {
  fail(e.message || String(e));
} finally {
  browser.kill("SIGKILL");
}
