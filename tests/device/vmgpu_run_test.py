# SPDX-License-Identifier: MIT
"""Device-level tests of copies by run: translations read once per slice
of one command, never used after a table write that came before the
command; runs that stop at a fault and at compressed pages; fill
patterns; runs in small slices. vmgpu_device_test.py runs them."""
import re
import struct

from vmgpu_qtest import (
    GART_TABLE, HW, VRAM_BAR, addr, build_page_table, cmd_fill, cmd_transfer, enable_vm,
    expect_halt, map_gart, pattern_bytes)
from vmgpu_cache_test import run, words
from vmgpu_compress_test import compress, encode, own_device

PAGE = 0x1000
PAGES = 0xB00000        # system pages of these tests
ROOT = 0x1900000        # VM 1's four tables
VA = 0x40_0000_0000
DST = 0x380000          # VRAM the copies land in
SYSTEM = HW["VMGPU_SPACE_SYSTEM"] << HW["VMGPU_PTE_SPACE_SHIFT"]
LEAF = ROOT + 3 * PAGE  # build_page_table's last level


def page(n):
    return PAGES + n * PAGE


def leaf_entry(bus):
    return struct.pack("<Q", bus | HW["VMGPU_PTE_VALID"] | HW["VMGPU_PTE_WRITE"] | SYSTEM)


def map_pages(dev, n):
    """VM 1 maps n system pages, page(0).., at VA, all in one window."""
    dev.setup()
    dev.qt.write(ROOT, bytes(4 * PAGE))
    build_page_table(dev.qt, ROOT, VA, [("SYSTEM", page(i)) for i in range(n)])
    enable_vm(dev, 1, ROOT)


REWRITTEN = 8   # pages the rewrite tests map; the last one's entry changes


def rewrite_last_entry(dev, seed):
    """VM 1 maps REWRITTEN pages of old data; page(20) holds new data and
    page(21) a leaf entry for it. Returns old, new and the command that
    copies that entry over the last page's (as the kernel's invalidations
    rewrite entries on the paging ring)."""
    old, new = pattern_bytes(seed, REWRITTEN * PAGE), pattern_bytes(seed + 1, PAGE)
    map_pages(dev, REWRITTEN)
    dev.qt.write(page(0), old)
    dev.qt.write(page(20), new)
    dev.qt.write(page(21), leaf_entry(page(20)))
    index = (VA >> 12) + REWRITTEN - 1 & 511
    return old, new, cmd_transfer(addr("SYSTEM", page(21)),
                                  addr("SYSTEM", LEAF + index * 8), 8)


def test_run_table_write_before_command_is_seen(qt, dev):
    # Three commands on the paging ring, in one slice: a copy through VM 1,
    # the rewrite of its last page's leaf entry, and the first copy again.
    # The third must use the new entry, although the first read the window
    # that held the old one.
    n = REWRITTEN
    old, new, rewrite = rewrite_last_entry(dev, 80)
    run(dev, cmd_transfer(addr("VIRTUAL", VA, 1), addr("VRAM", DST), n * PAGE), rewrite,
        cmd_transfer(addr("VIRTUAL", VA, 1), addr("VRAM", DST + n * PAGE), n * PAGE))
    assert qt.read(VRAM_BAR + DST, n * PAGE) == old, "first copy"
    assert qt.read(VRAM_BAR + DST + n * PAGE, n * PAGE) == old[:-PAGE] + new, \
        "a copy used a leaf entry rewritten before it started"


def test_run_resolve_sees_table_writes(qt, dev):
    # COMPRESS finds its pages through the same windows: after a command
    # rewrote the last page's leaf entry, COMPRESS of that page encodes the
    # new page and leaves the old one plain, although the COMPRESS before
    # it read the window that held the old entry.
    n = REWRITTEN
    old, new, rewrite = rewrite_last_entry(dev, 84)
    run(dev, compress("VIRTUAL", VA, (n - 1) * PAGE, 1), rewrite,
        compress("VIRTUAL", VA + (n - 1) * PAGE, PAGE, 1))
    assert qt.read(page(n - 1), PAGE) == old[-PAGE:], "the old page was compressed"
    assert qt.read(page(20), PAGE) == encode(new), "the new page was not compressed"


