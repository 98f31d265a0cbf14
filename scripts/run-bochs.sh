#!/bin/bash
# Boot the guest kernel in Bochs (Sapphire Rapids CPU model, User Interrupts
# in hardware, interpreted) and run what the mode asks for.
# usage: run-bochs.sh <check|demo|shell|bench> <bzImage> <initramfs> [console log]
#
# Same interface as run-guest.sh.  Environment: UINTR_TESTS (comma-separated
# test names), UINTR_TIMEOUT (hard limit of the whole run, wall-clock seconds,
# default 3600), UINTR_MEM (MiB, or QEMU style 1G/512M; default 1G),
# UINTR_SMP (default 2), UINTR_CMDLINE (extra kernel parameters; a uintr=
# there overrides the default uintr=hw), UINTR_SHOW=1 (show the console
# live).  Bochs-only: UINTR_BOCHS (the binary; default: scripts/bochs-build.sh
# builds or reuses it), UINTR_BOCHS_IPS (emulated instructions per emulated
# second, default 2200000000, the TSC frequency the model's CPUID declares).
# Mode shell connects the guest's serial port to the terminal (/dev/tty).
#
# Exit status as run-guest.sh's: 1 means the guest's /init reached its end
# and reported success ("### uintr-guest-exit 0" on the console), 124 a
# timeout, 3 anything else (/init reported a failure, or the guest died:
# panic, reboot, Bochs stopped), 2 a usage or setup error.
# Bochs's own log goes to <console log>.bochs (when a log is given).
set -uo pipefail

# run-bochs.sh deps: only install what a boot needs (make bochs does,
# before make check starts two models at once).
packages=(bochsbios vgabios isolinux syslinux-common xorriso)
if [ "${1:-}" = deps ]; then
	exec "$(dirname "$0")/apt-install.sh" run-bochs "${packages[@]}"
fi
if [ $# -lt 3 ]; then
	echo "usage: $0 <check|demo|shell|bench> <bzImage> <initramfs> [console log]" >&2
	echo "       $0 deps" >&2
	exit 2
fi
mode=$1
kernel=$2
initrd=$3
log=${4:-/dev/null}
top=$(cd "$(dirname "$0")/.." && pwd)

say() { echo "run-bochs: $*" >&2; }

for f in "$kernel" "$initrd"; do
	[ -r "$f" ] || { say "cannot read $f"; exit 2; }
done

# Runtime packages: the BIOS and VGA BIOS images, ISOLINUX and xorriso.
"$top/scripts/apt-install.sh" run-bochs "${packages[@]}" ||
	exit 2

bochs=${UINTR_BOCHS:-}
if [ -z "$bochs" ]; then
	bochs=$("$top/scripts/bochs-build.sh" | tail -n 1) || { say "bochs-build.sh failed"; exit 2; }
fi
[ -x "$bochs" ] || { say "no Bochs binary at '$bochs'"; exit 2; }

# Memory in MiB; accepts QEMU's suffixes as the Makefile passes them.
mem=${UINTR_MEM:-1G}
case "$mem" in
*[Gg]) mem=$(( ${mem%[Gg]} * 1024 )) ;;
*[Mm]) mem=${mem%[Mm]} ;;
esac
case "$mem" in ''|*[!0-9]*) say "UINTR_MEM must be MiB or nG/nM"; exit 2 ;; esac
smp=${UINTR_SMP:-2}
# Bochs advances the TSC by one per emulated instruction, and the model's
# CPUID leaf 15H says the TSC runs at 2.2 GHz (25 MHz crystal * 176 / 2):
# with that many instructions per emulated second, the TSC (and the local
# APIC timer, also counted in instructions), which the kernel keeps time
# with, agree with the devices Bochs paces in microseconds through ips
# (HPET, PIT, RTC, UART).
ips=${UINTR_BOCHS_IPS:-2200000000}
limit=${UINTR_TIMEOUT:-3600}

# ttyS0 at 115200 baud: Bochs paces its UART at the programmed baud rate in
# emulated time and the kernel's default is 9600 (QEMU does not pace).
# no5lvl: Bochs 3.0 rejects CR4 on the SMM restore path with 5-level paging
# (CR4.LA57), so the kernel must stay with 4-level paging.  uintr=hw: this
# model has the instructions, use them (a later uintr= in UINTR_CMDLINE wins).
cmdline="console=ttyS0,115200 panic=-1 uintr_run=$mode no5lvl uintr=hw"
[ -n "${UINTR_TESTS:-}" ] && cmdline+=" uintr_tests=$UINTR_TESTS"
[ -n "${UINTR_CMDLINE:-}" ] && cmdline+=" $UINTR_CMDLINE"

