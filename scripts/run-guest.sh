#!/bin/bash
# Boot the guest kernel in QEMU and run what the mode asks for.
# usage: run-guest.sh <check|demo|shell|bench> <bzImage> <initramfs> [console log]
#
# Environment: UINTR_TESTS (comma-separated test names), UINTR_TIMEOUT (hard
# limit of the whole boot, seconds), UINTR_ACCEL (tcg|kvm), UINTR_MEM,
# UINTR_SMP, UINTR_CMDLINE (extra kernel parameters).
# Exit status: QEMU's; 1 means the guest's /init reached its end and
# reported success, anything else is a failure (0: panic or reboot,
# 124: timeout).
set -uo pipefail

mode=$1
kernel=$2
initrd=$3
log=${4:-/dev/null}

accel=${UINTR_ACCEL:-tcg}
case "$accel" in
# la57=off: with 5-level paging, generic KASAN decides whether an address
# has shadow through cpu_feature_enabled(X86_FEATURE_LA57), and
# identify_cpu() clears boot_cpu_data's feature words with interrupts
# enabled; an interrupt in that window makes every direct-map access look
# wild ("BUG: KASAN: wild-memory-access in rcu_is_watching"; upstream,
# seen in a CI run).  4-level paging has no such window.
tcg) accel_args=(-accel tcg,thread=multi -cpu max,la57=off) ;;
kvm) accel_args=(-accel kvm -cpu host) ;;
# One instruction is one nanosecond of the guest's clock, idle time is
# skipped, and the vCPUs take turns on one host thread: a latency is the
# count of instructions on its path, free of the host's noise (make bench
# ICOUNT=1).
icount) accel_args=(-accel tcg -icount shift=0,sleep=off -cpu max,la57=off) ;;
*) echo "run-guest: UINTR_ACCEL must be tcg, kvm or icount" >&2; exit 2 ;;
esac

cmdline="console=ttyS0 panic=-1 uintr_run=$mode"
[ -n "${UINTR_TESTS:-}" ] && cmdline+=" uintr_tests=$UINTR_TESTS"
[ -n "${UINTR_CMDLINE:-}" ] && cmdline+=" $UINTR_CMDLINE"

# edu: QEMU's teaching PCI device, whose interrupt tests/device_irq.c
# turns into a user interrupt through uio_pci_generic.
qemu=(qemu-system-x86_64 "${accel_args[@]}"
	-smp "${UINTR_SMP:-2}" -m "${UINTR_MEM:-1G}"
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	-device edu
	-display none -no-reboot)

if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -serial mon:stdio
fi

run() {
	timeout --foreground -k 10 "${UINTR_TIMEOUT:-1800}" \
		"${qemu[@]}" -serial stdio -monitor none < /dev/null 2>&1
}

# UINTR_SHOW=1 shows the console while it runs (make demo, make V=1).
# stdbuf: the log and the screen follow the guest line by line.
if [ "${UINTR_SHOW:-0}" = 1 ]; then
	run | stdbuf -oL tr -d '\r' | tee "$log"
else
	run | stdbuf -oL tr -d '\r' > "$log"
fi
