# SPDX-License-Identifier: MIT
"""Device-level tests of contract v1.2: the non-coherent mode, its
write-back cache and CACHE_FLUSH. vmgpu_device_test.py runs them.

Each test that needs the mode starts its own QEMU with noncoherent=on (a
fresh, empty cache) and the small slices of DEVICE_ARGS; the others use
the shared device, which has no noncoherent property.
"""
import contextlib
import struct

from vmgpu_qtest import (
    DEVICE_ARGS, FENCE, GART_TABLE, HW, NO_ADDR, RING, VRAM_BAR, Device, QTest,
    ack_errors, addr, build_page_table, cmd_fence, cmd_fill, cmd_range, cmd_transfer,
    cmd_wait, enable_vm, expect_halt, map_gart, pattern_bytes, run_qemu, system_reset, u64)
from vmgpu_user_ring_test import UserRing, expect_user_halt

WB = HW["VMGPU_CACHE_FLAG_WRITEBACK"]
INV = HW["VMGPU_CACHE_FLAG_INVALIDATE"]
COHERENT = HW["VMGPU_CACHE_MODE_COHERENT"]
NONCOHERENT = HW["VMGPU_CACHE_MODE_NONCOHERENT"]
PAGE = 0x1000
# System pages of these tests, clear of the harness's rings, tables and DATA.
PAGES = 0x700000
PT_ROOT = 0x800000
ROM_PAGE = 0xFFFFF000   # BIOS: DMA reads work, DMA writes fail


def page(n):
    return PAGES + n * PAGE


def cmd_flush(flags, a=NO_ADDR, size=0):
    return cmd_range("CACHE_FLUSH", a, size, flags)


def flush_range(flags, bus, size):
    return cmd_flush(flags, addr("SYSTEM", bus), size)


@contextlib.contextmanager
def nc_device(qt, extra=""):
    """A second QEMU whose vmgpu has noncoherent=on, in NONCOHERENT mode."""
    nqt = QTest(qt.qemu, DEVICE_ARGS + ",noncoherent=on" + extra)
    try:
        ndev = Device(nqt)
        set_mode(ndev, NONCOHERENT)
        yield nqt, ndev
    finally:
        nqt.close()


def set_mode(dev, mode):
    dev.reg_write("VMGPU_REG_CACHE_MODE", mode)
    assert dev.reg("VMGPU_REG_CACHE_MODE") == mode


def run(dev, *cmds):
    """Run cmds on the paging ring; they must all succeed."""
    dev.submit(*cmds)
    status = dev.wait_idle()
    assert not status & HW["VMGPU_RING_STATUS_HALTED"], \
        f"ring halted with error {dev.reg('VMGPU_REG_ERROR_CODE')}"
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]


def words(pattern, size=PAGE):
    return struct.pack("<I", pattern) * (size // 4)


def device_reads(dev, bus, vram, size=PAGE):
    """What the device's data path reads at bus: a TRANSFER to VRAM."""
    dev.qt.write(VRAM_BAR + vram, bytes(size))
    run(dev, cmd_transfer(addr("SYSTEM", bus), addr("VRAM", vram), size))
    return dev.qt.read(VRAM_BAR + vram, size)


def halt_and_resume(dev, cmd):
    """Run cmd, which must halt the paging ring; return (code, address) of
    the error and resume past it."""
    ack_errors(dev)
    slot = dev.tail
    dev.submit(cmd, cmd_fence(addr("SYSTEM", FENCE), 0x99))
    status = dev.wait_idle()
    assert status & HW["VMGPU_RING_STATUS_HALTED"], "ring did not halt"
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == slot
    error = (dev.reg("VMGPU_REG_ERROR_CODE"),
             dev.reg("VMGPU_REG_ERROR_ADDR_LO") | dev.reg("VMGPU_REG_ERROR_ADDR_HI") << 32)
    dev.ring_reg_write("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"] |
                       HW["VMGPU_RING_CTRL_RESUME"])
    dev.wait_idle()
    assert u64(dev.qt.read(FENCE, 8)) == 0x99, "the command after it did not run"
    dev.qt.write(FENCE, bytes(8))
    ack_errors(dev)
    return error


