#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""make bench's host side. `memcpy`: time the host's own memcpy and memset
of 64 MiB (the size the guest's moves use), best of 5, before the guest
boots; they are the physical limit of an emulated device's copies and
clears. `report LOG MEMCPY MEMSET`: the guest's bench and ratio lines, then
each move's bandwidth as a ratio to that host memcpy (a clear's to the
memset), measured in the same run."""
import ctypes
import re
import sys
import time

SIZE = 64 << 20
# The guest's figures that are copies the device does.
MOVES = ("evict_vram_to_system", "restore_system_to_vram",
         "copy_vram_to_system_physical")
CLEARS = ("clear_vram",)


def host_memcpy():
    src = bytearray(b"\xa5") * SIZE
    dst = bytearray(SIZE)
    view = memoryview(dst)
    best = None
    for _ in range(5):
        start = time.perf_counter()
        view[:] = src          # one C memcpy of the whole buffer
        t = time.perf_counter() - start
        best = t if best is None else min(best, t)
    return SIZE / (1 << 20) / best


def host_memset():
    buf = (ctypes.c_char * SIZE)()
    best = None
    for i in range(5):
        start = time.perf_counter()
        ctypes.memset(buf, i, SIZE)
        t = time.perf_counter() - start
        best = t if best is None else min(best, t)
    return SIZE / (1 << 20) / best


def report(log, host, host_set):
    lines = [l.rstrip("\n") for l in open(log, errors="replace")
             if l.startswith(("bench:", "ratio:"))]
    print("\n".join(lines))
    if not lines or any(l.startswith("bench: error") for l in lines):
        sys.exit("bench: the guest's benchmarks did not run through")
    print(f"bench: host_memcpy {host:.1f} MiB/s (64 MiB, on the host)")
    print(f"bench: host_memset {host_set:.1f} MiB/s (64 MiB, on the host)")
    for line in lines:
        m = re.match(r"bench: (\w+) ([\d.]+) MiB/s(?: \(first round ([\d.]+)\))?", line)
        if m and m.group(1) in CLEARS:
            print(f"ratio: {m.group(1)}_vs_host_memset {float(m.group(2)) / host_set:.3f}")
        if not m or m.group(1) not in MOVES:
            continue
        print(f"ratio: {m.group(1)}_vs_host_memcpy {float(m.group(2)) / host:.3f}")
        if m.group(3):
            print(f"ratio: {m.group(1)}_first_round_vs_host_memcpy "
                  f"{float(m.group(3)) / host:.3f}")
            print(f"ratio: {m.group(1)}_first_vs_steady "
                  f"{float(m.group(3)) / float(m.group(2)):.3f}")


if __name__ == "__main__":
    if sys.argv[1] == "memcpy":
        print(f"{host_memcpy():.1f} {host_memset():.1f}")
    else:
        report(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
