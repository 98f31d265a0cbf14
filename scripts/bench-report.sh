#!/bin/bash
# Extracts the benchmark's JSON and CSV from the guest console of
# `make bench` into <outdir>, with what was measured on: kernel, uintr
# mode, accelerator, guest and host CPU.
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

python3 - "$out/ipc_bench.raw.json" "$out/ipc_bench.json" <<PY
import json, sys
data = json.load(open(sys.argv[1]))
data["environment"] = {
    "kernel": "$kernel",
    "uintr_mode": "$mode",
    "accelerator": "${UINTR_ACCEL:-tcg}",
    "guest_cpu": "$guest_cpu",
    "host_cpu": "$host_cpu",
}
json.dump(data, open(sys.argv[2], "w"), indent=2)
PY
rm -f "$out/ipc_bench.raw.json"
echo "bench: results in $out/ipc_bench.json and $out/ipc_bench.csv"