def expect_register_error(qt, dev, val):
    ack_errors(dev)
    count = dev.reg("VMGPU_REG_ERROR_COUNT")
    before = qt.guest_log().count("register 0x80 ignored")
    dev.reg_write("VMGPU_REG_CACHE_MODE", val)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"], f"{val:#x} accepted"
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == HW["VMGPU_REG_CACHE_MODE"]
    assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") == val
    assert dev.reg("VMGPU_REG_ERROR_COUNT") == count + 1
    assert qt.guest_log().count("register 0x80 ignored") == before + 1, "not logged"
    ack_errors(dev)


def test_cache_mode_without_property(qt, dev):
    assert not dev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_NONCOHERENT"]
    assert dev.reg("VMGPU_REG_CACHE_MODE") == COHERENT
    for bad in (NONCOHERENT, 2, 0xFFFFFFFF):
        expect_register_error(qt, dev, bad)
        assert dev.reg("VMGPU_REG_CACHE_MODE") == COHERENT
    set_mode(dev, COHERENT)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]


def test_cache_mode_with_property(qt, dev):
    with nc_device(qt) as (nqt, ndev):
        assert ndev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_NONCOHERENT"]
        ndev.setup()
        assert ndev.reg("VMGPU_REG_CACHE_MODE") == COHERENT, "not coherent after RESET"
        set_mode(ndev, NONCOHERENT)
        assert ndev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]
        for bad in (2, 3, 0x80000001):
            expect_register_error(nqt, ndev, bad)
            assert ndev.reg("VMGPU_REG_CACHE_MODE") == NONCOHERENT, f"{bad:#x} changed it"
        set_mode(ndev, COHERENT)
        expect_register_error(nqt, ndev, 2)
        assert ndev.reg("VMGPU_REG_CACHE_MODE") == COHERENT


def test_cache_coherent_mode_unaffected(qt, dev):
    # With the property but in COHERENT mode, and on a device without it,
    # device writes and CPU writes are seen at once, and CACHE_FLUSH is
    # accepted and does nothing.
    with nc_device(qt) as (nqt, ndev):
        set_mode(ndev, COHERENT)
        for q, d in ((nqt, ndev), (qt, dev)):
            q.write(page(0), words(0x11111111))
            assert device_reads(d, page(0), 0x300000) == words(0x11111111)
            q.write(page(0), words(0x22222222))
            assert device_reads(d, page(0), 0x300000) == words(0x22222222), "stale read"
            run(d, cmd_fill(addr("SYSTEM", page(0)), PAGE, 0x33333333))
            assert q.read(page(0), PAGE) == words(0x33333333), "device write not seen"
            run(d, cmd_flush(WB | INV), cmd_flush(INV), flush_range(WB, page(0), 1))
            assert q.read(page(0), PAGE) == words(0x33333333)


def test_cache_stale_read_until_invalidate(qt, dev):
    with nc_device(qt) as (nqt, ndev):
        old, new = pattern_bytes(1, PAGE), pattern_bytes(2, PAGE)
        nqt.write(page(1), old)
        assert device_reads(ndev, page(1), 0x300000) == old
        nqt.write(page(1), new)
        assert device_reads(ndev, page(1), 0x301000) == old, "CPU write seen without INVALIDATE"
        # A range on the next page, or a WRITEBACK, leaves the line alone.
        run(ndev, flush_range(INV, page(2), PAGE), flush_range(WB, page(1), PAGE))
        assert device_reads(ndev, page(1), 0x302000) == old
        # Page granularity: 8 bytes in the middle of the page drop its line.
        run(ndev, flush_range(INV, page(1) + 0x800, 8))
        assert device_reads(ndev, page(1), 0x303000) == new, "INVALIDATE did not drop the line"
        assert nqt.read(page(1), PAGE) == new


