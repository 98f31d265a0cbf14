# SPDX-License-Identifier: GPL-2.0
#
# uintr: x86 User Interrupts for Linux 6.12, Rust core + C glue.
#
#   make check [DEBUG=1] [T=test1,test2] [V=1]   host tests + kernel + guest tests
#   make check CPU=sapphire-rapids               ... on a UINTR CPU model (Bochs)
#   make demo                                    boot and run samples/
#   make bench [QUICK=1] [N=n] [ROWS=a,b] [ICOUNT=1] [KARGS=...] IPC latency table (build/bench/)
#   make bench-overhead [N=n] [ROUNDS=r]         cost to tasks not using it
#   make bench-breakdown [N=n] [ROWS=a,b]        where a blocked wakeup spends its time
#   make shell                                   boot to a guest shell
#   make lib                                     libuintr (build/libuintr/)
#   make kernel | initramfs | host-test | tree | deps | clean
#
# The kernel tree and every output live in UINTR_BUILD_DIR (default build/).

TOP := $(CURDIR)
UINTR_BUILD_DIR ?= $(TOP)/build
export UINTR_BUILD_DIR
B := $(UINTR_BUILD_DIR)

# Kernel flavors: normal; debug (DEBUG=1: KASAN, lockdep, kmemleak, ...);
# disabled (FLAVOR=disabled: CONFIG_X86_USER_INTERRUPTS=n, the ENOSYS path);
# rt (FLAVOR=rt: PREEMPT_RT with lockdep and the sleep-in-atomic check;
# not in CI, run by hand: make check FLAVOR=rt).
DEBUG ?= 0
ifeq ($(DEBUG),1)
FLAVOR := debug
endif
FLAVOR ?= normal
ifeq ($(filter normal debug disabled rt,$(FLAVOR)),)
$(error FLAVOR must be normal, debug, disabled or rt)
endif
ifeq ($(FLAVOR),debug)
GUEST_MEM ?= 2G
else
GUEST_MEM ?= 1G
endif

# The CPU the guest runs on: qemu (QEMU TCG, no UINTR: the emulation runs)
# or sapphire-rapids (Bochs 3.0's model of a CPU with UINTR, built by
# scripts/bochs-build.sh: the hardware backend runs; see bochs/README.md).
CPU ?= qemu
ifeq ($(filter qemu sapphire-rapids,$(CPU)),)
$(error CPU must be qemu or sapphire-rapids)
endif

KSRC := $(B)/linux
KOBJ := $(B)/obj-$(FLAVOR)
BZIMAGE := $(KOBJ)/arch/x86/boot/bzImage
RESULTS := $(B)/results/$(FLAVOR)$(if $(filter sapphire-rapids,$(CPU)),-$(CPU))
GUEST_BIN := $(B)/guest
INITRAMFS := $(B)/initramfs.cpio.gz
JOBS ?= $(shell nproc)
# The kernel build's -j; empty: take job slots from the calling make.
KJOBS ?= -j$(JOBS)

# Debian's toolchain, never the rustup one in ~/.cargo (see README).
KBUILD_VARS = $(shell $(TOP)/scripts/kbuild-vars.sh)
KMAKE = $(MAKE) -C $(KSRC) O=$(KOBJ) $(KBUILD_VARS)

# libuintr (libuintr/): built into $(B)/libuintr as libuintr.a, the shared
# libuintr.so.0 and libuintr.pc; `make install-lib [PREFIX=] [DESTDIR=]`.
# libuintr-uninstalled.pc and include/ there serve pkg-config from the build
# directory.  The library itself needs no -muintr.
LIB_B := $(B)/libuintr
LIBUINTR_VERSION := 0.3.0
LIBUINTR_SONAME := libuintr.so.0
LIBUINTR_A := $(LIB_B)/libuintr.a
LIBUINTR_SO := $(LIB_B)/libuintr.so
LIB_HEADERS := libuintr/libuintr.h uapi/linux/uintr.h
LIB_CFLAGS := -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -Werror \
	-I$(TOP)/libuintr -I$(TOP)/uapi
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include

# The patched kernel's user-space headers (make headers, in their own
# object directory): guest programs take <linux/uintr.h> and the
# __NR_uintr_* numbers of <asm/unistd_64.h> from the series, as the users
# of a kernel do.
KHDR_OBJ := $(B)/obj-headers
KHDR := $(KHDR_OBJ)/usr/include

