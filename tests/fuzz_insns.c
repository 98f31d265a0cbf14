// SPDX-License-Identifier: GPL-2.0
/*
 * Instruction fuzzer for the #UD emulator: random encodings of the five
 * UINTR instructions (prefix mixes, REX, ModRM forms), each run in a
 * child, checked against a model of the decoder's documented rules
 * (rust/uintr/decode.rs): an accepted encoding is executed (RIP moves
 * exactly past it, so the exit stub behind it runs); a rejected one is
 * not emulated, so it ends in SIGILL unless the CPU itself gives the bytes
 * another meaning.  Each encoding also runs so that it ends exactly at the
 * end of a page whose successor is unmapped (the emulator must cope with
 * a short fetch), and straddling into that page (it must never run).
 *
 * UINTR_FUZZ_SEED and UINTR_FUZZ_CASES (environment) replay or lengthen a
 * run.
 */
#include "uintr_test.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

#define DEFAULT_CASES	3000
#define PAGE		4096

static const uint8_t exit_stub[] = {
	0xb8, 0x3c, 0x00, 0x00, 0x00,	/* mov $60, %eax (exit) */
	0x31, 0xff,			/* xor %edi, %edi */
	0x0f, 0x05,			/* syscall */
};

enum kind { K_UIRET, K_TESTUI, K_CLUI, K_STUI, K_SENDUIPI };

struct encoding {
	uint8_t bytes[15];
	int len;
	enum kind kind;
	int accepted;		/* the decoder's rules accept it */
	int uses_rsp;		/* SENDUIPI's register is RSP */
};

static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Builds a random encoding and predicts, from decode.rs's rules, whether
 * the emulator accepts it. */
static void generate(uint64_t *s, struct encoding *e)
{
	static const uint8_t ok_prefix[] = { 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x67, 0xf3 };
	static const uint8_t bad_prefix[] = { 0xf2, 0xf0, 0x66 };
	int n = 0, f3 = 0, bad = 0, rex = -1, rex_misplaced = 0;
	int prefixes = next(s) % 4;
	uint8_t modrm;

	memset(e, 0, sizeof(*e));
	if (next(s) % 8)
		e->bytes[n++] = 0xf3, f3 = 1;
	for (int i = 0; i < prefixes; i++) {
		uint8_t p;

		if (next(s) % 6 == 0) {
			p = bad_prefix[next(s) % 3];
			bad = 1;
		} else {
			p = ok_prefix[next(s) % sizeof(ok_prefix)];
			f3 |= p == 0xf3;
		}
		e->bytes[n++] = p;
	}
	if (next(s) % 3 == 0) {
		rex = 0x40 | (next(s) & 0xf);
		e->bytes[n++] = rex;
		/* Now and then a legacy prefix after REX: REX is then ignored
		 * by the CPU and refused by the rules. */
		if (next(s) % 5 == 0) {
			e->bytes[n++] = 0xf3;
			f3 = 1;
			rex_misplaced = 1;
		}
	}
	e->bytes[n++] = 0x0f;
	e->kind = next(s) % 5;
	if (e->kind == K_SENDUIPI) {
		e->bytes[n++] = 0xc7;
		modrm = next(s) & 0xff;
		if (next(s) % 2)
			modrm = 0xf0 | (modrm & 7);	/* mod 11, reg 6 */
		e->bytes[n++] = modrm;
		/* A memory form would need more bytes: give it some. */
		if ((modrm >> 6) != 3)
			for (int i = 0; i < 6; i++)
				e->bytes[n++] = 0;
		e->accepted = (modrm >> 6) == 3 && ((modrm >> 3) & 7) == 6;
		e->uses_rsp = (modrm & 7) == 4 && !(rex >= 0 && (rex & 1));
	} else {
		e->bytes[n++] = 0x01;
		e->bytes[n++] = 0xec + e->kind;
		e->accepted = 1;
	}
	e->accepted = e->accepted && f3 && !bad && !rex_misplaced;
	e->len = n;
}

/* The code under test jumps here with every register but RSP zero. */
static void *volatile target;
static void *volatile stub;

static void run_at(void *code)
{
	target = code;
	__asm__ volatile(
		/* A UIRET frame returning to the exit stub: RSP, RFLAGS, RIP. */
		"mov %%rsp, %%rax\n\t"
		"push %%rax\n\t"
		"pushfq\n\t"
		"pushq stub(%%rip)\n\t"
		"xor %%eax, %%eax\n\t"
		"xor %%ecx, %%ecx\n\t"
		"xor %%edx, %%edx\n\t"
		"xor %%ebx, %%ebx\n\t"
		"xor %%ebp, %%ebp\n\t"
		"xor %%esi, %%esi\n\t"
		"xor %%edi, %%edi\n\t"
		"xor %%r8d, %%r8d\n\t"
		"xor %%r9d, %%r9d\n\t"
		"xor %%r10d, %%r10d\n\t"
		"xor %%r11d, %%r11d\n\t"
		"xor %%r12d, %%r12d\n\t"
		"xor %%r13d, %%r13d\n\t"
		"xor %%r14d, %%r14d\n\t"
		"xor %%r15d, %%r15d\n\t"
		"jmp *target(%%rip)\n\t"
		::: "memory");
}