def test_cache_write_visible_after_writeback(qt, dev):
    with nc_device(qt) as (nqt, ndev):
        old = pattern_bytes(3, 2 * PAGE)
        nqt.write(page(3), old)
        run(ndev, cmd_fill(addr("SYSTEM", page(3) + 0x100), 2 * PAGE - 0x200, 0x0D0D0D0D),
            cmd_fence(addr("SYSTEM", FENCE), 0x31))
        # The FENCE is coherent, the FILL is not.
        assert u64(nqt.read(FENCE, 8)) == 0x31, "FENCE went through the cache"
        assert nqt.read(page(3), 2 * PAGE) == old, "FILL reached memory without WRITEBACK"
        # The device reads its own writes.
        fill = old[:0x100] + words(0x0D0D0D0D, 2 * PAGE - 0x200) + old[-0x100:]
        assert device_reads(ndev, page(3), 0x300000, 2 * PAGE) == fill
        run(ndev, flush_range(WB, page(3) + PAGE - 4, 4))
        assert nqt.read(page(3), PAGE) == fill[:PAGE], "WRITEBACK did not write the line"
        assert nqt.read(page(4), PAGE) == old[PAGE:], "WRITEBACK wrote a line outside the range"
        run(ndev, flush_range(WB, page(4), PAGE))
        assert nqt.read(page(3), 2 * PAGE) == fill
        # Written back lines stay, clean: a CPU write is not seen, and a
        # second WRITEBACK does not write them again.
        nqt.write(page(3), bytes(PAGE))
        assert device_reads(ndev, page(3), 0x302000) == fill[:PAGE], "line dropped by WRITEBACK"
        run(ndev, flush_range(WB, page(3), PAGE))
        assert nqt.read(page(3), PAGE) == bytes(PAGE), "a clean line was written back"
        # TRANSFER system to system: both sides cached.
        run(ndev, cmd_transfer(addr("SYSTEM", page(4)), addr("SYSTEM", page(5)), PAGE))
        assert nqt.read(page(5), PAGE) != fill[PAGE:]
        run(ndev, flush_range(WB, page(5), PAGE))
        assert nqt.read(page(5), PAGE) == fill[PAGE:]


def test_cache_invalidate_loses_dirty_write(qt, dev):
    with nc_device(qt) as (nqt, ndev):
        old = pattern_bytes(4, PAGE)
        nqt.write(page(6), old)
        run(ndev, cmd_fill(addr("SYSTEM", page(6)), PAGE, 0x10571057),
            flush_range(INV, page(6), PAGE))
        assert nqt.read(page(6), PAGE) == old, "INVALIDATE wrote the dirty line back"
        assert device_reads(ndev, page(6), 0x300000) == old, "the dirty line survived"
        run(ndev, cmd_flush(WB))
        assert nqt.read(page(6), PAGE) == old
        # WRITEBACK | INVALIDATE: written back, then dropped.
        run(ndev, cmd_fill(addr("SYSTEM", page(6)), PAGE, 0xB07B07B0),
            flush_range(WB | INV, page(6), PAGE))
        assert nqt.read(page(6), PAGE) == words(0xB07B07B0)
        nqt.write(page(6), old)
        assert device_reads(ndev, page(6), 0x301000) == old, "WB | INV kept the line"


def test_cache_whole_flush(qt, dev):
    with nc_device(qt) as (nqt, ndev):
        far = [page(7), page(7) + 0x300000, 0x3F00000]
        for n, bus in enumerate(far):
            nqt.write(bus, bytes(PAGE))
            run(ndev, cmd_fill(addr("SYSTEM", bus), PAGE, 0xF00 + n))
        for bus in far:
            assert nqt.read(bus, PAGE) == bytes(PAGE)
        run(ndev, cmd_flush(WB))
        for n, bus in enumerate(far):
            assert nqt.read(bus, PAGE) == words(0xF00 + n), f"{bus:#x} not written back"
        for bus in far:
            nqt.write(bus, words(0xCAFE))
        assert device_reads(ndev, far[1], 0x300000) == words(0xF01)
        run(ndev, cmd_flush(INV))
        for n, bus in enumerate(far):
            assert device_reads(ndev, bus, 0x300000 + n * PAGE) == words(0xCAFE)
        # More dirty lines than one 4 KiB slice writes back: the FENCE after
        # the flush runs once all of them are in memory.
        run(ndev, cmd_fill(addr("SYSTEM", page(8)), 8 * PAGE, 0x5EC5EC),
            cmd_flush(WB | INV), cmd_fence(addr("SYSTEM", FENCE), 0x77))
        assert u64(nqt.read(FENCE, 8)) == 0x77
        assert nqt.read(page(8), 8 * PAGE) == words(0x5EC5EC, 8 * PAGE)


