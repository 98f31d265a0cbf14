// SPDX-License-Identifier: GPL-2.0
/*
 * The trace events (system "uintr", include/trace/events/uintr.h): turned
 * on through tracefs, they show each step of a user interrupt in order
 * and with the right fields.  A ping-pong between two processes, each
 * blocked in uintr_wait() when the other sends, gives per interrupt:
 * send -> notify on the kernel vector -> wait end -> delivery -> UIRET,
 * inside a wait begin/end; around it the setup and teardown events.  A
 * receiver whose sleeps user interrupts end shows the context switch
 * that arms its UPID, the kernel vector, the interrupted sleep and the
 * switch back.  On UINTR hardware the CPU sends, delivers and returns by
 * itself: those three events must not appear, the kernel's must.
 */
#include "uintr_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>

#include "kselftest_harness.h"

#define KERNEL_VECTOR	0xe9	/* UINTR_KERNEL_VECTOR (irq_vectors.h) */
#define ROUNDS		20

static char tracefs[64];

/* Finds tracefs, mounting it if need be; 0, or -1 if there is none. */
static int find_tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[128];

	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/trace", dirs[i]);
		if (access(path, F_OK) == 0) {
			snprintf(tracefs, sizeof(tracefs), "%s", dirs[i]);
			return 0;
		}
	}
	if (mount("nodev", dirs[0], "tracefs", 0, NULL))
		return -1;
	snprintf(tracefs, sizeof(tracefs), "%s", dirs[0]);
	return 0;
}

static int tracefs_write(const char *file, const char *text)
{
	char path[192];

	snprintf(path, sizeof(path), "%s/%s", tracefs, file);
	return uintr_write_file(path, text);
}

/*
 * Empties the buffer and turns every uintr event on, on a clock that
 * orders the two CPUs' events.
 */
static int trace_start(void)
{
	char path[192];
	int fd;

	if (tracefs_write("tracing_on", "0") || tracefs_write("trace_clock", "global"))
		return -1;
	snprintf(path, sizeof(path), "%s/trace", tracefs);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	close(fd);
	if (tracefs_write("events/uintr/enable", "1"))
		return -1;
	return tracefs_write("tracing_on", "1");
}

static void trace_stop(void)
{
	tracefs_write("tracing_on", "0");
	tracefs_write("events/uintr/enable", "0");
	tracefs_write("trace_clock", "local");
}

/* One event from the trace file. */
struct event {
	pid_t pid;		/* the task that emitted it */
	char name[32];		/* without "uintr_" */
	char fields[160];
};

#define MAX_EVENTS	4096
static struct event events[MAX_EVENTS];
static int nr_events;

/* Reads the uintr events from the trace file, in order; -1 on error. */
static int trace_read(void)
{
	char path[192], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", tracefs);
	f = fopen(path, "r");
	if (!f)
		return -1;
	nr_events = 0;
	while (fgets(line, sizeof(line), f) && nr_events < MAX_EVENTS) {
		struct event *e = &events[nr_events];
		char *ev = strstr(line, ": uintr_"), *cpu, *dash, *colon;

		if (line[0] == '#' || !ev)
			continue;
		/* "  comm-PID  [CPU] flags  TIME: uintr_name: fields" */
		cpu = strstr(line, " [");
		if (!cpu || cpu > ev)
			continue;
		*cpu = '\0';
		dash = strrchr(line, '-');
		if (!dash)
			continue;
		e->pid = atoi(dash + 1);
		ev += strlen(": uintr_");
		colon = strchr(ev, ':');
		if (!colon)
			continue;
		*colon = '\0';
		snprintf(e->name, sizeof(e->name), "%s", ev);
		snprintf(e->fields, sizeof(e->fields), " %s", colon + 1);
		e->fields[strcspn(e->fields, "\n")] = '\0';
		nr_events++;
	}
	fclose(f);
	return 0;
}

/* Field key of e as a number; -1 if it has none. */
static long long field(const struct event *e, const char *key)
{
	char pattern[40];
	const char *at;

	snprintf(pattern, sizeof(pattern), " %s=", key);
	at = strstr(e->fields, pattern);
	return at ? strtoll(at + strlen(pattern), NULL, 0) : -1;
}

static bool has_text(const struct event *e, const char *text)
{
	return strstr(e->fields, text) != NULL;
}

