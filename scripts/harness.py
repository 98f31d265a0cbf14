#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test result collector of `make check`.

Reads TAP produced on the host (Rust unit tests, converted by
scripts/host-tests.sh) and the guest's serial console (KUnit's KTAP and the
TAP of every guest test between "### uintr-begin/end" markers), looks for
kernel splats (Oops, BUG, WARNING, KASAN, lockdep, kmemleak, ...) and prints
one line per test, the details of every failure and a closing line
"N passed, N failed, N skipped".  Exit status 1 on any failure.

    harness.py summary [--tap FILE]... [--console FILE --qemu-status N]...
    harness.py selftest     (TAP of the harness's own tests)
"""

import argparse
import re
import sys

RESULT = re.compile(r"^(?P<indent>\s*)(?P<not>not )?ok (?P<num>\d+)\b ?-? ?(?P<desc>[^#]*)(?P<directive>#.*)?$")
PLAN = re.compile(r"^\s*1\.\.(\d+)")
TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
BEGIN = re.compile(r"^### uintr-begin (\S+)")
END = re.compile(r"^### uintr-end (\S+) rc=(\d+)")

# Kernel reports that fail a run wherever they appear in the console.
SPLATS = [
    re.compile(p)
    for p in (
        r"\bBUG: ",
        r"\bBUG at\b",
        r"kernel BUG at",
        r"\bWARNING: ",
        r"\bOops\b",
        r"Kernel panic",
        r"general protection fault",
        r"Unable to handle kernel",
        r"\bKASAN: ",
        r"\bUBSAN: ",
        r"possible circular locking dependency",
        r"possible recursive locking",
        r"inconsistent lock state",
        r"lock held when returning to user space",
        r"suspicious RCU usage",
        r"INFO: task .* blocked for more than",
        r"rcu_sched self-detected stall|rcu: INFO:",
        r"list_(add|del) corruption",
        r"refcount_t: ",
        r"kmemleak: \d+ new suspected memory leaks",
        r"DEBUG_LOCKS_WARN_ON",
        r"ODEBUG: ",
        r"Rust panic|panicked at",
    )
]
SPLAT_CONTEXT = 30


class Results:
    """Accumulates results and failure details."""

    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0
        self.lines = []
        self.details = []
        # Names the boot of the console being read ("pti/" for
        # console-pti.log), empty for the main boot's console.log.
        self.boot = ""

    def add(self, suite, ok, desc, skip=False, detail=None):
        suite = self.boot + suite
        if skip:
            self.skipped += 1
            word = "skip"
        elif ok:
            self.passed += 1
            word = "ok"
        else:
            self.failed += 1
            word = "FAIL"
        self.lines.append(f"{word:4} {suite}: {desc}".rstrip())
        if detail and not ok and not skip:
            self.details.append((f"{suite}: {desc}", detail))


def strip(line):
    return TIMESTAMP.sub("", line.rstrip("\r\n"))


def is_skip(directive):
    return bool(directive) and directive[1:].strip().upper().startswith("SKIP")


def parse_tap(suite, lines, results, exit_code=None, output=None):
    """Counts the top-level TAP results of one test program."""
    plan = None
    count = 0
    failed_before = results.failed
    for line in lines:
        m = PLAN.match(line)
        if m and not line.startswith(" ") and plan is None:
            plan = int(m.group(1))
            continue
        m = RESULT.match(line)
        if not m or m.group("indent"):
            continue
        count += 1
        desc = m.group("desc").strip() or f"test {m.group('num')}"
        results.add(suite, not m.group("not"), desc, is_skip(m.group("directive")), output)
    if count == 0:
        results.add(suite, False, "no TAP result at all", detail=output)
    elif plan is not None and plan != count:
        results.add(suite, False, f"planned {plan} tests, ran {count}", detail=output)
    if exit_code not in (None, 0) and results.failed == failed_before:
        results.add(suite, False, f"exited with status {exit_code}", detail=output)


def parse_ktap(lines, results):
    """Counts KUnit's leaf test cases (suites count through their cases)."""
    entries = []  # (indent, ok, skip, desc)
    for line in lines:
        m = RESULT.match(line)
        if not m:
            continue
        entries.append((len(m.group("indent")), not m.group("not"),
                        is_skip(m.group("directive")), m.group("desc").strip()))
    for i, (indent, ok, skip, desc) in enumerate(entries):
        children = []
        for j in range(i - 1, -1, -1):
            if entries[j][0] <= indent:
                break
            children.append(entries[j])
        if not children:
            results.add("kunit", ok, desc, skip)
        elif not ok and not skip and all(c[1] for c in children):
            results.add("kunit", False, f"suite {desc} failed")


def find_splats(lines, results, source):
    i = 0
    while i < len(lines):
        if any(p.search(lines[i]) for p in SPLATS):
            context = "\n".join(lines[max(0, i - 2): i + SPLAT_CONTEXT])
            results.add(source, False, f"kernel report: {lines[i].strip()}", detail=context)
            i += SPLAT_CONTEXT
        else:
            i += 1


def parse_console(path, qemu_status, results):
    with open(path, errors="replace") as f:
        lines = [strip(l) for l in f]
    source = f"console {path.rsplit('/', 1)[-1]}"
    find_splats(lines, results, source)

    kernel_lines, done, i = [], False, 0
    while i < len(lines):
        line = lines[i]
        m = BEGIN.match(line)
        if m:
            name, body, rc = m.group(1), [], None
            i += 1
            while i < len(lines):
                e = END.match(lines[i])
                if e and e.group(1) == name:
                    rc = int(e.group(2))
                    break
                if BEGIN.match(lines[i]) or lines[i].startswith("### uintr-guest-done"):
                    i -= 1
                    break
                body.append(lines[i])
                i += 1
            output = "\n".join(body)
            if rc is None:
                results.add(name, False, "did not finish (crash or hang)", detail=output)
            else:
                timeout = " (timeout)" if rc in (124, 143) else ""
                parse_tap(name, body, results, rc, output + timeout)
        elif line.startswith("### uintr-guest-done"):
            done = True
        elif line.startswith("### uintr-kmemleak-begin"):
            leak = []
            i += 1
            while i < len(lines) and not lines[i].startswith("### uintr-kmemleak-end"):
                leak.append(lines[i])
                i += 1
            if any(l.strip() for l in leak):
                results.add("kmemleak", False, "unreferenced objects", detail="\n".join(leak))
            else:
                results.add("kmemleak", True, "no leak after the tests")
        else:
            kernel_lines.append(line)
        i += 1
    parse_ktap(kernel_lines, results)
    if not done or qemu_status != 1:
        tail = "\n".join(lines[-40:])
        results.add(source, False, f"guest did not complete (qemu status {qemu_status})", detail=tail)


def summary(args):
    results = Results()
    for path in args.tap or []:
        with open(path, errors="replace") as f:
            name = path.rsplit("/", 1)[-1].removesuffix(".tap")
            text = [strip(l) for l in f]
            parse_tap(name, text, results, output="\n".join(text))
    consoles = args.console or []
    statuses = args.qemu_status or []
    if len(consoles) != len(statuses):
        sys.exit("harness: one --qemu-status per --console")
    for path, status in zip(consoles, statuses):
        m = re.search(r"console-(.+)\.log$", path)
        results.boot = f"{m.group(1)}/" if m else ""
        parse_console(path, status, results)
    results.boot = ""
    for line in results.lines:
        print(line)
    for what, detail in results.details:
        print(f"\n===== {what} =====\n{detail}\n===== end =====")
    if results.passed + results.failed == 0:
        results.add("harness", False, "no test ran")
    print(f"{results.passed} passed, {results.failed} failed, {results.skipped} skipped")
    return 1 if results.failed else 0


def selftest():
    """The harness's own tests, as TAP: each must detect what it claims."""
    import os
    import tempfile

    def run_console(text, status=1):
        r = Results()
        with tempfile.NamedTemporaryFile("w", delete=False) as f:
            f.write(text)
        try:
            parse_console(f.name, status, r)
        finally:
            os.unlink(f.name)
        return r

    good = ("[    0.1] KTAP version 1\n[    0.1] 1..1\n    KTAP version 1\n"
            "    # Subtest: s\n    1..2\n    ok 1 a\n    ok 2 b # SKIP no\nok 1 s\n"
            "### uintr-begin t1\nTAP version 13\n1..2\nok 1 x\n[ 1.0] noise\nok 2 y\n"
            "### uintr-end t1 rc=0\n### uintr-guest-done\n")
    cases = [
        ("clean run counts leaves and test points", lambda: (lambda r: (r.passed, r.failed, r.skipped) == (3, 0, 1))(run_console(good))),
        ("failing test point fails", lambda: run_console(good.replace("ok 2 y", "not ok 2 y")).failed == 1),
        ("non-zero exit without not-ok fails", lambda: run_console(good.replace("rc=0", "rc=1")).failed == 1),
        ("plan mismatch fails", lambda: run_console(good.replace("1..2\nok 1 x", "1..3\nok 1 x")).failed == 1),
        ("missing end marker fails", lambda: run_console(good.replace("### uintr-end t1 rc=0\n", "")).failed >= 1),
        ("test without TAP fails", lambda: run_console(good.replace("1..2\nok 1 x\n[ 1.0] noise\nok 2 y\n", "")).failed == 1),
        ("WARNING in console fails", lambda: run_console(good + "[ 2.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0\n").failed == 1),
        ("Oops in console fails", lambda: run_console(good + "Oops: general protection fault\n").failed >= 1),
        ("KASAN report fails", lambda: run_console(good + "BUG: KASAN: use-after-free in f\n").failed >= 1),
        ("lockdep report fails", lambda: run_console(good + "WARNING: possible circular locking dependency detected\n").failed >= 1),
        ("kmemleak report fails", lambda: run_console(good.replace("### uintr-guest-done", "### uintr-kmemleak-begin\nunreferenced object 0xffff\n### uintr-kmemleak-end\n### uintr-guest-done")).failed == 1),
        ("unfinished guest fails", lambda: run_console(good.replace("### uintr-guest-done\n", "")).failed == 1),
        ("bad qemu status fails", lambda: run_console(good, status=0).failed == 1),
        ("failing KUnit case fails", lambda: run_console(good.replace("    ok 1 a", "    not ok 1 a")).failed == 1),
    ]
    print("TAP version 13")
    print(f"1..{len(cases)}")
    bad = 0
    for n, (name, check) in enumerate(cases, 1):
        ok = bool(check())
        bad += not ok
        print(f"{'ok' if ok else 'not ok'} {n} {name}")
    return 1 if bad else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--tap", action="append")
    s.add_argument("--console", action="append")
    s.add_argument("--qemu-status", action="append", type=int)
    sub.add_parser("selftest")
    args = parser.parse_args()
    return summary(args) if args.cmd == "summary" else selftest()


if __name__ == "__main__":
    sys.exit(main())
