#!/bin/bash
# The seed's problem on the host (bench/README.md, "The seed's problem on this machine"): the bundled
# trainer trains N configurations of the quickstart's search space one after another in ONE
# process (`--loop-params`, as a for-loop under Optuna would), then each of the same
# configurations in a FRESH process. After each configuration it prints the process's resident
# memory and what glibc's allocator holds freed but not returned. Prints both series side by side
# and, with a third argument, draws them as an SVG.
#   bench/run_seed_problem_bench.sh [BUILD_DIR] [N] [SVG_PATH]
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
n=${2:-16}
svg=${3:-}
trainer=$build/bin/cleansweep-train-fashion
[ -x "$trainer" ] || { echo "missing $trainer: build with the trainer (cmake --build $build)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export OMP_NUM_THREADS=1
flags=(--subset 3000 --val-size 2000 --device cpu)

# N configurations of configs/quickstart.yaml's space (blocks added, so model sizes differ more).
/usr/bin/python3 - "$n" > "$out/configs.jsonl" << 'PY'
import json, math, random, sys
rng = random.Random(7)
for _ in range(int(sys.argv[1])):
    c = {"lr": math.exp(rng.uniform(math.log(1e-4), math.log(0.1))),
         "batch_size": int(round(math.exp(rng.uniform(math.log(32), math.log(256))))),
         "channels": rng.choice([8, 16, 24, 32, 40, 48]), "blocks": rng.choice([1, 2, 3]),
         "optimizer": rng.choice(["sgd", "adam", "adamw"]), "dropout": rng.uniform(0, 0.5), "epochs": 1}
    if c["optimizer"] == "sgd":
        c["momentum"] = rng.uniform(0, 0.99)
    print(json.dumps(c))
PY

"$trainer" --loop-params "$out/configs.jsonl" "${flags[@]}" 2> /dev/null | grep '^loop model' > "$out/loop.txt"
i=0
while IFS= read -r config; do
  echo "$config" > "$out/one.jsonl"
  "$trainer" --loop-params "$out/one.jsonl" "${flags[@]}" 2> /dev/null | grep '^loop model' |
    sed "s/^loop model 0:/loop model $i:/" >> "$out/fresh.txt"
  i=$((i + 1))
done < "$out/configs.jsonl"

/usr/bin/python3 - "$out" "$svg" << 'PY'
import json, re, sys

out, svg = sys.argv[1], sys.argv[2]
line = re.compile(r"loop model (\d+): val_accuracy ([0-9.]+).*host RSS ([0-9.]+) MiB, "
                  r"malloc holds ([0-9.]+) MiB free of ([0-9.]+) MiB")
def series(name):
    rows = {}
    for text in open(f"{out}/{name}.txt"):
        m = line.search(text)
        if m:
            rows[int(m[1])] = tuple(float(x) for x in m.groups()[1:])
    return rows
loop, fresh = series("loop"), series("fresh")
configs = [json.loads(l) for l in open(f"{out}/configs.jsonl")]
print(f"{'model':>5} {'blocks':>6} {'ch':>3} {'batch':>5} {'opt':>5} | {'one process: RSS':>16} {'malloc free':>11} "
      f"{'acc':>6} | {'fresh process: RSS':>18} {'malloc free':>11} {'acc':>6}")
for i, c in enumerate(configs):
    l, f = loop.get(i), fresh.get(i)
    cell = lambda r: f"{r[1]:>16.1f} {r[2]:>11.1f} {r[0]:>6.3f}" if r else f"{'failed':>16} {'':>11} {'':>6}"
    cell2 = lambda r: f"{r[1]:>18.1f} {r[2]:>11.1f} {r[0]:>6.3f}" if r else f"{'failed':>18} {'':>11} {'':>6}"
    print(f"{i:>5} {c['blocks']:>6} {c['channels']:>3} {c['batch_size']:>5} {c['optimizer']:>5} | {cell(l)} | {cell2(f)}")
if loop and fresh:
    last = max(loop)
    print(f"one process after {last + 1} models: RSS {loop[last][1]:.1f} MiB ({loop[last][1] - loop[0][1]:+.1f} MiB since "
          f"the first), malloc holds {loop[last][2]:.1f} MiB free; fresh processes: RSS "
          f"{min(r[1] for r in fresh.values()):.1f}-{max(r[1] for r in fresh.values()):.1f} MiB")
if svg and loop and fresh:
    w, h, left, bottom, top, right = 800, 300, 60, 40, 20, 260
    xs = sorted(set(loop) | set(fresh))
    ymax = max(max(r[1] for r in loop.values()), max(r[1] for r in fresh.values())) * 1.1
    X = lambda i: left + (w - left - right) * (i / max(1, xs[-1]))
    Y = lambda v: h - bottom - (h - bottom - top) * v / ymax
    def path(rows, k):
        return " ".join(f"{'M' if j == 0 else 'L'}{X(i):.1f},{Y(rows[i][k]):.1f}" for j, i in enumerate(sorted(rows)))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
             f'<rect width="{w}" height="{h}" fill="white"/>',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>']
    for v in range(0, int(ymax) + 1, max(50, int(ymax / 5) // 50 * 50)):
        parts.append(f'<text x="{left - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{v}</text>')
        parts.append(f'<line x1="{left}" y1="{Y(v):.1f}" x2="{w - right}" y2="{Y(v):.1f}" stroke="#ddd"/>')
    for i in xs:
        parts.append(f'<text x="{X(i):.1f}" y="{h - bottom + 14}" text-anchor="middle">{i + 1}</text>')
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 6}" text-anchor="middle">configurations trained</text>')
    parts.append(f'<text x="14" y="{(top + h - bottom) / 2}" transform="rotate(-90 14 {(top + h - bottom) / 2})" '
                 f'text-anchor="middle">host memory, MiB</text>')
    lines = [(1, loop, "#c0392b", "", "one process: RSS"), (2, loop, "#c0392b", "4 3", "one process: malloc's free"),
             (1, fresh, "#2471a3", "", "a fresh process each: RSS"), (2, fresh, "#2471a3", "4 3", "a fresh process each: malloc's free")]
    for k, rows, colour, dash, label in lines:
        parts.append(f'<path d="{path(rows, k)}" fill="none" stroke="{colour}" stroke-width="2" stroke-dasharray="{dash}"/>')
    for j, (k, rows, colour, dash, label) in enumerate(lines):
        y = top + 14 + 18 * j
        parts.append(f'<line x1="{w - right + 10}" y1="{y}" x2="{w - right + 34}" y2="{y}" stroke="{colour}" '
                     f'stroke-width="2" stroke-dasharray="{dash}"/>')
        parts.append(f'<text x="{w - right + 40}" y="{y + 4}">{label}</text>')
    parts.append("</svg>")
    open(svg, "w").write("\n".join(parts) + "\n")
    print(f"plot: {svg}")
PY