static bool is(const struct event *e, const char *name)
{
	return !strcmp(e->name, name);
}

/* The index of the first event at or after `from` that matches; -1. */
static int find(int from, const char *name, pid_t pid, const char *key, long long value)
{
	for (int i = from; i < nr_events; i++)
		if (is(&events[i], name) && (pid < 0 || events[i].pid == pid) &&
		    (!key || field(&events[i], key) == value))
			return i;
	return -1;
}

static int count(const char *name, pid_t pid)
{
	int n = 0;

	for (int i = 0; i < nr_events; i++)
		n += is(&events[i], name) && (pid < 0 || events[i].pid == pid);
	return n;
}

static void dump_events(struct __test_metadata *_metadata)
{
	for (int i = 0; i < nr_events && i < 200; i++)
		TH_LOG("%d %s:%s", events[i].pid, events[i].name, events[i].fields);
}

/* The "state" letter of task pid in /proc/pid/stat; '?' if unreadable. */
static char task_state(pid_t pid)
{
	char path[64], stat[512], *paren;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (uintr_read_file(path, stat, sizeof(stat)))
		return '?';
	paren = strrchr(stat, ')');
	return paren && paren[1] == ' ' ? paren[2] : '?';
}

/* Waits until task pid sleeps; 0, or -1 after 5 s. */
static int wait_asleep(pid_t pid)
{
	for (long i = 0; i < 5000000; i++) {
		if (task_state(pid) == 'S')
			return 0;
		if (i % 1000 == 999)
			usleep(1000);
	}
	return -1;
}

static volatile unsigned long handled;

static UINTR_HANDLER(count_handler)
{
	handled++;
}

/* Sleeps in uintr_wait() until the handler has run `want` times. */
static int await(unsigned long want)
{
	while (handled < want) {
		_clui();
		if (handled < want && uintr_wait(0, NULL) < 0 && errno != EINTR)
			return -1;
		_stui();
	}
	return 0;
}

struct party {
	int vector;		/* the vector it receives */
	int fd;			/* its uintr_fd */
	long index;		/* its UITT index for the peer */
};

/*
 * One side of the ping-pong: receives on its own uintr_fd and sends to
 * the peer's, which comes over sock; the peer is pinged only once asleep.
 * A pings first.  Returns 0, or the step that failed.
 */
static int play(int sock, bool first, pid_t peer, struct party *me)
{
	int peer_fd;

	if (uintr_register_handler(count_handler, 0))
		return 1;
	me->fd = uintr_create_fd(me->vector, 0);
	if (me->fd < 0 || uintr_send_fd(sock, me->fd))
		return 2;
	peer_fd = uintr_recv_fd(sock);
	if (peer_fd < 0)
		return 3;
	me->index = uintr_register_sender(peer_fd, 0);
	if (me->index < 0)
		return 4;
	_stui();
	for (unsigned long i = 0; i < ROUNDS; i++) {
		if (!first && await(i + 1))
			return 6;
		if (wait_asleep(peer))
			return 7;
		_senduipi(me->index);
		if (first && await(i + 1))
			return 8;
	}
	/* The peer's last wait has ended once it answers. */
	if (write(sock, "x", 1) != 1 || read(sock, &(char){ 0 }, 1) != 1)
		return 9;
	_clui();
	if (uintr_unregister_sender(peer_fd, 0) || close(peer_fd) || close(me->fd))
		return 10;
	return uintr_unregister_handler(0) ? 11 : 0;
}

FIXTURE(trace) {
	bool hardware;
};

FIXTURE_SETUP(trace)
{
	char path[128];

	if (find_tracefs())
		SKIP(return, "no tracefs (CONFIG_TRACING off)");
	snprintf(path, sizeof(path), "%s/events/uintr", tracefs);
	ASSERT_EQ(0, access(path, F_OK)) TH_LOG("%s is missing", path);
	self->hardware = uintr_hardware_mode();
	ASSERT_EQ(0, trace_start());
}

FIXTURE_TEARDOWN(trace)
{
	trace_stop();
}

