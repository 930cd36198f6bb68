#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn guest serial logs into test results and one closing line.

Each log is one boot of one device configuration. Inside a boot:
- a project test (kselftest harness) counts every top-level KTAP
  "ok N" / "not ok N" line; "# SKIP" marks a skip. A test program that
  exits non-zero without a "not ok" line, or never reaches its end
  marker, counts as one failure.
- an extra program counts as one test: exit 0 pass, 77 skip, else fail.
- the boot itself passes "guest-log-clean" only if the kernel printed no
  WARNING, BUG, Oops, DMAR fault, lockdep, KASAN or UBSAN report or hung
  task (DMA-API and debug-objects reports are WARNINGs), and
  "guest-finished" only if the guest reached its last line.
- a kernel with kmemleak (the debug kernel) also gets "kmemleak-clean":
  the guest must have scanned at the end and found nothing.
- the checkers boot (scripts/guest/run-checkers on the debug kernel)
  commits one deliberate bug per section; each must be caught, with a line
  the checks above would fail a boot for: "checkers/<bug>-caught".

Logs given with --host come from tests that run on the host (the device
tests over qtest): they have test markers but no guest kernel.

usage: report.py [--host LOG]... LOG...    (exit status 1 if anything failed)
"""
import os
import re
import sys

BEGIN = re.compile(r"^vmgpu-test: begin (\w+) (\S+)$")
END = re.compile(r"^vmgpu-test: end (\w+) (\S+) rc=(\d+)$")
KTAP = re.compile(r"^(not ok|ok) \d+ (.*?)(\s+#\s*(SKIP|skip).*)?$")
KERNEL_PREFIX = re.compile(r"^\[\s*\d+\.\d+\]\s?")
BAD_KERNEL = re.compile(
    r"(WARNING:|BUG:|Oops|DMAR: \[DMA|DMAR:.*[Ff]ault|possible circular locking|"
    r"possible recursive locking|INFO: task .* blocked|Kernel panic|"
    r"general protection fault|UBSAN:|KASAN:)")
KMEMLEAK_ON = re.compile(r"kmemleak: Kernel memory leak detector initialized")
KMEMLEAK_SCANNED = "vmgpu-guest: kmemleak scanned"
KMEMLEAK_LEAK = re.compile(r"^vmgpu-kmemleak: (unreferenced object .*)$")
# A console stall vmgpu-console-watch restarted (scripts/guest/init): not
# a failure, but worth seeing, outside the test that makes one on purpose.
CONSOLE_STALL = re.compile(r"^vmgpu-console-watch: \S+ stalled ")
CONSOLE_MOVING = re.compile(r"^vmgpu-console-watch: \S+ moving again ")
CONSOLE_TEST = "guest_console_test"
CHECKER_BEGIN = re.compile(r"^vmgpu-checker: begin (\S+)$")
CHECKER_END = re.compile(r"^vmgpu-checker: end (\S+)$")
# What each deliberate bug must produce, besides a BAD_KERNEL line.
CHECKERS = {
    "fence-alloc": re.compile(r"possible circular locking dependency"),
    "kasan": re.compile(r"BUG: KASAN: slab-use-after-free"),
    "dma-api": re.compile(r"DMA-API: .*free DMA memory it has not allocated"),
    "atomic-sleep": re.compile(r"BUG: (scheduling while atomic|sleeping function called)"),
}


class Report:
    def __init__(self):
        self.results = []  # (status, name, detail)
        self.notes = []

    def add(self, status, name, detail=""):
        self.results.append((status, name, detail))

    def count(self, status):
        return sum(1 for r in self.results if r[0] == status)


def parse_checkers(config, lines, report):
    """The checkers boot: every deliberate bug caught in its own section."""
    sections, name = {}, None
    for raw in lines:
        line = KERNEL_PREFIX.sub("", raw)
        m = CHECKER_BEGIN.match(line)
        if m:
            name = m.group(1)
            sections[name] = []
            continue
        if CHECKER_END.match(line):
            name = None
        elif name:
            sections[name].append((raw, line))
    for bug, pattern in CHECKERS.items():
        section = sections.get(bug, [])
        caught = any(pattern.search(line) for _, line in section) and any(
            KERNEL_PREFIX.match(raw) and BAD_KERNEL.search(line) for raw, line in section)
        report.add("pass" if caught else "fail", f"{config}/{bug}-caught",
                   "missing" if bug not in sections else "no report")
    leaked = any(KMEMLEAK_LEAK.match(line) for _, line in sections.get("kmemleak-scan", []))
    report.add("pass" if leaked else "fail", f"{config}/kmemleak-caught", "no report")


def parse_boot(path, report, guest=True):
    config = os.path.splitext(os.path.basename(path))[0]
    with open(path, errors="replace") as f:
        lines = [line.rstrip("\r\n") for line in f]
    if any(CHECKER_BEGIN.match(KERNEL_PREFIX.sub("", line)) for line in lines):
        parse_checkers(config, lines, report)
        report.add("pass" if "vmgpu-guest: done" in lines else "fail",
                   f"{config}/guest-finished")
        return

    current = None  # (kind, name, saw_not_ok, output)
    bad_kernel = []
    leaks = []
    kmemleak = scanned = False
    finished = False
    stalls = []
    restarts = 0
    for raw in lines:
        line = KERNEL_PREFIX.sub("", raw) if KERNEL_PREFIX.match(raw) else raw
        if KERNEL_PREFIX.match(raw) and BAD_KERNEL.search(line):
            bad_kernel.append(raw)
        if KERNEL_PREFIX.match(raw) and not (current and current[1] == CONSOLE_TEST):
            if CONSOLE_STALL.match(line):
                stalls.append(line)
            restarts += bool(CONSOLE_MOVING.match(line))
        kmemleak = kmemleak or bool(KMEMLEAK_ON.search(line))
        scanned = scanned or line == KMEMLEAK_SCANNED
        m = KMEMLEAK_LEAK.match(line)
        if m:
            leaks.append(m.group(1))
        if line == "vmgpu-guest: done":
            finished = True
        m = BEGIN.match(line)
        if m:
            current = [m.group(1), m.group(2), False]
            continue
        m = END.match(line)
        if m and current:
            kind, name, saw_not_ok = current
            rc = int(m.group(3))
            full = f"{config}/{name}"
            if kind == "extra":
                status = "pass" if rc == 0 else "skip" if rc == 77 else "fail"
                report.add(status, full, f"exit {rc}")
            elif rc not in (0, 4) and not saw_not_ok:
                report.add("fail", full, f"exited {rc} without a failing test line")
            current = None
            continue
        # Results come from the test program, never from the kernel log.
        if current and current[0] == "test" and not KERNEL_PREFIX.match(raw):
            m = KTAP.match(line)
            if m:
                name = f"{config}/{current[1]}/{m.group(2).strip()}"
                if m.group(1) == "not ok":
                    current[2] = True
                    report.add("fail", name)
                elif m.group(4):
                    report.add("skip", name)
                else:
                    report.add("pass", name)
    if current:
        report.add("fail", f"{config}/{current[1]}", "never finished (crash or timeout)")
    if stalls:
        report.notes.append(f"NOTE {config}: the console stalled {len(stalls)} time(s), "
                            f"moving again after {restarts} restart(s); the first: {stalls[0]}")
    if not guest:
        return
    report.add("pass" if finished else "fail", f"{config}/guest-finished")
    report.add("fail" if bad_kernel else "pass", f"{config}/guest-log-clean",
               "; ".join(bad_kernel[:3]))
    if kmemleak:
        detail = "; ".join(leaks[:3]) if scanned else "the guest never scanned"
        report.add("pass" if scanned and not leaks else "fail",
                   f"{config}/kmemleak-clean", detail)


def main(args):
    report = Report()
    while args:
        if args[0] == "--host":
            parse_boot(args[1], report, guest=False)
            args = args[2:]
        else:
            parse_boot(args[0], report)
            args = args[1:]
    for status, name, detail in report.results:
        tag = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP"}[status]
        print(f"{tag} {name}" + (f" ({detail})" if detail and status != "pass" else ""))
    for note in report.notes:
        print(note)
    line = f"{report.count('pass')} passed, {report.count('fail')} failed"
    if report.count("skip"):
        line += f", {report.count('skip')} skipped"
    print(line)
    return 1 if report.count("fail") or not report.results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
