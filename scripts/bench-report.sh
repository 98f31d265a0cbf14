#!/bin/bash
# Extracts the benchmark's JSON and CSV from the guest console of
# `make bench` into <outdir>, with what was measured on: kernel, its
# extra arguments (KARGS) and whole command line, uintr mode,
# accelerator, guest and host CPU; plots each row's latency
# distribution (the percentiles in the JSON) as <outdir>/ipc_bench.png.
# usage: bench-report.sh <console.log> <outdir>
set -euo pipefail
log=$1
out=$2

section() {
	sed -n "/^### uintr-bench-$1-begin/,/^### uintr-bench-$1-end/p" "$log" | sed '1d;$d'
}

section json > "$out/ipc_bench.raw.json"
section csv > "$out/ipc_bench.csv"
[ -s "$out/ipc_bench.raw.json" ] || { echo "bench-report: no results in $log" >&2; exit 1; }

kernel=$(sed -n 's/^### uintr-bench-start \([^ ]*\).*/\1/p' "$log" | head -1)
mode=$(sed -n 's/.*uintr: Rust component initialized: mode \([a-z]*\).*/\1/p' "$log" | head -1)
guest_cpu=$(sed -n 's/^### uintr-bench-cpu model name[^:]*: //p' "$log" | head -1)
host_cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/^[^:]*: //')
cmdline=$(sed -n 's/^### uintr-bench-cmdline //p' "$log" | head -1)

python3 - "$out/ipc_bench.raw.json" "$out/ipc_bench.json" <<PY
import json, sys
data = json.load(open(sys.argv[1]))
data["environment"] = {
    "kernel": "$kernel",
    "kernel_args": "${KARGS:-}".strip(),
    "cmdline": "$cmdline",
    "uintr_mode": "$mode",
    "accelerator": "${UINTR_ACCEL:-tcg}",
    "guest_cpu": "$guest_cpu",
    "host_cpu": "$host_cpu",
}
json.dump(data, open(sys.argv[2], "w"), indent=2)
PY
rm -f "$out/ipc_bench.raw.json"

# The plot: one cumulative distribution per row, latency on a log axis.
python3 - "$out/ipc_bench.json" "$out/ipc_bench.cdf.dat" "$out/ipc_bench.gp" "$out/ipc_bench.png" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
rows = [r for r in data["rows"] if r.get("percentiles_ns")]
with open(sys.argv[2], "w") as f:
    for r in rows:
        f.write("# %s %s\n" % (r["mechanism"], r["parties"]))
        # Up to p99: the maximum (in the table) would stretch the axis.
        for k, ns in enumerate(r["percentiles_ns"][:100]):
            f.write("%g %d\n" % (max(ns, 1) / 1000.0, k))
        f.write("\n\n")
env = data.get("environment", {})
with open(sys.argv[3], "w") as g:
    g.write('set terminal pngcairo size 1200,750 noenhanced\n')
    g.write('set output "%s"\n' % sys.argv[4])
    g.write('set title "ipc_bench: latency distribution per mechanism (%s, uintr %s, %s)"\n'
            % (env.get("kernel", "?"), env.get("uintr_mode", "?"), env.get("accelerator", "?")))
    g.write('set logscale x\nset xlabel "latency (us, log scale; round trip, or one send)"\n')
    g.write('set ylabel "percentile"\nset yrange [0:99]\nset grid\n')
    g.write('set key outside right\n')
    # One colour per mechanism; threads solid, processes dashed.
    colours = ["#9400d3", "#009e73", "#56b4e9", "#e69f00", "#d55e00",
               "#0072b2", "#cc79a7", "#000000", "#808080", "#f0e442"]
    base = []
    for r in rows:
        name = r["mechanism"][:-5] if r["parties"] == "processes" else r["mechanism"]
        if name not in base:
            base.append(name)
    plots = []
    for i, r in enumerate(rows):
        name = r["mechanism"][:-5] if r["parties"] == "processes" else r["mechanism"]
        plots.append('"%s" index %d using 1:2 with lines lw 2 lc rgb "%s" dt %d title "%s"'
                     % (sys.argv[2], i, colours[base.index(name) % len(colours)],
                        2 if r["parties"] == "processes" else 1, r["mechanism"]))
    g.write("plot " + ", \\\n     ".join(plots) + "\n")
PY
if command -v gnuplot > /dev/null; then
	gnuplot "$out/ipc_bench.gp"
	echo "bench: latency plot in $out/ipc_bench.png"
else
	echo "bench: gnuplot missing (make deps installs it): no plot" >&2
fi
echo "bench: results in $out/ipc_bench.json and $out/ipc_bench.csv"