TEST_F(trace, every_event_is_listed)
{
	static const char *const names[] = {
		"register_handler", "unregister_handler", "fd_create",
		"fd_release", "connect", "disconnect", "send", "notify",
		"deliver", "uiret", "wait_begin", "wait_end",
		"sleep_interrupted", "switch",
	};
	char path[192];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/uintr/uintr_%s/format",
			 tracefs, names[i]);
		EXPECT_EQ(0, access(path, R_OK)) TH_LOG("%s", path);
	}
}

/*
 * The ping-pong: parent A (vector 3, CPU 0) and child B (vector 5, CPU 1).
 * Checked for B's side: every ping is a send by A through its index to
 * B's vector that notifies the kernel vector, then that notification for
 * B, the end of B's wait for it, then (emulated) B's delivery and UIRET,
 * each once per ping and in this order; and B's setup and teardown.
 */
TEST_F(trace, ping_pong_between_processes)
{
	struct party a = { .vector = 3 }, b = { .vector = 5 };
	int sv[2], status, at = 0, connect;
	pid_t pa = getpid(), pb;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pb = uintr_spawn();
	ASSERT_LE(0, pb);
	if (pb == 0) {
		uintr_pin_cpu(1);
		close(sv[0]);
		_exit(play(sv[1], false, pa, &b));
	}
	close(sv[1]);
	uintr_pin_cpu(0);
	ASSERT_EQ(0, play(sv[0], true, pb, &a));
	ASSERT_EQ(pb, waitpid(pb, &status, 0));
	ASSERT_EQ(0, status) TH_LOG("B failed at step %d", WEXITSTATUS(status));
	close(sv[0]);
	tracefs_write("tracing_on", "0");
	ASSERT_EQ(0, trace_read());

	/* Setup of B: handler, fd, then A's connection to it. */
	at = find(0, "register_handler", pb, "handler", (long)count_handler);
	ASSERT_LE(0, at) dump_events(_metadata);
	at = find(at, "fd_create", pb, "vector", b.vector);
	ASSERT_LE(0, at) dump_events(_metadata);
	EXPECT_EQ(pb, field(&events[at], "receiver"));
	connect = find(0, "connect", pa, "index", a.index);
	ASSERT_LE(0, connect) dump_events(_metadata);
	EXPECT_EQ(b.vector, field(&events[connect], "vector"));
	EXPECT_EQ(pb, field(&events[connect], "receiver"));

	/* The pings, from B's setup on (B may sleep before A connects). */

	for (int i = 0; i < ROUNDS; i++) {
		int begin, notify, end;

		begin = find(at, "wait_begin", pb, NULL, 0);
		ASSERT_LE(0, begin) { TH_LOG("round %d", i); dump_events(_metadata); }
		EXPECT_EQ(-1, field(&events[begin], "deadline_ns"));
		if (!self->hardware) {
			int send = find(begin, "send", pa, "index", a.index);

			ASSERT_LE(0, send) { TH_LOG("round %d", i); dump_events(_metadata); }
			EXPECT_EQ(b.vector, field(&events[send], "vector"));
			EXPECT_EQ(1, field(&events[send], "notified"));
			EXPECT_EQ(KERNEL_VECTOR, field(&events[send], "nv"));
			begin = send;
		}
		notify = find(begin, "notify", -1, "receiver", pb);
		ASSERT_LE(0, notify) { TH_LOG("round %d", i); dump_events(_metadata); }
		EXPECT_EQ(KERNEL_VECTOR, field(&events[notify], "nv"));
		EXPECT_EQ(1ll << b.vector, field(&events[notify], "posted"));
		end = find(notify, "wait_end", pb, NULL, 0);
		ASSERT_LE(0, end) { TH_LOG("round %d", i); dump_events(_metadata); }
		EXPECT_TRUE(has_text(&events[end], "how=interrupt"));
		at = end;
		if (!self->hardware) {
			int deliver = find(end, "deliver", pb, "vector", b.vector);
			int uiret;

			ASSERT_LE(0, deliver) { TH_LOG("round %d", i); dump_events(_metadata); }
			EXPECT_EQ((long)count_handler, field(&events[deliver], "handler"));
			uiret = find(deliver, "uiret", pb, NULL, 0);
			ASSERT_LE(0, uiret) { TH_LOG("round %d", i); dump_events(_metadata); }
			/* UIRET returns above the frame the delivery pushed. */
			EXPECT_LT(field(&events[deliver], "frame"), field(&events[uiret], "rsp"));
			at = uiret;
		}
	}
	if (self->hardware) {
		EXPECT_EQ(0, count("send", -1));
		EXPECT_EQ(0, count("deliver", -1));
		EXPECT_EQ(0, count("uiret", -1));
	} else {
		EXPECT_EQ(ROUNDS, count("deliver", pb));
		EXPECT_EQ(ROUNDS, count("uiret", pb));
	}
	/* B slept once per ping, and only then. */
	EXPECT_EQ(ROUNDS, count("wait_begin", pb));
	EXPECT_EQ(ROUNDS, count("wait_end", pb));

	/* Teardown of B's side: A disconnects, B's fd goes, B unregisters. */
	at = find(0, "disconnect", pa, "index", a.index);
	ASSERT_LE(0, at) dump_events(_metadata);
	EXPECT_EQ(b.vector, field(&events[at], "vector"));
	EXPECT_EQ(pb, field(&events[at], "receiver"));
	EXPECT_LE(0, find(0, "fd_release", -1, "receiver", pb)) dump_events(_metadata);
	EXPECT_LE(0, find(0, "unregister_handler", pb, "handler", (long)count_handler));
}