def test_run_stops_at_a_fault(qt, dev):
    # Pages 0-2 mapped, page 3 not: a 6-page copy writes pages 0-2 whole,
    # nothing of page 3 or after, and the error names page 3's address.
    data = pattern_bytes(82, 6 * PAGE)
    map_pages(dev, 3)
    qt.write(page(0), data[:3 * PAGE])
    qt.write(VRAM_BAR + DST, bytes(6 * PAGE))
    expect_halt(dev, "VMGPU_ERR_VM_FAULT",
                cmd_transfer(addr("VIRTUAL", VA, 1), addr("VRAM", DST), 6 * PAGE))
    assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") == (VA + 3 * PAGE) & 0xFFFFFFFF
    assert qt.read(VRAM_BAR + DST, 6 * PAGE) == data[:3 * PAGE] + bytes(3 * PAGE)


def test_run_through_the_gart(qt, dev):
    # Aperture pages out of order (runs split where the bus pages are not
    # contiguous) are read in aperture order; a FILL stops at the invalid
    # entry with the pages before it written and the one after untouched.
    order = [3, 4, 0, 1, 7]
    data = pattern_bytes(86, 8 * PAGE)
    dev.setup()
    qt.write(page(0), data)
    map_gart(qt, dev, [page(n) for n in order])
    run(dev, cmd_transfer(addr("GART", 0), addr("VRAM", DST), len(order) * PAGE))
    assert qt.read(VRAM_BAR + DST, len(order) * PAGE) == \
        b"".join(data[n * PAGE:(n + 1) * PAGE] for n in order)
    qt.write(page(0), bytes(8 * PAGE))
    map_gart(qt, dev, [page(0), page(1), page(2)])
    qt.write(GART_TABLE + 2 * 8, bytes(8))
    expect_halt(dev, "VMGPU_ERR_GART_FAULT",
                cmd_fill(addr("GART", 0), 3 * PAGE, 0x11223344))
    assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") == 2 * PAGE
    assert qt.read(page(0), 3 * PAGE) == words(0x11223344, 2 * PAGE) + bytes(PAGE)


def traced_runs(oqt):
    """(space, addr, len, write) of every run the device traced so far."""
    runs = []
    for line in oqt.guest_log().splitlines():
        m = re.search(r"vmgpu_run space (\d+) addr (0x[0-9a-f]+) len (0x[0-9a-f]+) "
                      r"write (\d)", line)
        if m:
            runs.append(tuple(int(v, 0) for v in m.groups()))
    return runs


def test_run_path_is_taken(qt, dev):
    # Traced: 16 contiguous system pages through VM 1 to VRAM are one run
    # on each side, one memmove (a budget that lets runs be longer than
    # the shared device's 4 KiB slices). With two of the pages compressed,
    # the run stops before them, and the slice goes on a page at a time.
    data = pattern_bytes(88, 16 * PAGE)
    space = {name: HW[f"VMGPU_SPACE_{name}"] for name in ("SYSTEM", "VRAM")}
    with own_device(qt, ",copy-budget=1M", pre_args=("-trace", "vmgpu_run")) as (oqt, odev):
        map_pages(odev, 16)
        oqt.write(page(0), data)
        copy = cmd_transfer(addr("VIRTUAL", VA, 1), addr("VRAM", DST), 16 * PAGE)
        run(odev, copy)
        assert oqt.read(VRAM_BAR + DST, 16 * PAGE) == data
        assert traced_runs(oqt) == [(space["SYSTEM"], page(0), 16 * PAGE, 0),
                                    (space["VRAM"], DST, 16 * PAGE, 1)], traced_runs(oqt)
        before = len(traced_runs(oqt))
        oqt.write(VRAM_BAR + DST, bytes(16 * PAGE))
        run(odev, compress("SYSTEM", page(5), 2 * PAGE), copy)
        runs = traced_runs(oqt)[before:]
        assert runs == [(space["SYSTEM"], page(0), 5 * PAGE, 0),
                        (space["VRAM"], DST, 5 * PAGE, 1)], runs
        # VM 1's ASID, 0, owns the pages: it reads them decoded.
        assert oqt.read(VRAM_BAR + DST, 16 * PAGE) == data


