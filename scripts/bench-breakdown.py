#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a blocked receiver's wakeup spends its time (make bench-breakdown).

Reads the console of a `uintr_run=breakdown` boot: per row, the ftrace
output of a short ping-pong run with the uintr events, the scheduler's,
the system calls' and the IPI vectors' on.  Cuts it into one-way trips,
from one party's send to the other party's send back, and each trip into
steps at the events on its critical path; prints per step the median
duration in microseconds over all complete trips (markdown), and writes
the same as JSON.

usage: bench-breakdown.py console.log out.json
"""
import json
import re
import statistics
import sys

LINE = re.compile(r"^\s*(?P<comm>.*)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+"
                  r"(?P<ts>\d+(?:\.\d+)?):\s+(?P<event>\w+):\s?(?P<fields>.*)$")

NR_READ, NR_WRITE = 0, 1


class Event:
    __slots__ = ("pid", "cpu", "ts", "name", "fields")

    def __init__(self, m, tsc_mhz):
        self.pid = int(m["pid"])
        self.cpu = int(m["cpu"])
        # microseconds: seconds with the global clock, TSC ticks with x86-tsc
        self.ts = int(m["ts"]) / tsc_mhz if tsc_mhz else float(m["ts"]) * 1e6
        self.name = m["event"]
        self.fields = m["fields"]

    def field(self, key):
        m = re.search(r"(?:^|\s)" + key + r"=(\S+)", self.fields)
        return m.group(1) if m else None

    def syscall(self):
        """The NR of a sys_enter/sys_exit event."""
        m = re.match(r"NR (\d+)", self.fields)
        return int(m.group(1)) if m else None


def matches(ev, name, pid=None, pred=None):
    return ev.name == name and (pid is None or ev.pid == pid) and (pred is None or pred(ev))


def IDLES(ev, sender, receiver):
    """The sender's CPU switches from the sender to its idle task."""
    return int(ev.field("prev_pid")) == sender and ev.field("next_pid") == "0"


# A row's steps: (label, event, whose, predicate).  "whose" is "receiver"
# (the party sent to) for its events only, None for any task's; the
# predicate is given the event, the sender and the receiver.
def uintr_wait_steps(clui):
    """uintr-wait (UIF set, UINTR_WAIT_VALUE) or uintr-wait-clui (UIF clear
    around the wait: a CLUI trap before it, the delivery in STUI's)."""
    return [
        ("SENDUIPI (#UD), %suintr_wait() until the sender's CPU idles"
         % ("CLUI (#UD), " if clui else ""),
         "sched_switch", None, IDLES),
        ("then until the kernel vector's handler runs on the other CPU",
         "uintr_notify", None,
         lambda ev, s, r: ev.field("nv") == "0xe9" and int(ev.field("receiver")) == r),
        ("handler wakes the waiter, switch to it", "sched_switch", None,
         lambda ev, s, r: int(ev.field("next_pid")) == r),
        ("the waiter looks, unblocks, picks up", "uintr_wait_end", "receiver", None),
        ("uintr_wait() leaves the system call", "sys_exit", "receiver", None),
        ("STUI (#UD) delivers" if clui else "delivery on the way to user mode",
         "uintr_deliver", "receiver", None),
        ("handler runs, UIRET (#UD)", "uintr_uiret", "receiver", None),
        ("loop, SENDUIPI back (#UD)", "uintr_send", "receiver", None),
    ]


STEPS = {
    "uintr-wait": uintr_wait_steps(False),
    "uintr-wait-clui": uintr_wait_steps(True),
    # 6.12 queues the wakeup of a task on an idle CPU to that CPU: the
    # IPI comes first, and the wakeup runs in its handler.
    "eventfd": [
        ("write(), read() until the writer's CPU idles", "sched_switch", None, IDLES),
        ("then until the IPI reaches the other CPU", "ipi", None, None),
        ("the IPI's handler wakes the reader", "sched_wakeup", None,
         lambda ev, s, r: int(ev.field("pid")) == r),
        ("switch to the reader", "sched_switch", None,
         lambda ev, s, r: int(ev.field("next_pid")) == r),
        ("read() returns to user mode", "sys_exit", "receiver",
         lambda ev, s, r: ev.syscall() == NR_READ),
        ("loop, write() back", "sys_enter", "receiver",
         lambda ev, s, r: ev.syscall() == NR_WRITE),
    ],
}


def is_start(row, ev, parties):
    if ev.pid not in parties:
        return False
    if row.startswith("uintr-wait"):
        return ev.name == "uintr_send"
    return ev.name == "sys_enter" and ev.syscall() == NR_WRITE


def parties_of(row, events):
    """The two tasks that send most: the ping-pong's parties."""
    counts = {}
    for ev in events:
        if is_start(row, ev, {ev.pid}):
            counts[ev.pid] = counts.get(ev.pid, 0) + 1
    best = sorted(counts, key=counts.get, reverse=True)[:2]
    return set(best) if len(best) == 2 else set()


def trips(row, events):
    """Yields each complete trip's step durations."""
    parties = parties_of(row, events)
    steps = STEPS[row]
    starts = [i for i, ev in enumerate(events) if is_start(row, ev, parties)]
    for i, j in zip(starts, starts[1:]):
        sender = events[i].pid
        receiver = events[j].pid
        if receiver == sender:
            continue
        at, t, durations = i + 1, events[i].ts, []
        for label, name, whose, pred in steps:
            pid = receiver if whose == "receiver" else None
            found = None
            for k in range(at, j + 1):
                ev = events[k]
                if name == "ipi":
                    hit = ev.name in ("call_function_single_entry",
                                      "reschedule_entry", "call_function_entry")
                else:
                    hit = matches(ev, name, pid) and (pred is None or pred(ev, sender, receiver))
                if hit:
                    found = k
                    break
            if found is None:
                break
            durations.append(events[found].ts - t)
            at, t = found + 1, events[found].ts
        if len(durations) == len(steps) and at == j + 1:
            yield durations


def parse(console):
    rows, row, events, tsc_mhz = {}, None, [], None
    for line in console:
        if line.startswith("### uintr-trace-clock x86-tsc "):
            tsc_mhz = float(line.split()[3])
        elif line.startswith("### uintr-trace-begin "):
            row, events = line.split()[2], []
        elif line.startswith("### uintr-trace-end"):
            rows[row] = events
            row = None
        elif row:
            m = LINE.match(line.rstrip("\r\n"))
            if m:
                events.append(Event(m, tsc_mhz))
    return rows


def main():
    with open(sys.argv[1], errors="replace") as f:
        rows = parse(f)
    report = {}
    for row, events in rows.items():
        if row not in STEPS:
            continue
        all_trips = list(trips(row, events))
        if not all_trips:
            print(f"{row}: no complete trip in {len(events)} events")
            continue
        medians = [statistics.median(t[s] for t in all_trips) for s in range(len(STEPS[row]))]
        total = statistics.median(sum(t) for t in all_trips)
        report[row] = {"trips": len(all_trips), "one_way_us": total,
                       "steps": [{"step": s[0], "median_us": m} for s, m in zip(STEPS[row], medians)]}
        print(f"\n{row}: {len(all_trips)} one-way trips, median {total:.2f} us\n")
        print("| step | median µs |")
        print("|---|---:|")
        for s, m in zip(STEPS[row], medians):
            print(f"| {s[0]} | {m:.2f} |")
    with open(sys.argv[2], "w") as f:
        json.dump(report, f, indent=1)
    return 0 if report else 1


if __name__ == "__main__":
    sys.exit(main())