static pid_t sleeper_tid;
static int sleeper_fd;

/* Connects to the sleeper's fd and interrupts its read() once it sleeps. */
static void *interrupter(void *arg)
{
	long index = uintr_register_sender(sleeper_fd, 0);

	uintr_pin_cpu(0);
	if (index < 0 || wait_asleep(sleeper_tid))
		return (void *)1;
	_senduipi(index);
	return uintr_unregister_sender(sleeper_fd, 0) ? (void *)2 : NULL;
}

/*
 * A receiver with UINTR_HANDLER_FLAG_INTERRUPT_SLEEP blocks in read():
 * its switch out arms the UPID for the kernel vector, the post wakes it
 * there, read() fails with EINTR, and its switch in disarms the UPID.
 */
TEST_F(trace, interrupted_sleep)
{
	pid_t tid = gettid();
	int pipefd[2], arm, notify, interrupted, disarm;
	pthread_t thread;
	void *result;
	char c;

	uintr_pin_cpu(1);
	handled = 0;
	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, uintr_register_handler(count_handler,
					    UINTR_HANDLER_FLAG_INTERRUPT_SLEEP));
	sleeper_fd = uintr_create_fd(7, 0);
	ASSERT_LE(0, sleeper_fd);
	sleeper_tid = tid;
	ASSERT_EQ(0, pthread_create(&thread, NULL, interrupter, NULL));
	_stui();
	EXPECT_EQ(-1, read(pipefd[0], &c, 1));
	EXPECT_EQ(EINTR, errno);
	_clui();
	ASSERT_EQ(0, pthread_join(thread, &result));
	EXPECT_EQ(NULL, result);
	EXPECT_EQ(1ul, handled);
	close(sleeper_fd);
	EXPECT_EQ(0, uintr_unregister_handler(0));
	tracefs_write("tracing_on", "0");
	ASSERT_EQ(0, trace_read());

	arm = find(0, "switch", -1, "receiver", tid);
	while (arm >= 0 && !has_text(&events[arm], " arm "))
		arm = find(arm + 1, "switch", -1, "receiver", tid);
	ASSERT_LE(0, arm) dump_events(_metadata);
	notify = find(arm, "notify", -1, "receiver", tid);
	ASSERT_LE(0, notify) dump_events(_metadata);
	EXPECT_EQ(KERNEL_VECTOR, field(&events[notify], "nv"));
	EXPECT_EQ(1ll << 7, field(&events[notify], "posted"));
	disarm = find(notify, "switch", -1, "receiver", tid);
	ASSERT_LE(0, disarm) dump_events(_metadata);
	EXPECT_TRUE(has_text(&events[disarm], " disarm ")) dump_events(_metadata);
	interrupted = find(disarm, "sleep_interrupted", tid, "nr", SYS_read);
	ASSERT_LE(0, interrupted) dump_events(_metadata);
	EXPECT_TRUE(has_text(&events[interrupted], "fate=eintr"));
	EXPECT_EQ(self->hardware ? 0 : 1, count("deliver", tid));
}

TEST_HARNESS_MAIN