def test_cache_keyed_by_bus_address(qt, dev):
    # GART and VIRTUAL accesses that end in system memory are cached under
    # the page's bus address; the GART and page-table walks themselves, the
    # WAIT and the ring fetches bypass the cache.
    with nc_device(qt) as (nqt, ndev):
        gpage, vpage = page(20), page(21)
        map_gart(nqt, ndev, [gpage])
        nqt.write(gpage, bytes(PAGE))
        run(ndev, cmd_fill(addr("GART", 0), PAGE, 0x6A6A6A6A))
        assert nqt.read(gpage, PAGE) == bytes(PAGE), "GART write reached memory"
        assert device_reads(ndev, gpage, 0x300000) == words(0x6A6A6A6A)
        run(ndev, flush_range(WB, gpage, PAGE))
        assert nqt.read(gpage, PAGE) == words(0x6A6A6A6A)

        va = 0x40_0000_0000
        build_page_table(nqt, PT_ROOT, va, [("SYSTEM", vpage), ("VRAM", 0x310000)])
        enable_vm(ndev, 0, PT_ROOT)
        nqt.write(vpage, bytes(PAGE))
        run(ndev, cmd_fill(addr("VIRTUAL", va), 2 * PAGE, 0x7B7B7B7B))
        assert nqt.read(vpage, PAGE) == bytes(PAGE), "VIRTUAL write reached memory"
        assert nqt.readl(VRAM_BAR + 0x310000) == 0x7B7B7B7B, "VRAM went through the cache"
        run(ndev, flush_range(WB | INV, vpage, PAGE))
        assert nqt.read(vpage, PAGE) == words(0x7B7B7B7B)

        # Cache the page-table page and the GART table page, then change
        # entries from the CPU: the walks read memory, not the lines.
        device_reads(ndev, PT_ROOT + 0x3000, 0x300000)
        device_reads(ndev, GART_TABLE, 0x301000)
        other = page(22)
        nqt.write(other, bytes(2 * PAGE))
        build_page_table(nqt, PT_ROOT, va, [("SYSTEM", other)])
        nqt.write(GART_TABLE, struct.pack("<Q", (other + PAGE) | HW["VMGPU_GART_PTE_VALID"]))
        run(ndev, cmd_fill(addr("VIRTUAL", va), PAGE, 0x1), cmd_fill(addr("GART", 0), PAGE, 0x2),
            cmd_flush(WB))
        assert nqt.readl(other) == 0x1, "the page-table walk used a cached line"
        assert nqt.readl(other + PAGE) == 0x2, "the GART walk used a cached line"

        # WAIT reads memory: a cached line of its page does not hide a CPU write.
        wpage = page(23)
        nqt.write(wpage, bytes(PAGE))
        device_reads(ndev, wpage, 0x302000)
        nqt.writeq(wpage, 5)
        run(ndev, cmd_wait(addr("SYSTEM", wpage), 5), cmd_fence(addr("SYSTEM", FENCE), 0x55))
        assert u64(nqt.read(FENCE, 8)) == 0x55

        # Ring fetches read memory: cache the ring's page, then queue more.
        device_reads(ndev, RING, 0x303000)
        run(ndev, cmd_fence(addr("SYSTEM", FENCE), 0x56))
        assert u64(nqt.read(FENCE, 8)) == 0x56