enum placement { MIDDLE, AT_PAGE_END, STRADDLING };

/* Runs e in a child placed as asked; returns its signal, or 0 for exit 0,
 * or -1 for anything else. */
static int run_encoding(const struct encoding *e, enum placement where)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		uint8_t *map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint8_t *code;
		int fd;

		if (map == MAP_FAILED || uintr_register_handler(uintr_test_handler(), 0))
			_exit(100);
		fd = uintr_create_fd(0, 0);
		if (fd < 0 || uintr_register_sender(fd, 0) != 0)
			_exit(101);
		switch (where) {
		case MIDDLE:
			code = map + 100;
			memcpy(code + e->len, exit_stub, sizeof(exit_stub));
			stub = code + e->len;
			break;
		case AT_PAGE_END:
			/* Only UIRET gets to the stub: its frame says so. */
			code = map + PAGE - e->len;
			memcpy(map, exit_stub, sizeof(exit_stub));
			stub = map;
			break;
		default:
			code = map + PAGE - e->len / 2;
			memcpy(map, exit_stub, sizeof(exit_stub));
			stub = map;
			break;
		}
		memcpy(code, e->bytes, e->len);
		if (where != MIDDLE && munmap(map + PAGE, PAGE))
			_exit(102);
		run_at(code);
		_exit(103);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return WTERMSIG(status);
	return WEXITSTATUS(status) == 0 ? 0 : -1;
}

/*
 * What the model predicts for e at `where`: a signal, 0 for a clean exit,
 * -2 for "not emulated" (SIGILL, or whatever the CPU itself makes of the
 * bytes), -3 for "never executed": an instruction cut by the page end
 * faults on fetch, or raises #UD on the bytes the CPU has, and the
 * emulator must not run an incomplete instruction either.
 */
static int expected(const struct encoding *e, enum placement where)
{
	if (where == STRADDLING)
		return -3;
	if (!e->accepted)
		return -2;		/* SIGILL, or the CPU's own meaning */
	if (e->kind == K_SENDUIPI && e->uses_rsp)
		return SIGSEGV;		/* index = a stack address: invalid */
	if (where == AT_PAGE_END)
		return e->kind == K_UIRET ? 0 : SIGSEGV;	/* RIP moved on */
	return 0;
}

static void print_encoding(const struct encoding *e, char *buf, size_t size)
{
	int n = 0;

	for (int i = 0; i < e->len && n + 4 < (int)size; i++)
		n += snprintf(buf + n, size - n, "%02x ", e->bytes[i]);
}

TEST_F_TIMEOUT(slow, encodings_follow_the_decoder_rules, 900)
{
	const char *env_seed = getenv("UINTR_FUZZ_SEED");
	const char *env_cases = getenv("UINTR_FUZZ_CASES");
	uint64_t seed = env_seed ? strtoull(env_seed, NULL, 0) : (uint64_t)time(NULL);
	/* A debug kernel (kmemleak, KASAN, lockdep) forks ten times slower. */
	long cases = env_cases ? atol(env_cases) :
		     uintr_debug_kernel() ? DEFAULT_CASES / 10 : DEFAULT_CASES;
	long accepted = 0, mismatches = 0, sigill = 0;
	uint64_t s = seed | 1;

	int trace = open("/proc/sys/debug/exception-trace", O_RDWR);
	char saved = '1';

	/*
	 * Thousands of children die of SIGILL/SIGSEGV on purpose: keep the
	 * kernel from logging each one on the (slow) serial console.
	 */
	if (trace >= 0 && pread(trace, &saved, 1, 0) == 1)
		pwrite(trace, "0", 1, 0);
	printf("# seed %llu, %ld encodings x 3 placements\n",
	       (unsigned long long)seed, cases);
	fflush(stdout);
	for (long i = 0; i < cases; i++) {
		struct encoding e;

		generate(&s, &e);
		accepted += e.accepted;
		for (enum placement where = MIDDLE; where <= STRADDLING; where++) {
			int got = run_encoding(&e, where);
			int want = expected(&e, where);
			int ok = want == -2 ? got == SIGILL || got == SIGSEGV || got == 0 :
				 want == -3 ? got == SIGILL || got == SIGSEGV :
				 got == want;
			char hex[64] = "";

			sigill += got == SIGILL;
			if (ok)
				continue;
			print_encoding(&e, hex, sizeof(hex));
			if (mismatches++ < 10)
				printf("# %s at placement %d: got %d, want %d\n",
				       hex, where, got, want);
		}
	}
	printf("# %ld accepted by the rules, %ld runs ended in SIGILL\n",
	       accepted, sigill);
	if (trace >= 0) {
		pwrite(trace, &saved, 1, 0);
		close(trace);
	}
	EXPECT_EQ(0, mismatches);
}

TEST_HARNESS_MAIN