BOCHS_BAR = 0xE0000000


def test_run_never_maps_a_peers_memory(qt, dev):
    # Traced: a FILL into another device's RAM BAR (bochs-display's
    # framebuffer) is written a page at a time, never mapped as a run for
    # the copy thread, whose target its owner may free meanwhile; into
    # guest RAM the same FILL is one run.
    size = 32 * PAGE
    with own_device(qt, ",copy-budget=1M",
                    pre_args=("-device", "bochs-display", "-trace", "vmgpu_run")) as (oqt, odev):
        bochs = next(d for d in range(32) if oqt.cfg_read(d, 0) == 0x11111234)
        oqt.cfg_write(bochs, 0x10, BOCHS_BAR)
        oqt.cfg_write(bochs, 0x04, 0x2)
        oqt.write(BOCHS_BAR, bytes(size))
        run(odev, cmd_fill(addr("SYSTEM", BOCHS_BAR), size, 0x2468ACE0),
            cmd_fill(addr("SYSTEM", page(0)), size, 0x2468ACE0))
        assert oqt.read(BOCHS_BAR, size) == words(0x2468ACE0, size), "peer memory not filled"
        assert oqt.read(page(0), size) == words(0x2468ACE0, size)
        runs = traced_runs(oqt)
        assert (HW["VMGPU_SPACE_SYSTEM"], page(0), size, 1) in runs, runs
        assert not [r for r in runs if r[1] == BOCHS_BAR], runs


def test_run_meets_compressed_pages(qt, dev):
    # A FILL through VM 1 over four pages, the middle two compressed: those
    # are stored encoded, the others plain.
    map_pages(dev, 4)
    qt.write(page(0), bytes(4 * PAGE))
    run(dev, compress("SYSTEM", page(1), 2 * PAGE))
    run(dev, cmd_fill(addr("VIRTUAL", VA, 1), 4 * PAGE, 0x13572468))
    plain = words(0x13572468)
    assert qt.read(page(0), 4 * PAGE) == plain + encode(plain) * 2 + plain


def test_run_fill_patterns(qt, dev):
    # Runs fill whole pages with a byte pattern (memset) or a word pattern,
    # from an offset inside a page and across pages of VRAM and memory.
    map_pages(dev, 4)
    qt.write(page(0), b"\xee" * 4 * PAGE)
    qt.write(VRAM_BAR + DST, b"\xee" * 3 * PAGE)
    run(dev, cmd_fill(addr("VIRTUAL", VA + 0x104, 1), 3 * PAGE, 0x5A5A5A5A),
        cmd_fill(addr("VRAM", DST + 8), 2 * PAGE + 12, 0x01020304))
    got = qt.read(page(0), 4 * PAGE)
    assert got == b"\xee" * 0x104 + b"\x5a" * 3 * PAGE + b"\xee" * (PAGE - 0x104)
    got = qt.read(VRAM_BAR + DST, 3 * PAGE)
    assert got == b"\xee" * 8 + words(0x01020304, 2 * PAGE + 12) + b"\xee" * (PAGE - 20)


def test_run_slices_keep_the_budget(qt, dev):
    # 512 KiB (two windows of entries) in 4 KiB slices through VM 1 lands
    # whole.
    n = 128
    with own_device(qt, ",copy-budget=4K") as (oqt, odev):
        data = pattern_bytes(83, n * PAGE)
        map_pages(odev, n)
        oqt.write(page(0), data)
        run(odev, cmd_transfer(addr("VIRTUAL", VA, 1), addr("VRAM", DST), n * PAGE))
        assert oqt.read(VRAM_BAR + DST, n * PAGE) == data


TESTS = [
    test_run_table_write_before_command_is_seen, test_run_resolve_sees_table_writes,
    test_run_stops_at_a_fault, test_run_through_the_gart, test_run_path_is_taken,
    test_run_never_maps_a_peers_memory, test_run_meets_compressed_pages, test_run_fill_patterns, test_run_slices_keep_the_budget,
]