def test_cache_eviction_writes_back_lru(qt, dev):
    with nc_device(qt, ",cache-lines=2") as (nqt, ndev):
        a, b, c, d = page(30), page(31), page(32), page(33)
        for bus in (a, b, c, d):
            nqt.write(bus, bytes(PAGE))
        run(ndev, cmd_fill(addr("SYSTEM", a), PAGE, 0xA), cmd_fill(addr("SYSTEM", b), PAGE, 0xB))
        assert nqt.readl(a) == 0 and nqt.readl(b) == 0
        # A read hit makes a the most recently used: c evicts b, not a.
        assert device_reads(ndev, a, 0x300000) == words(0xA)
        run(ndev, cmd_fill(addr("SYSTEM", c), PAGE, 0xC))
        assert nqt.read(b, PAGE) == words(0xB), "the LRU dirty line was not written back"
        assert nqt.readl(a) == 0, "the most recently used line was evicted"
        assert nqt.readl(c) == 0
        # d evicts a (now the LRU), and a read of b (a miss) evicts c.
        run(ndev, cmd_fill(addr("SYSTEM", d), PAGE, 0xD))
        assert nqt.read(a, PAGE) == words(0xA)
        assert nqt.readl(c) == 0
        assert device_reads(ndev, b, 0x301000) == words(0xB)
        assert nqt.read(c, PAGE) == words(0xC)
        assert nqt.readl(d) == 0
        # A clean line is dropped unwritten: the CPU's write to b stays.
        nqt.write(b, words(0xBB))
        run(ndev, cmd_fill(addr("SYSTEM", a), 4, 0xAA), cmd_fill(addr("SYSTEM", c), 4, 0xCC))
        assert nqt.read(b, PAGE) == words(0xBB), "a clean line was written back on eviction"
        assert nqt.read(d, PAGE) == words(0xD)


def test_cache_reset_drops_unwritten(qt, dev):
    with nc_device(qt) as (nqt, ndev):
        p = page(40)
        old = pattern_bytes(40, PAGE)
        for how in ("mode", "RESET", "system reset"):
            nqt.write(p, old)
            run(ndev, cmd_fill(addr("SYSTEM", p), PAGE, 0xDEADDEAD))
            if how == "mode":
                set_mode(ndev, COHERENT)
            elif how == "RESET":
                ndev.reg_write("VMGPU_REG_RESET", HW["VMGPU_RESET_VALUE"])
            else:
                system_reset(ndev)
                ndev.assign_bars()
            assert ndev.reg("VMGPU_REG_CACHE_MODE") == COHERENT, f"{how}: not COHERENT"
            assert nqt.read(p, PAGE) == old, f"{how}: the dirty line was written back"
            if how != "mode":
                ndev.setup()
            set_mode(ndev, NONCOHERENT)
            run(ndev, cmd_flush(WB))
            assert nqt.read(p, PAGE) == old, f"{how}: the dirty line survived"
            assert device_reads(ndev, p, 0x300000) == old, f"{how}: a line survived"
            run(ndev, cmd_flush(INV))


def test_cache_vram_not_cached(qt, dev):
    with nc_device(qt) as (nqt, ndev):
        run(ndev, cmd_fill(addr("VRAM", 0x320000), PAGE, 0x7777AAAA))
        assert nqt.read(VRAM_BAR + 0x320000, PAGE) == words(0x7777AAAA), "VRAM write cached"
        for n, val in enumerate((0x1111, 0x2222)):
            nqt.write(VRAM_BAR + 0x320000, words(val))
            run(ndev, cmd_transfer(addr("VRAM", 0x320000), addr("VRAM", 0x330000 + n * PAGE),
                                   PAGE))
            assert nqt.read(VRAM_BAR + 0x330000 + n * PAGE, PAGE) == words(val), \
                "VRAM read cached"