tmp=$(mktemp -d /tmp/run-bochs.XXXXXX)
bochs_pid=
cleanup() {
	if [ -n "$bochs_pid" ]; then
		kill -9 "$bochs_pid" 2>/dev/null
		wait "$bochs_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# An El Torito ISO that ISOLINUX boots: Bochs's BIOS has no -kernel.
mkdir -p "$tmp/iso/isolinux"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$tmp/iso/isolinux/"
cp "$kernel" "$tmp/iso/vmlinuz"
cp "$initrd" "$tmp/iso/initrd.gz"
cat > "$tmp/iso/isolinux/isolinux.cfg" <<EOF
DEFAULT linux
PROMPT 0
TIMEOUT 0
LABEL linux
  KERNEL /vmlinuz
  APPEND initrd=/initrd.gz $cmdline
EOF
if ! xorriso -as mkisofs -quiet -R -J -o "$tmp/boot.iso" \
	-b isolinux/isolinux.bin -c isolinux/boot.cat \
	-no-emul-boot -boot-load-size 4 -boot-info-table "$tmp/iso" 2> "$tmp/xorriso.err"; then
	cat "$tmp/xorriso.err" >&2
	say "xorriso failed"
	exit 2
fi
rm -rf "$tmp/iso"

console=$tmp/console.raw
bochs_log=$tmp/bochs.log
if [ "$mode" = shell ]; then
	# The guest's serial port on this terminal, raw (Bochs sets it up).
	if ! { : < /dev/tty; } 2>/dev/null; then
		say "shell mode needs a terminal"
		exit 2
	fi
	com1="com1: enabled=1, mode=term, dev=/dev/tty"
else
	com1="com1: enabled=1, mode=file, dev=\"$console\""
fi
# AMX is left out: Linux wants XFD with AMX, which the model lacks.
# reset_on_triple_fault=0: a triple fault stops Bochs instead of rebooting.
# fastboot: no 3 s wait for F12 (a boot menu) in the BIOS.
# clock sync=none: emulated time is the instruction count divided by ips,
# the same for every run whatever the host's load.
cat > "$tmp/bochsrc" <<EOF
display_library: nogui
memory: guest=$mem, host=$mem
romimage: file=/usr/share/bochs/BIOS-bochs-latest, options=fastboot
vgaromimage: file=/usr/share/vgabios/vgabios.bin
cpu: model=sapphire_rapids, count=$smp, ips=$ips, reset_on_triple_fault=0, exclude_features="amx amx_int8 amx_bf16"
clock: sync=none, time0=local
ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14
ata0-master: type=cdrom, path="$tmp/boot.iso", status=inserted
boot: cdrom
$com1
pci: enabled=1, chipset=i440fx
log: $bochs_log
panic: action=fatal
error: action=report
info: action=report
debug: action=ignore
EOF

if [ "$mode" = shell ]; then
	timeout --foreground -k 10 "$limit" "$bochs" -q -f "$tmp/bochsrc" < /dev/null > "$tmp/bochs.out" 2>&1
	st=$?
	stty sane < /dev/tty 2>/dev/null
	[ "$log" != /dev/null ] && cp "$bochs_log" "$log.bochs" 2>/dev/null
	exit $st
fi

: > "$console"
start=$(date +%s)
"$bochs" -q -f "$tmp/bochsrc" < /dev/null > "$tmp/bochs.out" 2>&1 &
bochs_pid=$!

# The console file grows as the guest writes; follow it into the log.
if [ "${UINTR_SHOW:-0}" = 1 ]; then
	tail -n +1 -f --pid="$bochs_pid" "$console" | stdbuf -oL tr -d '\r' | tee "$log" &
else
	tail -n +1 -f --pid="$bochs_pid" "$console" | stdbuf -oL tr -d '\r' > "$log" &
fi
follower=$!

# Watch for the end: the exit line (the last thing /init prints: no need to
# wait for the guest to power off), a panic or a reboot (Bochs would boot the
# ISO again), Bochs stopping, or the time limit.
status=
result=3
while kill -0 "$bochs_pid" 2>/dev/null; do
	now=$(date +%s)
	status=$(sed -n 's/^### uintr-guest-exit \([0-9]*\).*/\1/p' "$console" | tail -n 1)
	[ -n "$status" ] && break
	if grep -q -e 'Kernel panic - not syncing' -e 'reboot: Restarting system' "$console"; then
		sleep 2 # let the panic message reach the log
		say "guest kernel panicked or rebooted"
		break
	fi
	resets=$(grep -c -e 'Reset(HARDWARE) called' -e 'Reset(SOFTWARE) called' "$bochs_log" 2>/dev/null)
	if [ "${resets:-0}" -gt 1 ]; then
		say "guest machine was reset"
		break
	fi
	if [ $((now - start)) -ge "$limit" ]; then
		say "timeout after $limit s"
		result=124
		break
	fi
	sleep 1
done
kill -9 "$bochs_pid" 2>/dev/null
wait "$bochs_pid" 2>/dev/null
bochs_pid=
wait "$follower" 2>/dev/null

if [ -z "$status" ]; then
	status=$(sed -n 's/^### uintr-guest-exit \([0-9]*\).*/\1/p' "$console" | tail -n 1)
fi
if [ "$result" != 124 ] && [ -n "$status" ]; then
	if [ "$status" = 0 ]; then result=1; else result=3; fi
fi
if [ "$log" != /dev/null ]; then
	cp "$bochs_log" "$log.bochs" 2>/dev/null
fi
if [ "$result" = 3 ] && [ -z "$status" ]; then
	grep -h -e PANIC -e FATAL "$bochs_log" "$tmp/bochs.out" 2>/dev/null | tail -n 5 >&2
fi
say "exit $result after $(($(date +%s) - start)) s"
exit "$result"
