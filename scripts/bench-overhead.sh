#!/bin/bash
# make bench-overhead: what user interrupts cost the tasks that do not use
# them.  Boots of the same kernel, each running ipc_bench's rows
#   null-syscall    getppid(): kernel entry and exit
#   pipe-1cpu       a pipe ping-pong of two threads on one CPU: every
#   pipe-1cpu-proc  message is a context switch (and of two processes)
# in the modes
#   off       uintr=off: the feature refuses its calls
#   unused    the default mode, and no receiver on the system since boot
#   receiver  the default mode with a receiver asleep in another process
#             for the whole run (ipc_bench --receiver)
# (Only receivers and senders carry TIF_UINTR_SWITCH, so the other tasks'
# switches should run the same instructions in all three.)
# Boots of one mode differ by more than the effect looked for (TCG: the
# same row's median moves by 5-40 % from boot to boot), so the modes take
# turns, ROUNDS times (default 5), and the table gives per mode the median
# of the boots' medians and their range.  UINTR_ACCEL=icount (make
# bench-overhead ICOUNT=1): QEMU counts instructions, one per guest
# nanosecond, so the table's figures are instructions per iteration,
# without the host's noise.
# usage: bench-overhead.sh <bzImage> <initramfs> <outdir> <iterations per row>
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
kernel=$1
initrd=$2
out=$3
n=$4
rounds=${ROUNDS:-5}
rows=null-syscall,pipe-1cpu,pipe-1cpu-proc

declare -A extra=(
	[off]="uintr=off"
	[unused]=""
	[receiver]="uintr_bench_receiver=1"
)
rm -rf "$out"
for round in $(seq 1 "$rounds"); do
	for mode in off unused receiver; do
		dir=$out/$mode-$round
		mkdir -p "$dir"
		echo "bench-overhead: round $round/$rounds, $mode: $n iterations per row"
		st=0
		UINTR_TIMEOUT=3600 \
			UINTR_CMDLINE="uintr_bench_n=$n uintr_bench_rows=$rows kunit.enable=0 ${extra[$mode]}" \
			"$top/scripts/run-guest.sh" bench "$kernel" "$initrd" "$dir/console.log" || st=$?
		if [ "$st" != 1 ]; then
			echo "bench-overhead: $mode: guest failed (qemu status $st), see $dir/console.log" >&2
			exit 1
		fi
		"$top/scripts/bench-report.sh" "$dir/console.log" "$dir" > /dev/null
	done
done

python3 - "$out" "$rounds" "${UINTR_ACCEL:-tcg}" <<'PY'
import json, statistics, sys
out, rounds, accel = sys.argv[1], int(sys.argv[2]), sys.argv[3]
unit = "instructions" if accel == "icount" else "ns"
modes = ["off", "unused", "receiver"]
medians = {m: {} for m in modes}
order = []
for m in modes:
    for k in range(1, rounds + 1):
        data = json.load(open(f"{out}/{m}-{k}/ipc_bench.json"))
        got = data["environment"].get("uintr_mode") or "off"
        want = ["off"] if m == "off" else ["emulated", "hardware"]
        if got not in want:
            sys.exit(f"bench-overhead: the {m} boot {k} ran in uintr mode {got!r}")
        for r in data["rows"]:
            medians[m].setdefault(r["mechanism"], []).append(r["median_ns"])
            if r["mechanism"] not in order:
                order.append(r["mechanism"])

def cell(values):
    return "%.0f (%.0f-%.0f)" % (statistics.median(values), min(values), max(values))

lines = ["| row | off: %s (range) | unused: %s (range) | vs off | receiver elsewhere: %s (range) | vs off |" % (unit, unit, unit),
         "|---|---:|---:|---:|---:|---:|"]
for row in order:
    base = statistics.median(medians["off"][row])
    cells = [row, cell(medians["off"][row])]
    for m in modes[1:]:
        v = medians[m].get(row)
        if not v or len(v) != rounds:
            sys.exit(f"bench-overhead: {row} missing in a {m} boot")
        cells += [cell(v), "%+.1f %%" % (100.0 * (statistics.median(v) - base) / base)]
    lines.append("| " + " | ".join(cells) + " |")
table = "\n".join(lines) + "\n"
note = ("\nMedian over %d boots per mode of each boot's median (the range: the "
        "lowest and highest boot); QEMU %s.\n" % (rounds, "-icount: instructions per iteration" if accel == "icount" else "TCG: wall-clock ns"))
open(f"{out}/overhead.md", "w").write(table + note)
print(table + note, end="")
PY
echo "bench-overhead: table in $out/overhead.md"