def test_cache_flush_bad_fields(qt, dev):
    bad = [
        cmd_flush(0), cmd_flush(1 << 2), cmd_flush(WB | 1 << 2), cmd_flush(INV | 0x8000),
        cmd_flush(WB, addr("VRAM", PAGE)), cmd_flush(WB, addr("SYSTEM", 0)),
        cmd_flush(INV, addr("VIRTUAL", 0, 1)),
        cmd_flush(WB, addr("VRAM", 0), PAGE), cmd_flush(WB, addr("GART", 0), PAGE),
        cmd_flush(WB, addr("VIRTUAL", 0, 0), PAGE), cmd_flush(WB, addr("VIRTUAL", 0, 1), PAGE),
        cmd_flush(WB, addr("SYSTEM", page(0), 1), PAGE),
        cmd_flush(WB, struct.pack("<QII", 0, 7, 0), 1),
        cmd_flush(WB)[:60] + b"\x01\x00\x00\x00",
    ]
    with nc_device(qt) as (nqt, ndev):
        for cmd in bad:
            expect_halt(ndev, "VMGPU_ERR_BAD_FIELD", cmd)
        expect_halt(ndev, "VMGPU_ERR_RANGE", flush_range(WB, 0xFFFF_FFFF_FFFF_F000, 0x2000))
        # A rejected flush does nothing: the dirty line is still there.
        nqt.write(page(50), bytes(PAGE))
        run(ndev, cmd_fill(addr("SYSTEM", page(50)), PAGE, 0x50))
        expect_halt(ndev, "VMGPU_ERR_BAD_FIELD", cmd_flush(INV | 1 << 3))
        run(ndev, cmd_flush(WB))
        assert nqt.read(page(50), PAGE) == words(0x50)
    # The fields are checked in COHERENT mode too.
    for cmd in bad[:3] + bad[7:9]:
        expect_halt(dev, "VMGPU_ERR_BAD_FIELD", cmd)


def test_cache_writeback_fault(qt, dev):
    # The BIOS page reads but does not take DMA writes: a line of it fills
    # and takes the device's write, and its write back fails.
    with nc_device(qt) as (nqt, ndev):
        rom = nqt.read(ROM_PAGE, PAGE)
        run(ndev, cmd_fill(addr("SYSTEM", ROM_PAGE + 0x10), 8, 0xBAD0BAD0))
        assert halt_and_resume(ndev, cmd_flush(WB)) == (HW["VMGPU_ERR_DMA"], ROM_PAGE), \
            "failed write back not reported"
        assert nqt.read(ROM_PAGE, PAGE) == rom
        # The line stayed dirty: WRITEBACK fails again until INVALIDATE.
        assert halt_and_resume(ndev, cmd_flush(WB | INV)) == (HW["VMGPU_ERR_DMA"], ROM_PAGE)
        run(ndev, cmd_flush(INV, addr("SYSTEM", ROM_PAGE), 1), cmd_flush(WB))
    # A dirty line that cannot be written back fails the access that evicts
    # it, and is dropped: the same access works when submitted again.
    with nc_device(qt, ",cache-lines=1") as (nqt, ndev):
        run(ndev, cmd_fill(addr("SYSTEM", ROM_PAGE), 4, 0xBAD1))
        nqt.write(page(60), bytes(PAGE))
        assert halt_and_resume(ndev, cmd_fill(addr("SYSTEM", page(60)), PAGE, 0x60)) == \
            (HW["VMGPU_ERR_DMA"], ROM_PAGE), "failed eviction not reported"
        assert nqt.read(page(60), PAGE) == bytes(PAGE)
        run(ndev, cmd_fill(addr("SYSTEM", page(60)), PAGE, 0x60), cmd_flush(WB))
        assert nqt.read(page(60), PAGE) == words(0x60)


def test_cache_flush_on_user_ring(qt, dev):
    # CACHE_FLUSH of the whole cache runs on any ring; a range names system
    # memory, which no user ring may; nor may it drop dirty lines unwritten.
    with nc_device(qt) as (nqt, ndev):
        nqt.write(page(70), bytes(PAGE))
        run(ndev, cmd_fill(addr("SYSTEM", page(70)), PAGE, 0x70))
        for mode in ("VIRTUAL", "PHYSICAL"):
            ur = UserRing(ndev, 1, mode)
            try:
                ur.submit(cmd_flush(WB), ur.fence(0x71))
                ur.wait_fence(0x71, f"{mode}: CACHE_FLUSH on a user ring")
                assert nqt.read(page(70), PAGE) == words(0x70)
                expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE", flush_range(WB, page(70), PAGE))
                # The kernel's clear of a page, still in the cache.
                nqt.write(page(72), words(0x5EC2E7))
                run(ndev, cmd_fill(addr("SYSTEM", page(72)), PAGE, 0))
                expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE", cmd_flush(INV))
                run(ndev, cmd_flush(WB))
                assert nqt.read(page(72), PAGE) == bytes(PAGE), "the clear was dropped"
                # The negative: written back first, the lines may go.
                ur.submit(cmd_flush(WB | INV), ur.fence(0x72))
                ur.wait_fence(0x72, f"{mode}: CACHE_FLUSH WRITEBACK | INVALIDATE")
            finally:
                ur.stop()
                ack_errors(ndev)