# Guest programs: tests/*.c and samples/*.c, static, built with -muintr;
# both link libuintr.a.
GUEST_CFLAGS := -O2 -g -static -pthread -Wall -Wextra -Wno-unused-parameter -Werror -muintr \
	-I$(KHDR) -I$(TOP)/libuintr -I$(TOP)/tests -I$(KSRC)/tools/testing/selftests
SAMPLE_CFLAGS := -O2 -static -pthread -Wall -muintr -mgeneral-regs-only \
	-minline-all-stringops -I$(KHDR) -I$(TOP)/libuintr
BENCH_CFLAGS := -O2 -static -pthread -Wall -Wextra -Wno-unused-parameter -Werror \
	-muintr -I$(KHDR)
TESTS := $(patsubst tests/%.c,$(GUEST_BIN)/tests/%,$(wildcard tests/*.c))
BENCHES := $(patsubst bench/%.c,$(GUEST_BIN)/bench/%,$(wildcard bench/*.c))
SAMPLES := $(patsubst samples/%.c,$(GUEST_BIN)/samples/%,$(wildcard samples/*.c))
GUEST_HEADERS := $(wildcard tests/*.h) uapi/linux/uintr.h
# The user-space Rust crate (user/rust/, scripts/rust-user.sh): its guest
# test program, run with the tests, and its examples, run with the samples.
RUST_USER_SRC := $(shell find user/rust -name target -prune -o \( -name '*.rs' -o -name 'Cargo.*' \) -print)
RUST_GUEST := $(GUEST_BIN)/tests/rust_uintr \
	$(patsubst user/rust/uintr/examples/%.rs,$(GUEST_BIN)/samples/rust_%,$(wildcard user/rust/uintr/examples/*.rs))

ifeq ($(V),1)
export UINTR_SHOW := 1
endif
ifdef T
export UINTR_TESTS := $(T)
endif

.PHONY: all deps tree kheaders config kernel lib install-lib guest initramfs host-test no-host-test check stress demo bench bench-breakdown bench-overhead \
	ci-build $(CI_KERNELS) \
	shell bochs config-matrix series-check clean distclean

all: kernel initramfs

deps:
	@scripts/deps.sh

tree: deps
	@scripts/tree.sh

kheaders: tree
	@$(MAKE) -s -C $(KSRC) O=$(KHDR_OBJ) $(KBUILD_VARS) headers

# NO_TREE=1: the tree is prepared already (ci-build's flavors share it).
config: $(if $(NO_TREE),,tree)
	@FLAVOR=$(FLAVOR) scripts/kconfig.sh $(KOBJ) make $(KBUILD_VARS)

kernel: config
	@echo "kernel: building $(FLAVOR) kernel in $(KOBJ)"
	+@$(KMAKE) $(KJOBS) -s bzImage
	@echo "kernel: $$(cat $(KOBJ)/include/config/kernel.release) ready"

$(LIB_B)/libuintr.o: libuintr/libuintr.c $(LIB_HEADERS)
	@mkdir -p $(dir $@)
	gcc $(LIB_CFLAGS) -c -o $@ $<

$(LIBUINTR_A): $(LIB_B)/libuintr.o
	@rm -f $@
	ar rcs $@ $^

$(LIB_B)/libuintr.so.$(LIBUINTR_VERSION): $(LIB_B)/libuintr.o
	gcc -shared -Wl,-soname,$(LIBUINTR_SONAME) -Wl,-z,defs -o $@ $^

$(LIBUINTR_SO): $(LIB_B)/libuintr.so.$(LIBUINTR_VERSION)
	ln -sf $(notdir $<) $(LIB_B)/$(LIBUINTR_SONAME)
	ln -sf $(LIBUINTR_SONAME) $@

# pc: the file to install; pc-uninstalled: the build directory's, which
# pkg-config prefers when PKG_CONFIG_PATH points here.
LIB_PC_SED = sed -e 's|@PREFIX@|$(1)|' -e 's|@LIBDIR@|$(2)|' \
	-e 's|@INCLUDEDIR@|$(3)|' -e 's|@VERSION@|$(LIBUINTR_VERSION)|'

# Rewritten when PREFIX, LIBDIR or INCLUDEDIR change.
$(LIB_B)/libuintr.pc: libuintr/libuintr.pc.in FORCE
	@mkdir -p $(dir $@)
	@$(call LIB_PC_SED,$(PREFIX),$(LIBDIR),$(INCLUDEDIR)/libuintr) $< > $@.tmp
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; echo "lib: $@"; fi

$(LIB_B)/libuintr-uninstalled.pc: libuintr/libuintr.pc.in $(LIB_HEADERS) Makefile
	@mkdir -p $(LIB_B)/include/linux
	cp libuintr/libuintr.h $(LIB_B)/include/
	cp uapi/linux/uintr.h $(LIB_B)/include/linux/
	$(call LIB_PC_SED,$(LIB_B),$(LIB_B),$(LIB_B)/include) $< > $@

FORCE:

lib: $(LIBUINTR_A) $(LIBUINTR_SO) $(LIB_B)/libuintr.pc $(LIB_B)/libuintr-uninstalled.pc

install-lib: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/libuintr/linux
	install -m 644 $(LIBUINTR_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_B)/libuintr.so.$(LIBUINTR_VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libuintr.so.$(LIBUINTR_VERSION) $(DESTDIR)$(LIBDIR)/$(LIBUINTR_SONAME)
	ln -sf $(LIBUINTR_SONAME) $(DESTDIR)$(LIBDIR)/libuintr.so
	install -m 644 libuintr/libuintr.h $(DESTDIR)$(INCLUDEDIR)/libuintr/
	install -m 644 uapi/linux/uintr.h $(DESTDIR)$(INCLUDEDIR)/libuintr/linux/
	install -m 644 $(LIB_B)/libuintr.pc $(DESTDIR)$(LIBDIR)/pkgconfig/

$(GUEST_BIN)/tests/%: tests/%.c $(GUEST_HEADERS) $(LIB_HEADERS) $(LIBUINTR_A) | kheaders
	@mkdir -p $(dir $@)
	gcc $(GUEST_CFLAGS) -o $@ $< $(LIBUINTR_A)

$(GUEST_BIN)/samples/%: samples/%.c $(LIB_HEADERS) $(LIBUINTR_A) | kheaders
	@mkdir -p $(dir $@)
	gcc $(SAMPLE_CFLAGS) -o $@ $< $(LIBUINTR_A) -luring

$(GUEST_BIN)/bench/%: bench/%.c uapi/linux/uintr.h | kheaders
	@mkdir -p $(dir $@)
	gcc $(BENCH_CFLAGS) -o $@ $<

$(GUEST_BIN)/qemu-exit: guest/qemu-exit.c | deps
	@mkdir -p $(dir $@)
	gcc -O2 -static -Wall -Werror -o $@ $<

$(RUST_GUEST) &: $(RUST_USER_SRC) | deps
	@echo "rust-user: building user/rust for the guest"
	@scripts/rust-user.sh guest $(GUEST_BIN)

guest: $(TESTS) $(SAMPLES) $(BENCHES) $(RUST_GUEST) $(GUEST_BIN)/qemu-exit
	@# drop programs whose source is gone
	@for f in $(GUEST_BIN)/tests/* $(GUEST_BIN)/samples/* $(GUEST_BIN)/bench/*; do \
		[ -e "$$f" ] || continue; \
		case " $(TESTS) $(SAMPLES) $(BENCHES) $(RUST_GUEST) " in *" $$f "*) ;; *) rm -f "$$f" ;; esac; \
	done

# gen_init_cpio comes with the kernel build of this flavor.
initramfs: kernel guest
	@scripts/mkinitramfs.sh $(KOBJ)/usr/gen_init_cpio $(GUEST_BIN) $(INITRAMFS)

host-test: tree
	@echo "host-test: Rust unit tests of the pure modules, rustfmt"
	@scripts/host-tests.sh $(RESULTS) || true
	@echo "host-test: the user-space crate (user/rust): cargo test, clippy, rustfmt"
	@scripts/rust-user.sh test $(RESULTS) || true
	@python3 scripts/harness.py selftest > $(RESULTS)/harness-selftest.tap || true

# NO_HOST_TEST=1: the host tests ran in another check of this CI run, so
# this one's summary counts its boots only (and no stale host results).
no-host-test: tree
	@echo "host-test: not run (NO_HOST_TEST=1)"
	@mkdir -p $(RESULTS)
	@rm -f $(RESULTS)/host-*.tap $(RESULTS)/harness-selftest.tap

# Tests that also run in further boots, one per uintr= value of
# EXTRA_BOOTS (KUnit off there): off, and hw (off too without the
# hardware); on the UINTR model: off, and emulate (the emulation on a CPU
# that has UINTR).  The extra boots run side by side: they are short, and
# boot_mode has nothing that depends on timing.
OFF_TESTS := boot_mode
ifeq ($(CPU),sapphire-rapids)
EXTRA_BOOTS := off emulate
# On the model the whole run (KUnit and every test T names) goes twice,
# at the same time: PTI off, and with each of PTI_BOOTS (pti: pti=on, the
# hardware through the User Interrupts area).  Bochs runs on one host
# CPU, so the second model takes the other one.  Without T, the PTI boot
# leaves out PTI_SKIP: storm, a flood of SENDUIPIs for a fixed guest
# time (nine guest seconds, about nine minutes of the model with PTI),
# whose paths through the kernel (the notification and kernel vectors,
# wait, unregister) the other tests take with PTI too; CI's disabled
# kernel builds on the CPU that frees.
PTI_BOOTS := pti
PTI_SKIP := storm
comma := ,
space := $(subst ,, )
PTI_TESTS := $(subst $(space),$(comma),$(strip $(filter-out $(PTI_SKIP),\
	$(notdir $(TESTS) $(SAMPLES) $(RUST_GUEST)))))
else
EXTRA_BOOTS := off hw
PTI_BOOTS :=
endif

# The UINTR model interprets every instruction, yet the suite runs at its
# usual counts there in about 12 minutes (the CPU-bound tests are fast on
# the model: SENDUIPI, UIRET and delivery never enter the kernel); its
# emulated time runs about ten times slower than the wall clock, so the
# per-test timeouts of /init, in guest time, are looser there.
ifeq ($(CPU),sapphire-rapids)
RUN_GUEST := scripts/run-bochs.sh
CHECK_DEPS := bochs
# Wall-clock limit of one boot on the model (the whole suite: ~13 min).
export UINTR_TIMEOUT ?= 1800
else
RUN_GUEST := scripts/run-guest.sh
CHECK_DEPS :=
endif

bochs:
	@scripts/bochs-build.sh > /dev/null
	@scripts/run-bochs.sh deps

# make -j2 ci-build: the normal and debug kernels and the UINTR model
# built side by side, sharing this make's job slots, so that the serial
# steps of one build (the Rust crates, the links, kallsyms) run beside
# the parallel ones of another; CI's checks then find them built.  The
# tree is prepared once, before the kernels start.  The disabled kernel,
# which only the last, short check boots, is ci-kernel-disabled: CI
# builds it in the background at idle priority while the other kernels
# are tested (see .ci/run).
CI_KERNELS := $(addprefix ci-kernel-,normal debug disabled)

ci-build: ci-kernel-normal ci-kernel-debug bochs

$(CI_KERNELS): tree
	+@$(MAKE) --no-print-directory FLAVOR=$(@:ci-kernel-%=%) NO_TREE=1 KJOBS= kernel

# The debug kernel's ACPI interpreter does not finish the AML loop of
# QEMU's i440fx _PRT within ACPICA's 30 s limit (AE_AML_LOOP_TIMEOUT), so
# a PCI device's INTx (tests/device_irq.c) would have no route; the MP
# table that SeaBIOS also provides routes it.
ifeq ($(FLAVOR),debug)
export UINTR_CMDLINE := $(UINTR_CMDLINE) acpi=noirq
endif

# The disabled flavor runs only these, told what to expect.
ifeq ($(FLAVOR),disabled)
export UINTR_TESTS := boot_mode
export UINTR_CMDLINE := uintr_test_config=n
endif

check: $(if $(NO_HOST_TEST),no-host-test,host-test) initramfs $(CHECK_DEPS)
	@echo "check: booting the $(FLAVOR) kernel ($(if $(filter qemu,$(CPU)),QEMU,the $(CPU) model in Bochs), 2 CPUs)"
	@mkdir -p $(RESULTS)
	@rm -f $(RESULTS)/console-*.log $(RESULTS)/qemu-status-*
	@t0=$$(date +%s); \
	for m in $(PTI_BOOTS); do \
		echo "check: booting a second model with pti=on, beside the first"; \
		{ UINTR_MEM=$(GUEST_MEM) UINTR_CMDLINE="$$UINTR_CMDLINE pti=on" \
			UINTR_TESTS="$${UINTR_TESTS:-$(PTI_TESTS)}" \
			$(RUN_GUEST) check $(BZIMAGE) $(INITRAMFS) \
			$(RESULTS)/console-$$m.log; \
			echo $$? > $(RESULTS)/qemu-status-$$m; } & \
	done; \
	UINTR_MEM=$(GUEST_MEM) \
		$(RUN_GUEST) check $(BZIMAGE) $(INITRAMFS) \
		$(RESULTS)/console.log; echo $$? > $(RESULTS)/qemu-status; \
	wait; \
	echo "check: guest run took $$(( $$(date +%s) - t0 )) s"
	@if [ -z "$(T)" ] && [ "$(FLAVOR)" != disabled ]; then \
		t0=$$(date +%s); \
		for m in $(EXTRA_BOOTS); do \
			args="uintr=$$m"; \
			echo "check: booting again with $$args"; \
			{ UINTR_MEM=$(GUEST_MEM) UINTR_TESTS=$(OFF_TESTS) \
			UINTR_CMDLINE="$$args kunit.enable=0" \
			$(RUN_GUEST) check $(BZIMAGE) $(INITRAMFS) \
				$(RESULTS)/console-$$m.log; \
			echo $$? > $(RESULTS)/qemu-status-$$m; } & \
		done; \
		wait; \
		echo "check: the extra boots took $$(( $$(date +%s) - t0 )) s"; \
	fi
	@python3 scripts/harness.py summary \
		$(foreach t,$(wildcard $(RESULTS)/*.tap),--tap $(t)) \
		--console $(RESULTS)/console.log --qemu-status $$(cat $(RESULTS)/qemu-status) \
		$$(for m in $(PTI_BOOTS) $(EXTRA_BOOTS); do [ -f $(RESULTS)/console-$$m.log ] && \
			echo --console $(RESULTS)/console-$$m.log \
			--qemu-status $$(cat $(RESULTS)/qemu-status-$$m); done)

# Configurations make check does not boot (FRED with and without the
# feature, PREEMPT_RT, arm64 with Rust): they must build; and the lint job
# (W=1, CLIPPY=1, kernel-doc, rustfmtcheck, htmldocs) must find nothing.
# MATRIX="fred-off lint" picks jobs.  See scripts/config-matrix.sh.
config-matrix: deps
	@scripts/config-matrix.sh $(MATRIX)

# The series as a user applies it: git am onto a fresh tree from the
# tarball, then a build after each patch (FROM=n starts building at patch
# n, FROM=last builds the complete series only).  See
# scripts/series-check.sh.
series-check: deps
	@scripts/series-check.sh $(FROM) $(TO)

# make bench-overhead [N=count] [ROUNDS=r] [ICOUNT=1]: what the feature costs tasks that do not
# use it: a null system call and a one-CPU pipe ping-pong (context
# switches) in boots with uintr=off, on but unused, and on with a receiver
# elsewhere, taking turns ROUNDS (5) times; results in build/bench-overhead/.  See
# scripts/bench-overhead.sh.
BENCH_OVERHEAD_N := $(or $(N),$(if $(QUICK),20000,200000))

bench-overhead: initramfs
	@$(if $(ICOUNT),UINTR_ACCEL=icount) UINTR_MEM=$(GUEST_MEM) ROUNDS=$(or $(ROUNDS),5) scripts/bench-overhead.sh \
		$(BZIMAGE) $(INITRAMFS) $(B)/bench-overhead $(BENCH_OVERHEAD_N)

# make stress T=storm,wait [MINUTES=60]: one boot that runs the named
# guest tests again and again for MINUTES, stopping at the first failed
# round; for races too rare for one `make check`.
STRESS_S = $(shell echo $$(( $(or $(MINUTES),60) * 60 )))

stress:
	@$(MAKE) --no-print-directory check EXTRA_BOOTS= PTI_BOOTS= \
		UINTR_TIMEOUT=$$(( $(STRESS_S) + 1800 )) \
		UINTR_CMDLINE="uintr_stress_s=$(STRESS_S) kunit.enable=0 $(UINTR_CMDLINE)"; \
	st=$$?; grep -h "uintr-stress-rounds" $(RESULTS)/console.log; exit $$st

demo: initramfs
	@UINTR_SHOW=1 UINTR_MEM=$(GUEST_MEM) scripts/run-guest.sh demo $(BZIMAGE) \
		$(INITRAMFS) $(B)/demo-console.log; st=$$?; \
	if [ $$st != 1 ]; then echo "demo: guest failed (qemu status $$st)"; exit 1; fi; \
	if grep -E '^### uintr-end .* rc=[^0]' $(B)/demo-console.log; then \
		echo "demo: a sample failed (see above)"; exit 1; fi

# make bench [QUICK=1] [N=count] [ROWS=a,b] [ICOUNT=1]: the IPC ping-pong
# table from one boot of the normal kernel; results in build/bench/ (JSON,
# CSV, console, plot).  ROWS takes ipc_bench's -m names (default
# all,all-proc).  ICOUNT=1 runs QEMU with -icount (see run-guest.sh): a
# guest nanosecond is one instruction, so latencies count instructions.
# KARGS: extra guest kernel arguments for the benchmark boot (idle=halt,
# nohz_full=1, ...), recorded in the result JSON.
# CPU=sapphire-rapids runs it on the UINTR model, the hardware backend,
# whose clock counts instructions too (2.2 per nanosecond).
BENCH_N := $(or $(N),$(if $(QUICK),20000,1000000))
BENCH_ROWS := $(if $(ROWS),uintr_bench_rows=$(ROWS))
BENCH_ACCEL := UINTR_ACCEL=$(if $(filter sapphire-rapids,$(CPU)),bochs,$(if $(ICOUNT),icount,$(or $(UINTR_ACCEL),tcg)))

bench: initramfs $(CHECK_DEPS)
	@mkdir -p $(B)/bench
	@echo "bench: $(BENCH_N) round trips per mechanism ($(FLAVOR) kernel, 2 vCPUs)"
	@$(BENCH_ACCEL) UINTR_SHOW=1 UINTR_MEM=$(GUEST_MEM) UINTR_TIMEOUT=5400 \
		UINTR_CMDLINE="uintr_bench_n=$(BENCH_N) $(BENCH_ROWS) kunit.enable=0 $(KARGS)" \
		$(RUN_GUEST) bench $(BZIMAGE) $(INITRAMFS) $(B)/bench/console.log; \
		st=$$?; [ $$st = 1 ] || { echo "bench: guest failed (qemu status $$st)"; exit 1; }
	@$(BENCH_ACCEL) KARGS="$(KARGS)" scripts/bench-report.sh $(B)/bench/console.log $(B)/bench

# make bench-breakdown [N=count] [ROWS=a,b] [ICOUNT=1]: where a blocked
# receiver's wakeup spends its time: each row (default uintr-wait,
# uintr-wait-clui and eventfd) runs N (2000) round trips with its wakeup
# path traced (uintr, sched, syscall and IPI events), and
# scripts/bench-breakdown.py gives the median of each step of a one-way
# trip; results in build/bench-breakdown/.  ICOUNT and CPU as for bench.
bench-breakdown: initramfs $(CHECK_DEPS)
	@mkdir -p $(B)/bench-breakdown
	@$(BENCH_ACCEL) UINTR_MEM=$(GUEST_MEM) UINTR_TIMEOUT=1800 \
		UINTR_CMDLINE="uintr_bench_n=$(or $(N),2000) $(BENCH_ROWS) kunit.enable=0 $(KARGS)" \
		$(RUN_GUEST) breakdown $(BZIMAGE) $(INITRAMFS) \
		$(B)/bench-breakdown/console.log; \
		st=$$?; [ $$st = 1 ] || { echo "bench-breakdown: guest failed (qemu status $$st)"; exit 1; }
	@scripts/bench-breakdown.py $(B)/bench-breakdown/console.log \
		$(B)/bench-breakdown/breakdown.json | tee $(B)/bench-breakdown/breakdown.md

shell: initramfs
	@UINTR_MEM=$(GUEST_MEM) scripts/run-guest.sh shell $(BZIMAGE) $(INITRAMFS)

clean:
	rm -rf $(B)/obj-* $(B)/series-check $(GUEST_BIN) $(LIB_B) $(B)/results $(INITRAMFS)

distclean:
	rm -rf $(B)