def test_cache_coherent_fill_keeps_cpu_writes(qt, dev):
    """FILL_FLAG_COHERENT (v1.4) leaves no line whose write back could
    revert what the CPU wrote to the rest of the page: how the paging ring
    invalidates entries of page tables the CPU writes too."""
    coherent = HW["VMGPU_FILL_FLAG_COHERENT"]
    with nc_device(qt) as (nqt, ndev):
        for flags, reverted in ((0, True), (coherent, False)):
            nqt.write(page(80), words(0x11111111))
            run(ndev, cmd_fill(addr("SYSTEM", page(80)), 16, 0, flags))
            # Straight to memory, or into a line.
            assert nqt.read(page(80), 16) == (bytes(16) if flags else words(0x11111111, 16))
            nqt.writel(page(80) + 0x100, 0x22222222)
            run(ndev, cmd_flush(WB | INV))
            cpu = nqt.readl(page(80) + 0x100)
            assert (cpu == 0x11111111) == reverted, \
                f"flags {flags}: the CPU's write reads {cpu:#x} after the flush"
            assert nqt.read(page(80), 16) == bytes(16)
        # A dirty line of the page is written back first, then dropped.
        nqt.write(page(81), words(0x33333333))
        run(ndev, cmd_fill(addr("SYSTEM", page(81) + 0x200), 4, 0x44444444))
        run(ndev, cmd_fill(addr("SYSTEM", page(81)), 8, 0, coherent))
        assert nqt.readl(page(81) + 0x200) == 0x44444444, "the dirty line was lost"
        nqt.writel(page(81) + 0x300, 0x55555555)
        run(ndev, cmd_flush(WB | INV))
        assert nqt.readl(page(81) + 0x300) == 0x55555555, "a line of the page stayed"
        # Ring 0 only; no other FILL flag.
        code, _ = halt_and_resume(ndev, cmd_fill(addr("SYSTEM", page(81)), 4, 0, 2))
        assert code == HW["VMGPU_ERR_BAD_FIELD"], code
        ur = UserRing(ndev, 3, "PHYSICAL")
        try:
            expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE",
                             cmd_fill(addr("VRAM", 0), 4, 0, coherent))
        finally:
            ur.stop()
            ack_errors(ndev)


def test_cache_lines_validated(qt, dev):
    for lines in ("0", "65537"):
        proc = run_qemu(qt.qemu, f"vmgpu,noncoherent=on,cache-lines={lines}")
        assert proc.returncode == 1, f"cache-lines={lines}: QEMU exited {proc.returncode}"
        assert "cache-lines must be" in proc.stderr, proc.stderr
    proc = run_qemu(qt.qemu, "vmgpu,noncoherent=on,cache-lines=65536")
    assert proc.returncode == 0, proc.stderr


TESTS = [
    test_cache_mode_without_property, test_cache_mode_with_property,
    test_cache_coherent_mode_unaffected, test_cache_stale_read_until_invalidate,
    test_cache_write_visible_after_writeback, test_cache_invalidate_loses_dirty_write,
    test_cache_whole_flush, test_cache_keyed_by_bus_address,
    test_cache_eviction_writes_back_lru, test_cache_reset_drops_unwritten,
    test_cache_vram_not_cached, test_cache_flush_bad_fields, test_cache_writeback_fault,
    test_cache_flush_on_user_ring, test_cache_coherent_fill_keeps_cpu_writes,
    test_cache_lines_validated,
]
