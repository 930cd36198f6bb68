#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Device-level tests of the vmgpu paging engine, without a guest driver.

QEMU runs with -accel qtest; this script plays the driver over the qtest
protocol: it assigns the BARs through PCI config space, builds rings, GART
tables and page tables in guest RAM, rings the doorbell and checks memory.
Output is KTAP between the markers scripts/report.py reads.

usage: vmgpu_device_test.py QEMU_BINARY
"""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from vmgpu_qtest import (  # noqa: E402
    DATA, DEVICE_ARGS, ECAM, FENCE, GART_TABLE, HAP_BAR, HW, MMIO, RING, RING_SHIFT,
    VRAM_BAR, VRAM_SIZE, Device, QTest, ack_errors, addr, build_page_table, cmd_fence,
    cmd_fill, cmd_nop, cmd_range, cmd_transfer, cmd_wait, enable_vm, expect_halt, map_gart,
    own_qemu, pattern_bytes, run_qemu, swizzle_offset, system_reset, u64)
import vmgpu_cache_test  # noqa: E402
import vmgpu_compress_test  # noqa: E402
import vmgpu_display_test  # noqa: E402
import vmgpu_run_test  # noqa: E402
import vmgpu_user_ring_test  # noqa: E402


# Tests: each takes (qt, dev) and raises AssertionError on failure.

def test_identification(qt, dev):
    assert dev.reg("VMGPU_REG_MAGIC") == HW["VMGPU_MAGIC"]
    assert dev.reg("VMGPU_REG_VERSION") == (1 << 16 | 12), "not contract v1.12"
    assert dev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_PAGING_ENGINE"]
    assert dev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_COMPRESSION"]
    assert dev.reg("VMGPU_REG_VRAM_SIZE_LO") == VRAM_SIZE
    assert dev.reg("VMGPU_REG_NUM_SEGMENTS") == 2


def test_fill_vram(qt, dev):
    dev.submit(cmd_fill(addr("VRAM", 0x3000), 0x2000, 0xA5A55A5A),
               cmd_fence(addr("SYSTEM", FENCE), 1))
    dev.wait_idle()
    assert struct.unpack("<Q", qt.read(FENCE, 8))[0] == 1
    assert qt.readl(VRAM_BAR + 0x3000) == 0xA5A55A5A
    assert qt.readl(VRAM_BAR + 0x4FFC) == 0xA5A55A5A
    assert qt.readl(VRAM_BAR + 0x5000) != 0xA5A55A5A


def test_transfer_roundtrip(qt, dev):
    data = pattern_bytes(3, 3 * 4096 + 100)
    qt.write(DATA, data)
    dev.submit(cmd_transfer(addr("SYSTEM", DATA), addr("VRAM", 0x10000 + 12), len(data)),
               cmd_transfer(addr("VRAM", 0x10000 + 12), addr("SYSTEM", DATA + 0x10000),
                            len(data)),
               cmd_fence(addr("SYSTEM", FENCE), 2))
    dev.wait_idle()
    assert qt.read(DATA + 0x10000, len(data)) == data


def test_gart_scatter(qt, dev):
    # Three scattered system pages look contiguous through the aperture.
    pages = [DATA + 0x30000, DATA + 0x21000, DATA + 0x45000]
    map_gart(qt, dev, pages)
    data = pattern_bytes(5, 3 * 4096)
    qt.write(DATA, data)
    dev.submit(cmd_transfer(addr("SYSTEM", DATA), addr("GART", 0), len(data)))
    dev.wait_idle()
    for i, page in enumerate(pages):
        assert qt.read(page, 4096) == data[i * 4096:(i + 1) * 4096]


def test_fill_and_transfer_virtual(qt, dev):
    va = 0x1234_5000_0000 & ((1 << 48) - 1)
    va &= ~0x1FFFFF
    build_page_table(qt, 0x400000, va,
                     [("SYSTEM", DATA + 0x60000), ("VRAM", 0x80000), ("SYSTEM", DATA + 0x50000)])
    enable_vm(dev, 0, 0x400000)
    dev.submit(cmd_fill(addr("VIRTUAL", va + 0x800), 0x2000, 0x11223344))
    dev.wait_idle()
    assert qt.read(DATA + 0x60800, 4) == struct.pack("<I", 0x11223344)
    assert qt.readl(VRAM_BAR + 0x80000) == 0x11223344
    data = pattern_bytes(9, 3 * 4096)
    qt.write(DATA, data)
    dev.submit(cmd_transfer(addr("SYSTEM", DATA), addr("VIRTUAL", va), len(data)),
               cmd_transfer(addr("VIRTUAL", va), addr("SYSTEM", DATA + 0x70000), len(data)))
    dev.wait_idle()
    assert qt.read(DATA + 0x60000, 4096) == data[:4096]
    assert qt.read(DATA + 0x50000, 4096) == data[8192:]
    assert qt.read(DATA + 0x70000, len(data)) == data


def test_discard(qt, dev):
    dev.submit(cmd_range("DISCARD", addr("VRAM", 0x90000), 0x1000))
    dev.wait_idle()
    assert qt.readl(VRAM_BAR + 0x90000) == HW["VMGPU_DISCARD_PATTERN"]
    assert qt.readl(VRAM_BAR + 0x90FFC) == HW["VMGPU_DISCARD_PATTERN"]


def test_swizzle_roundtrip(qt, dev):
    data = pattern_bytes(11, 2 * 4096)
    qt.write(DATA, data)
    dev.submit(cmd_transfer(addr("SYSTEM", DATA), addr("VRAM", 0xA0000), len(data),
                            HW["VMGPU_TRANSFER_FLAG_SWIZZLE"]),
               cmd_transfer(addr("VRAM", 0xA0000), addr("SYSTEM", DATA + 0x8000), len(data),
                            HW["VMGPU_TRANSFER_FLAG_UNSWIZZLE"]))
    dev.wait_idle()
    tiled = qt.read(VRAM_BAR + 0xA0000, 4096)
    assert tiled != data[:4096]
    for off in (0, 64, 0x1C0, 0xFC0):
        assert tiled[swizzle_offset(off):swizzle_offset(off) + 64] == data[off:off + 64]
    assert qt.read(DATA + 0x8000, len(data)) == data


def test_host_aperture_detile(qt, dev):
    # Host aperture page 3 shows the swizzled VRAM page linearly.
    pte = 0xA0000 | HW["VMGPU_HAP_PTE_VALID"] | HW["VMGPU_HAP_PTE_DETILE"]
    qt.writeq(MMIO + HW["VMGPU_HAP_TABLE_OFFSET"] + 3 * 8, pte)
    linear = pattern_bytes(11, 4096)
    for off in (0, 0x40, 0x208, 0xFF8):
        assert qt.readl(HAP_BAR + 3 * 4096 + off) == struct.unpack_from("<I", linear, off)[0]


def test_nop_delay_keeps_engine_busy(qt, dev):
    dev.submit(cmd_nop(5000), cmd_fence(addr("SYSTEM", FENCE), 7))
    status = dev.ring_reg("VMGPU_RING_STATUS")
    assert status & HW["VMGPU_RING_STATUS_BUSY"]
    qt.step(1000000)
    assert struct.unpack("<Q", qt.read(FENCE, 8))[0] != 7
    qt.step(5000000)
    dev.wait_idle()
    assert struct.unpack("<Q", qt.read(FENCE, 8))[0] == 7
    assert dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_FENCE"]
    dev.reg_write("VMGPU_REG_INT_STATUS", HW["VMGPU_INT_FENCE"])
    assert not dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_FENCE"]


def test_error_bad_opcode(qt, dev):
    expect_halt(dev, "VMGPU_ERR_BAD_OPCODE", struct.pack("<HHI", 0x7777, 0, 0) + bytes(56))


def test_error_reserved_field(qt, dev):
    expect_halt(dev, "VMGPU_ERR_BAD_FIELD", cmd_nop()[:60] + b"\x01\x00\x00\x00")


def test_error_vram_range(qt, dev):
    expect_halt(dev, "VMGPU_ERR_RANGE", cmd_fill(addr("VRAM", VRAM_SIZE - 8), 16, 0))


def test_error_gart_fault(qt, dev):
    qt.write(GART_TABLE, bytes(8))
    expect_halt(dev, "VMGPU_ERR_GART_FAULT", cmd_fill(addr("GART", 0), 16, 0))


def test_error_dma(qt, dev):
    before = qt.read(DATA, 4096)
    expect_halt(dev, "VMGPU_ERR_DMA",
                cmd_transfer(addr("SYSTEM", 0xFFFF_F000_0000), addr("SYSTEM", DATA), 4096))
    assert qt.read(DATA, 4096) == before, "failed DMA read still wrote the destination"


def test_error_vm_fault(qt, dev):
    expect_halt(dev, "VMGPU_ERR_VM_FAULT", cmd_fill(addr("VIRTUAL", 0x7000_0000_0000, 0), 4, 0))


def test_error_bad_register(qt, dev):
    dev.reg_write("VMGPU_REG_ERROR_ACK", 1)
    dev.reg_write("VMGPU_REG_MAGIC", 1)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"]
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == HW["VMGPU_REG_MAGIC"]
    assert "vmgpu" in qt.guest_log()
    dev.reg_write("VMGPU_REG_ERROR_ACK", 1)
    # A register access of another size is refused and reported, not
    # dropped on its way.
    mask = dev.reg("VMGPU_REG_INT_MASK")
    reg = MMIO + HW["VMGPU_REG_INT_MASK"]
    for size, offset in (("b", 0), ("b", 3), ("w", 2)):
        qt.cmd(f"write{size} 0x{reg + offset:x} 0xff")
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"], (size, offset)
        assert dev.reg("VMGPU_REG_ERROR_SLOT") == HW["VMGPU_REG_INT_MASK"] + offset
        assert dev.reg("VMGPU_REG_INT_MASK") == mask, "a bad access changed the register"
        dev.reg_write("VMGPU_REG_ERROR_ACK", 1)
    assert int(qt.cmd(f"readw 0x{MMIO + HW['VMGPU_REG_MAGIC']:x}"), 16) == 0


def test_user_ring_privilege(qt, dev):
    base = HW["VMGPU_REG_RING0"] + 0x40
    for reg, val in (("VMGPU_RING_BASE_LO", RING + 0x2000), ("VMGPU_RING_BASE_HI", 0),
                     ("VMGPU_RING_SIZE_SHIFT", 4),
                     ("VMGPU_RING_MODE", HW["VMGPU_RING_MODE_VIRTUAL"]),
                     ("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"])):
        qt.writel(MMIO + base + HW[reg], val)
    dev.reg_write("VMGPU_REG_ERROR_ACK", 1)
    qt.write(RING + 0x2000, cmd_fill(addr("VRAM", 0), 4, 0))
    qt.writel(MMIO + base + HW["VMGPU_RING_TAIL"], 1)
    for _ in range(100):
        if qt.readl(MMIO + base + HW["VMGPU_RING_STATUS"]) & HW["VMGPU_RING_STATUS_HALTED"]:
            break
        qt.step(100000)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_PRIVILEGE"]
    assert dev.reg("VMGPU_REG_ERROR_RING") == 1
    assert qt.readl(MMIO + base + HW["VMGPU_RING_STATUS"]) & HW["VMGPU_RING_STATUS_HALTED"]
    qt.writel(MMIO + base + HW["VMGPU_RING_CTRL"], 0)
    dev.reg_write("VMGPU_REG_ERROR_ACK", 1)


def test_fault_part_way_keeps_done_pages(qt, dev):
    # Three pages into the aperture, the third unmapped: the fault comes
    # after two pages were copied, and what was done stays done.
    pages = [DATA + 0x30000, DATA + 0x31000]
    map_gart(qt, dev, pages)
    qt.write(GART_TABLE + 2 * 8, bytes(8))
    for page in pages:
        qt.write(page, bytes(4096))
    data = pattern_bytes(13, 3 * 4096)
    qt.write(VRAM_BAR + 0xB0000, data)
    ack_errors(dev)
    slot = dev.tail
    dev.submit(cmd_transfer(addr("VRAM", 0xB0000), addr("GART", 0), len(data)))
    status = dev.wait_idle()
    assert status & HW["VMGPU_RING_STATUS_HALTED"], "ring did not halt"
    assert dev.ring_reg("VMGPU_RING_HEAD") == slot
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_GART_FAULT"]
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == slot
    assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") == 0x2000
    assert qt.read(pages[0], 4096) == data[:4096]
    assert qt.read(pages[1], 4096) == data[4096:8192]
    dev.ring_reg_write("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"] |
                       HW["VMGPU_RING_CTRL_RESUME"])
    dev.wait_idle()
    ack_errors(dev)


# Budgeted copies, on a second device with 64 MiB of VRAM all behind BAR 2
# and 4 KiB slices: a 32 MiB command takes thousands of bottom-half runs.
BIG_VRAM = 64 << 20
BIG_HALF = BIG_VRAM // 2
BIG_DEVICE_ARGS = "vmgpu,segments=64M:64K,bar-size=64M,copy-budget=4K"


def snapshot(dev, offsets):
    """VRAM words at offsets, then the paging ring's STATUS and HEAD, all
    read in one batch so that no slice of the engine runs in between."""
    lines = [f"readl 0x{VRAM_BAR + off:x}" for off in offsets]
    lines += [f"readl 0x{dev.ring_mmio(0, name):x}"
              for name in ("VMGPU_RING_STATUS", "VMGPU_RING_HEAD")]
    return [int(v, 16) for v in dev.qt.batch(lines)]


def wait_partial(dev, first, last, polls=20000):
    """Poll until the word at first[0] holds first[1]: the command has
    started. Returns that snapshot's (status, head), after checking that the
    word at last[0] does not hold last[1] yet: the command is not done."""
    for _ in range(polls):
        a, b, status, head = snapshot(dev, (first[0], last[0]))
        if a == first[1]:
            assert b != last[1], "the whole command ran in one go"
            return status, head
    raise AssertionError("the command never started")


def test_large_transfer_spans_slices(qt, dev):
    with own_qemu(qt, BIG_DEVICE_ARGS) as (big, bdev):
        fill = 0x5A5A1234
        bdev.submit(cmd_fill(addr("VRAM", 0), BIG_HALF, fill))
        bdev.wait_idle(max_steps=100000)
        first, last = pattern_bytes(21, 4096), pattern_bytes(22, 4096)
        big.write(VRAM_BAR, first)
        big.write(VRAM_BAR + BIG_HALF - 4096, last)
        slot = bdev.tail
        bdev.submit(cmd_transfer(addr("VRAM", 0), addr("VRAM", BIG_HALF), BIG_HALF),
                    cmd_fence(addr("SYSTEM", FENCE), 0x77))
        status, head = wait_partial(
            bdev, (BIG_HALF, struct.unpack_from("<I", first)[0]),
            (BIG_VRAM - 4, struct.unpack_from("<I", last, 4092)[0]))
        assert status & HW["VMGPU_RING_STATUS_BUSY"], f"status {status:#x}"
        assert not status & HW["VMGPU_RING_STATUS_HALTED"]
        assert head == slot, f"head {head} passed slot {slot} of an unfinished command"
        assert u64(big.read(FENCE, 8)) != 0x77
        bdev.wait_idle(max_steps=100000)
        assert bdev.ring_reg("VMGPU_RING_HEAD") == bdev.tail
        assert u64(big.read(FENCE, 8)) == 0x77
        assert big.read(VRAM_BAR + BIG_HALF, 4096) == first
        assert big.read(VRAM_BAR + BIG_VRAM - 4096, 4096) == last
        middle = BIG_HALF + BIG_HALF // 2 - 0x20000
        assert big.read(VRAM_BAR + middle, 0x40000) == struct.pack("<I", fill) * 0x10000


COPY_DEVICE_ARGS = "vmgpu,segments=64M:64K,bar-size=64M,copy-budget=1M"


def test_copy_thread_writes_before_the_fence(qt, dev):
    # Runs of 1 MiB go to the copy thread 8 MiB at a time (contract 1.10):
    # HEAD passes the TRANSFER, and the FENCE after it writes, only once the
    # thread has written its last batch. Each poll reads HEAD, the fence and
    # the last word of every batch in one qtest batch.
    with own_qemu(qt, COPY_DEVICE_ARGS) as (own, cdev):
        fill = 0xC0B1E5
        cdev.submit(cmd_fill(addr("VRAM", 0), BIG_HALF, fill))
        cdev.wait_idle(max_steps=100000)
        ends = [BIG_HALF + off - 4 for off in range(8 << 20, BIG_HALF + 1, 8 << 20)]
        lines = [f"readl 0x{cdev.ring_mmio(0, 'VMGPU_RING_HEAD'):x}", f"readq 0x{FENCE:x}"]
        lines += [f"readl 0x{VRAM_BAR + e:x}" for e in ends]
        slot = cdev.tail
        cdev.submit(cmd_transfer(addr("VRAM", 0), addr("VRAM", BIG_HALF), BIG_HALF),
                    cmd_fence(addr("SYSTEM", FENCE), 0x55, irq=False))
        for _ in range(100000):
            head, fence, *words = [int(v, 16) for v in own.batch(lines)]
            if head != slot or fence == 0x55:
                break
        else:
            raise AssertionError("the TRANSFER never completed")
        late = [hex(e) for e, w in zip(ends, words) if w != fill]
        assert not late, f"HEAD {head} or the fence came before the copy reached {late}"
        cdev.wait_idle(max_steps=100000)
        assert u64(own.read(FENCE, 8)) == 0x55
        assert own.read(VRAM_BAR + BIG_VRAM - 4096, 4096) == struct.pack("<I", fill) * 1024


def test_tail_rewound_onto_a_thread_copy_stops_there(qt, dev):
    # TAIL rewound onto the command whose batches the copy thread is
    # copying (a 32 MiB TRANSFER, four batches: one is copied in well under
    # a millisecond here): the ring stops there, as it does without the thread. HEAD
    # must not pass TAIL, or the ring would run every stale slot after it;
    # the slots after the command hold FENCEs that must never run.
    size = 32 << 20
    pattern = 0x7A11BAC5
    slots = 1 << RING_SHIFT
    for _ in range(8):
        with own_qemu(qt, "vmgpu,segments=64M:64K,bar-size=64M,copy-budget=8M") as (own, odev):
            own.write(FENCE, bytes(8))
            odev.submit(cmd_fill(addr("VRAM", size), size, pattern))
            odev.wait_idle(max_steps=100000)
            slot = odev.tail
            for i in range(1, 4):
                own.write(RING + (slot + i) % slots * 64,
                          cmd_fence(addr("SYSTEM", FENCE), 0xBAD, irq=False))
            odev.submit(cmd_transfer(addr("VRAM", size), addr("VRAM", 0), size))
            for _ in range(100000):
                if own.readl(VRAM_BAR) == pattern:
                    break
            else:
                raise AssertionError("the TRANSFER never started")
            # Rewound, then HEAD read, with no slice in between.
            head = int(own.batch([
                f"writel 0x{odev.ring_mmio(0, 'VMGPU_RING_TAIL'):x} 0x{slot:x}",
                f"readl 0x{odev.ring_mmio(0, 'VMGPU_RING_HEAD'):x}"])[1], 16)
            if head != slot:
                continue  # the TRANSFER was done before the rewind: again
            for _ in range(100000):
                if own.readl(VRAM_BAR + size - 4) == pattern:
                    break
            for _ in range(50):
                own.step(100000)
            assert odev.ring_reg("VMGPU_RING_HEAD") == slot, "HEAD passed the rewound TAIL"
            assert u64(own.read(FENCE, 8)) != 0xBAD, "stale slots ran"
            odev.ring_reg_write("VMGPU_RING_TAIL", (slot + 1) % slots)
            odev.wait_idle(max_steps=100000)
            assert odev.ring_reg("VMGPU_RING_HEAD") == (slot + 1) % slots
            assert u64(own.read(FENCE, 8)) != 0xBAD, "stale slots ran"
            assert own.readl(VRAM_BAR + size - 4) == pattern
            return
    raise AssertionError("the TRANSFER was done before every rewind")


def stopped_vm_sees_no_device_writes(qt, budget):
    size, target, pattern = 24 << 20, 0x2000000, 0x5709F111
    stride = 64 << 10

    def sample():
        return [own.readl(target + off + stride - 4) for off in range(0, size, stride)]

    def batch_ends():
        # Read first, while a batch the stop did not wait for may still be
        # copied: the last word of each 8 MiB the copy thread takes.
        return [own.readl(target + off - 4) for off in range(8 << 20, size + 1, 8 << 20)]

    own = QTest(qt.qemu, f"vmgpu,segments=8M:64K,bar-size=4M,copy-budget={budget}", qmp=True)
    try:
        odev = Device(own)
        stops = 0
        for _ in range(20):
            own.write(FENCE, bytes(8))
            for off in range(0, size, stride):
                own.writel(target + off + stride - 4, 0)
            odev.submit(cmd_fill(addr("SYSTEM", target), size, pattern),
                        cmd_fence(addr("SYSTEM", FENCE), 1, irq=False))
            own.qmp.call("stop")
            ends = batch_ends()
            if u64(own.read(FENCE, 8)):
                own.qmp.call("cont")
                continue  # done before the stop: again
            head, words = odev.ring_reg("VMGPU_RING_HEAD"), sample()
            # The main loop runs its bottom halves meanwhile.
            time.sleep(0.3)
            assert u64(own.read(FENCE, 8)) == 0, "the FENCE ran while the VM was stopped"
            written = sum(a != b for a, b in zip(ends + words, batch_ends() + sample()))
            assert not written, f"the FILL wrote {written} sampled words while the VM was stopped"
            assert odev.ring_reg("VMGPU_RING_HEAD") == head
            own.qmp.call("cont")
            odev.wait_idle(max_steps=100000)
            assert u64(own.read(FENCE, 8)) == 1
            assert sample() == [pattern] * (size // stride)
            stops += 1
            if stops == 4:
                return
        raise AssertionError(f"the FILL was done before all but {stops} stops")
    finally:
        own.close()


def test_stopped_vm_sees_no_device_writes(qt, dev):
    # The monitor's stop (for a memory dump, a debugger) freezes guest
    # memory: a FILL part-way through writes nothing more, and the FENCE
    # behind it does not run, until cont; then both finish. In slices of
    # the main loop (a 4K budget) and with the copy thread, whose batch in
    # flight the stop waits for.
    stopped_vm_sees_no_device_writes(qt, "4K")
    stopped_vm_sees_no_device_writes(qt, "8M")


def test_ring_stop_drops_partial_command(qt, dev):
    # Disabling the ring or resetting the device in the middle of a command
    # drops it: it does not go on, and the next command runs on its own.
    with own_qemu(qt, BIG_DEVICE_ARGS) as (big, bdev):
        for n, stop in enumerate(("disable", "reset")):
            pattern = 0x0D15AB1E + n
            bdev.submit(cmd_fill(addr("VRAM", 0), BIG_VRAM, pattern))
            wait_partial(bdev, (0, pattern), (BIG_VRAM - 4, pattern))
            if stop == "disable":
                bdev.ring_reg_write("VMGPU_RING_CTRL", 0)
                assert bdev.ring_reg("VMGPU_RING_STATUS") == 0
                assert bdev.ring_reg("VMGPU_RING_HEAD") == 0
                bdev.ring_reg_write("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"])
                bdev.tail = 0
            else:
                bdev.setup()
            for _ in range(200):
                big.step(100000)
            assert big.readl(VRAM_BAR + BIG_VRAM - 4) != pattern, f"{stop}: fill went on"
            bdev.submit(cmd_fence(addr("SYSTEM", FENCE), 0x80 + n))
            bdev.wait_idle()
            assert u64(big.read(FENCE, 8)) == 0x80 + n, f"{stop}: next command did not run"
            assert big.readl(VRAM_BAR + BIG_VRAM - 4) != pattern, f"{stop}: fill came back"


def test_nop_delay_holds_head(qt, dev):
    qt.write(FENCE, bytes(8))
    slot = dev.tail
    dev.submit(cmd_fence(addr("SYSTEM", FENCE), 0x42, irq=False), cmd_nop(5000))
    for _ in range(1000):
        if u64(qt.read(FENCE, 8)) == 0x42:
            break
    else:
        raise AssertionError("the fence before the NOP never ran")
    head = dev.ring_reg("VMGPU_RING_HEAD")
    assert head == (slot + 1) % (1 << RING_SHIFT), f"head {head} passed a delaying NOP"
    assert dev.ring_reg("VMGPU_RING_STATUS") & HW["VMGPU_RING_STATUS_BUSY"]
    qt.step(6000000)
    dev.wait_idle()
    assert dev.ring_reg("VMGPU_RING_HEAD") == dev.tail


def hap_entry(i):
    return MMIO + HW["VMGPU_HAP_TABLE_OFFSET"] + 8 * i


def hap_window_open_onto(qt, i, vram):
    """Whether host-aperture page i is a window onto vram: a write through
    it after the entry was rewritten (no read) still lands there."""
    qt.writel(VRAM_BAR + vram + 0x20, 0)
    qt.writeq(hap_entry(i), 0xA000 | HW["VMGPU_HAP_PTE_VALID"])
    qt.writel(HAP_BAR + i * 4096 + 0x20, 0x0BADF00D)
    landed = qt.readl(VRAM_BAR + vram + 0x20) == 0x0BADF00D
    qt.writel(VRAM_BAR + vram + 0x20, 0)
    return landed


def hap_make_window(qt, dev, i, vram):
    """Host-aperture page i a window onto vram, checked."""
    # A window only opening follows in a bottom half: give it a few
    # round trips.
    for _ in range(20):
        qt.writeq(hap_entry(i), vram | HW["VMGPU_HAP_PTE_VALID"])
        qt.readq(hap_entry(i))
        dev.reg("VMGPU_REG_MAGIC")
        if hap_window_open_onto(qt, i, vram):
            break
    else:
        raise AssertionError("not a window: the device translated")
    qt.writeq(hap_entry(i), vram | HW["VMGPU_HAP_PTE_VALID"])
    qt.readq(hap_entry(i))


def test_dma_into_own_bars_refused(qt, dev):
    # v1.11: system addresses that reach the device's own BARs fail with
    # DMA, always: before, a FILL into its VRAM BAR wrote VRAM, and one
    # into the host aperture did or did not, as a window happened to be
    # open. VRAM keeps its bytes either way.
    page = HAP_BAR + 9 * 4096
    qt.write(VRAM_BAR + 0x8000, bytes(4096))
    expect_halt(dev, "VMGPU_ERR_DMA",
                cmd_fill(addr("SYSTEM", VRAM_BAR + 0x8000), 4096, 0x0BAD0BAD))
    qt.writeq(hap_entry(9), 0x8000 | HW["VMGPU_HAP_PTE_VALID"])
    qt.readq(hap_entry(9))
    expect_halt(dev, "VMGPU_ERR_DMA", cmd_fill(addr("SYSTEM", page), 4096, 0x0BAD0BAD))
    hap_make_window(qt, dev, 9, 0x8000)
    expect_halt(dev, "VMGPU_ERR_DMA", cmd_fill(addr("SYSTEM", page), 4096, 0x0BAD0BAD))
    expect_halt(dev, "VMGPU_ERR_DMA",
                cmd_transfer(addr("SYSTEM", page), addr("SYSTEM", DATA), 4096))
    # Every other command that reaches system memory: a FENCE's write, a
    # WAIT's read, a DISCARD.
    expect_halt(dev, "VMGPU_ERR_DMA",
                cmd_fence(addr("SYSTEM", VRAM_BAR + 0x8000), 0x0BAD0BAD, irq=False))
    expect_halt(dev, "VMGPU_ERR_DMA", cmd_wait(addr("SYSTEM", page), 0))
    expect_halt(dev, "VMGPU_ERR_DMA", cmd_range("DISCARD", addr("SYSTEM", page), 4096))
    assert qt.read(VRAM_BAR + 0x8000, 4096) == bytes(4096), "VRAM written through a BAR"
    qt.writeq(hap_entry(9), 0)
    qt.readq(hap_entry(9))


def test_hap_entry_8byte_write_is_whole(qt, dev):
    valid = HW["VMGPU_HAP_PTE_VALID"]
    good = 0x3000 | valid
    qt.writeq(hap_entry(5), good)
    assert qt.readq(hap_entry(5)) == good
    ack_errors(dev)
    count = dev.reg("VMGPU_REG_ERROR_COUNT")
    bad = 1 << 62 | 0x5000 | valid
    qt.writeq(hap_entry(5), bad)
    entry = qt.readl(hap_entry(5)) | qt.readl(hap_entry(5) + 4) << 32
    assert entry == good, f"entry {entry:#x} after a rejected write"
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"]
    assert dev.reg("VMGPU_REG_ERROR_COUNT") == count + 1
    assert dev.reg("VMGPU_REG_ERROR_ADDR_HI") == bad >> 32
    ack_errors(dev)
    # Two 4-byte writes, low half first, still update an entry.
    qt.writel(hap_entry(5), 0x7000 | valid)
    qt.writel(hap_entry(5) + 4, 0)
    assert qt.readq(hap_entry(5)) == 0x7000 | valid
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]
    qt.writeq(hap_entry(5), 0)


def test_hap_bar_8byte_access_is_whole(qt, dev):
    # Through an invalid entry, one 8-byte write is one bad access (one log
    # line), not two 4-byte ones.
    qt.writeq(hap_entry(7), 0)
    before = qt.guest_log().count("through an invalid entry")
    qt.writeq(HAP_BAR + 7 * 4096 + 8, 0x1122334455667788)
    logged = qt.guest_log().count("through an invalid entry") - before
    assert logged == 1, f"{logged} bad accesses logged for one 8-byte write"
    qt.writeq(hap_entry(7), 0x6000 | HW["VMGPU_HAP_PTE_VALID"])
    qt.writeq(HAP_BAR + 7 * 4096 + 0x10, 0x8877665544332211)
    assert qt.readq(HAP_BAR + 7 * 4096 + 0x10) == 0x8877665544332211
    assert qt.readl(VRAM_BAR + 0x6014) == 0x88776655
    qt.writeq(hap_entry(7), 0)


def test_hap_direct_windows(qt, dev):
    # v1.9: a linear entry makes its page a window onto VRAM from the next
    # entry read. A window does not look at the table at each access,
    # which is what shows it: until that read, a rewritten entry's page
    # still reaches the old VRAM page (the contract allows either).
    valid, detile = HW["VMGPU_HAP_PTE_VALID"], HW["VMGPU_HAP_PTE_DETILE"]
    page = HAP_BAR + 9 * 4096

    def make_window(vram):
        hap_make_window(qt, dev, 9, vram)

    qt.write(VRAM_BAR + 0x8000, bytes(3 * 4096))
    make_window(0x8000)
    qt.writel(page + 1, 0xA1B2C3D4)
    assert qt.read(VRAM_BAR + 0x8001, 4) == struct.pack("<I", 0xA1B2C3D4)
    # Pointed elsewhere: after the read, only the new page is reached.
    qt.writeq(hap_entry(9), 0x9000 | valid)
    qt.readq(hap_entry(9))
    qt.writel(page + 0x11, 0x55667788)
    assert qt.read(VRAM_BAR + 0x9011, 4) == struct.pack("<I", 0x55667788)
    assert qt.read(VRAM_BAR + 0x8011, 4) == bytes(4), "the old page written"
    # DETILE over a window: detiled from the read on. Linear block 1 is
    # stored in block 8, which a window would not show at 0x40.
    qt.writel(VRAM_BAR + 0x9040, 0x11111111)
    qt.writel(VRAM_BAR + 0x9000 + swizzle_offset(0x40), 0x22222222)
    qt.writeq(hap_entry(9), 0x9000 | valid | detile)
    qt.readq(hap_entry(9))
    assert qt.readl(page + 0x40) == 0x22222222, "not detiled"
    # Invalid over a window, and RESET: the device's again, logged.
    for reset in (False, True):
        make_window(0x8000)
        if reset:
            dev.setup()
        else:
            qt.writeq(hap_entry(9), 0)
            qt.readq(hap_entry(9))
        before = qt.guest_log().count("through an invalid entry")
        assert qt.readl(page) == 0
        assert qt.guest_log().count("through an invalid entry") == before + 1, \
            "a window left after " + ("RESET" if reset else "invalidation")


def test_hap_windows_take_few_ranges(qt, dev):
    # Each stretch of windows onto consecutive VRAM pages is a range of the
    # host's memory map, and under KVM a memory slot: the guest must not
    # decide how many. With host-aperture-ranges=2, pages 0-1 (onto
    # consecutive VRAM) are one stretch and page 3 the second; page 5
    # would start a third and is the device's until page 3 closes.
    valid, detile = HW["VMGPU_HAP_PTE_VALID"], HW["VMGPU_HAP_PTE_DETILE"]
    with own_qemu(qt, DEVICE_ARGS + ",host-aperture-ranges=2") as (oqt, odev):
        entries = {0: 0x10000, 1: 0x11000, 3: 0x20000, 5: 0x30000}
        for i, vram in entries.items():
            oqt.writeq(hap_entry(i), vram | valid)
        hap_make_window(oqt, odev, 3, 0x20000)
        for i, window in ((0, True), (1, True), (3, True), (5, False)):
            assert hap_window_open_onto(oqt, i, entries[i]) == window, \
                f"page {i} {'not ' if window else ''}a window"
            oqt.writeq(hap_entry(i), entries[i] | valid)
            oqt.readq(hap_entry(i))
        # The device's page reaches the same VRAM, at any alignment.
        oqt.writeq(HAP_BAR + 5 * 4096 + 0x13, 0x8877665544332211)
        assert oqt.read(VRAM_BAR + 0x30013, 8) == struct.pack("<Q", 0x8877665544332211)
        # Across two of the device's pages (qtest, like another device's
        # DMA, does not split at pages): each byte through its own entry.
        oqt.writeq(hap_entry(6), 0x50000 | valid)
        oqt.readq(hap_entry(6))
        oqt.writeq(HAP_BAR + 5 * 4096 + 0xffc, 0x8877665544332211)
        assert oqt.read(VRAM_BAR + 0x30ffc, 8) == bytes.fromhex("1122334400000000")
        assert oqt.read(VRAM_BAR + 0x50000, 4) == bytes.fromhex("55667788")
        oqt.writeq(hap_entry(6), 0)
        oqt.readq(hap_entry(6))
        oqt.writeq(hap_entry(3), 0)
        oqt.readq(hap_entry(3))
        assert hap_window_open_onto(oqt, 5, 0x30000), "page 5 not a window once 3 closed"
        # Unaligned through DETILE: byte by byte, each byte detiled.
        oqt.writeq(hap_entry(7), 0x40000 | valid | detile)
        oqt.readq(hap_entry(7))
        oqt.writeq(HAP_BAR + 7 * 4096 + 0x3C, 0x8877665544332211)
        got = bytes(oqt.read(VRAM_BAR + 0x40000 + swizzle_offset(0x3C + i), 1)[0]
                    for i in range(8))
        assert got == struct.pack("<Q", 0x8877665544332211), got.hex()
        assert oqt.readq(HAP_BAR + 7 * 4096 + 0x3C) == 0x8877665544332211


def test_register_8byte_access_rejected(qt, dev):
    # An 8-byte write to a _LO/_HI pair is one bad access, not two writes.
    ack_errors(dev)
    base = dev.reg("VMGPU_REG_GART_BASE_LO") | dev.reg("VMGPU_REG_GART_BASE_HI") << 32
    qt.writeq(MMIO + HW["VMGPU_REG_GART_BASE_LO"], 1 << 32 | 0x5000)
    now = dev.reg("VMGPU_REG_GART_BASE_LO") | dev.reg("VMGPU_REG_GART_BASE_HI") << 32
    assert now == base, f"8-byte register write took effect: {base:#x} -> {now:#x}"
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"]
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == HW["VMGPU_REG_GART_BASE_LO"]
    assert qt.readq(MMIO + HW["VMGPU_REG_MAGIC"]) == 0
    ack_errors(dev)


def test_ring_size_shift_validated(qt, dev):
    shift = dev.ring_mmio(2, "VMGPU_RING_SIZE_SHIFT")
    qt.writel(shift, 5)
    for bad in (40, HW["VMGPU_RING_SIZE_SHIFT_MIN"] - 1, HW["VMGPU_RING_SIZE_SHIFT_MAX"] + 1):
        ack_errors(dev)
        qt.writel(shift, bad)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"], f"{bad} accepted"
        assert dev.reg("VMGPU_REG_ERROR_SLOT") == shift - MMIO
        assert qt.readl(shift) == 5, f"size shift {qt.readl(shift)} after writing {bad}"
    # A ring never given a size (power-on 0) cannot be enabled.
    ack_errors(dev)
    qt.writel(dev.ring_mmio(3, "VMGPU_RING_BASE_LO"), RING + 0x4000)
    qt.writel(dev.ring_mmio(3, "VMGPU_RING_CTRL"), HW["VMGPU_RING_CTRL_ENABLE"])
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_RING_SETUP"]
    assert qt.readl(dev.ring_mmio(3, "VMGPU_RING_CTRL")) == 0
    ack_errors(dev)


def test_no_intx(qt, dev):
    pin = qt.cfg_read(dev.dev, 0x3C) >> 8 & 0xFF
    assert pin == 0, f"interrupt pin {pin}, but only MSI-X is implemented"


def dirty_ring_state(qt, dev):
    """Give ring 2 a mode and fence word, and FENCE_RINGS a bit, for a reset
    to clear."""
    qt.writel(dev.ring_mmio(2, "VMGPU_RING_CTRL"), 0)
    qt.writel(dev.ring_mmio(2, "VMGPU_RING_MODE"), HW["VMGPU_RING_MODE_PHYSICAL"])
    qt.writel(dev.ring_mmio(2, "VMGPU_RING_FENCE_ADDR_LO"), 0x1008)
    qt.writel(dev.ring_mmio(2, "VMGPU_RING_FENCE_ADDR_HI"), 1)
    dev.submit(cmd_fence(addr("SYSTEM", FENCE), 3))
    dev.wait_idle()
    assert dev.reg("VMGPU_REG_FENCE_RINGS") & 1


def test_reset_register(qt, dev):
    dirty_ring_state(qt, dev)
    map_gart(qt, dev, [DATA])
    dev.reg_write("VMGPU_REG_INT_MASK", HW["VMGPU_INT_FENCE"] | HW["VMGPU_INT_ERROR"])
    qt.writeq(hap_entry(1), 0x1000 | HW["VMGPU_HAP_PTE_VALID"])
    enable_vm(dev, 2, 0x400000)
    dev.reg_write("VMGPU_REG_MAGIC", 1)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"]
    bar_size = dev.reg("VMGPU_REG_VRAM_BAR_SIZE_LO")
    dev.reg_write("VMGPU_REG_RESET", HW["VMGPU_RESET_VALUE"])
    check_reset_state(qt, dev)
    assert dev.reg("VMGPU_REG_VRAM_BAR_SIZE_LO") == bar_size
    dev.setup()


def check_reset_state(qt, dev):
    for ring in range(HW["VMGPU_MAX_RINGS"]):
        for reg in ("VMGPU_RING_CTRL", "VMGPU_RING_STATUS", "VMGPU_RING_HEAD",
                    "VMGPU_RING_TAIL", "VMGPU_RING_SIZE_SHIFT", "VMGPU_RING_MODE",
                    "VMGPU_RING_FENCE_ADDR_LO", "VMGPU_RING_FENCE_ADDR_HI"):
            val = qt.readl(dev.ring_mmio(ring, reg))
            assert val == 0, f"ring {ring} {reg} = {val:#x} after reset"
    for reg in ("VMGPU_REG_GART_NUM_PAGES", "VMGPU_REG_GART_BASE_LO", "VMGPU_REG_INT_STATUS",
                "VMGPU_REG_INT_MASK", "VMGPU_REG_ERROR_CODE", "VMGPU_REG_ERROR_COUNT",
                "VMGPU_REG_FENCE_RINGS"):
        assert dev.reg(reg) == 0, f"{reg} = {dev.reg(reg):#x} after reset"
    assert qt.readl(hap_entry(1)) == 0
    assert qt.readl(MMIO + HW["VMGPU_REG_VM0"] + 2 * 0x10 + HW["VMGPU_VM_CTRL"]) == 0


def ecam(dev, reg):
    return ECAM + (dev.dev << 15) + reg


def rebar_size_field(qt, dev):
    return qt.readl(ecam(dev, 0x108)) >> 8 & 0x3F


def test_system_reset(qt, dev):
    # A guest-triggered system reset (0xcf9) resets the device like RESET
    # and returns the VRAM BAR to bar-size. The ReBAR capability lives in
    # extended config space: open q35's MMCONFIG window as firmware does.
    qt.cfg_write(0, 0x60, ECAM | 1)
    assert qt.readl(ecam(dev, 0x100)) & 0xFFFF == 0x15
    assert rebar_size_field(qt, dev) == 2  # 4 MiB
    qt.cfg_write(dev.dev, 0x04, 0)
    qt.writel(ecam(dev, 0x108), qt.readl(ecam(dev, 0x108)) & ~0x3F00 | 4 << 8)
    qt.cfg_write(dev.dev, 0x04, 0x6)
    assert dev.reg("VMGPU_REG_VRAM_BAR_SIZE_LO") == 16 << 20
    dirty_ring_state(qt, dev)
    map_gart(qt, dev, [DATA])
    dev.reg_write("VMGPU_REG_INT_MASK", HW["VMGPU_INT_FENCE"])
    qt.writeq(hap_entry(1), 0x1000 | HW["VMGPU_HAP_PTE_VALID"])
    enable_vm(dev, 2, 0x400000)
    dev.reg_write("VMGPU_REG_MAGIC", 1)
    system_reset(dev)
    qt.cfg_write(0, 0x60, ECAM | 1)
    assert rebar_size_field(qt, dev) == 2, "ReBAR size not restored"
    dev.assign_bars()
    assert dev.reg("VMGPU_REG_VRAM_BAR_SIZE_LO") == 4 << 20
    check_reset_state(qt, dev)
    dev.setup()


def test_segments_overflow_rejected(qt, dev):
    # 8E + 8E wraps to 0, + 64M: the segments must not pass as 64 MiB.
    proc = run_qemu(qt.qemu, "vmgpu,segments=8E:64K,,8E:64K,,64M:4K")
    assert proc.returncode == 1, f"QEMU exited {proc.returncode}"
    assert "vmgpu: segments" in proc.stderr, proc.stderr


def test_unmigratable(qt, dev):
    proc = run_qemu(qt.qemu, "vmgpu", "-only-migratable")
    assert proc.returncode == 1, f"QEMU exited {proc.returncode} with -only-migratable"
    assert "not migratable" in proc.stderr, proc.stderr
    migrate = {"execute": "migrate", "arguments": {"uri": "exec:cat >/dev/null"}}
    proc = run_qemu(qt.qemu, "vmgpu", qmp=[migrate])
    assert "blocked by non-migratable device" in proc.stdout, proc.stdout


def test_realize_failure_after_msix(qt, dev):
    # 200 TiB of VRAM cannot be allocated: realize fails after MSI-X init.
    proc = run_qemu(qt.qemu, "vmgpu,segments=200T:64K")
    assert proc.returncode == 1, f"QEMU exited {proc.returncode}: {proc.stderr}"
    assert "vmgpu.vram" in proc.stderr, proc.stderr


def test_copy_budget_validated(qt, dev):
    for budget in ("0", "100", "6000"):
        proc = run_qemu(qt.qemu, f"vmgpu,copy-budget={budget}")
        assert proc.returncode == 1, f"copy-budget={budget}: QEMU exited {proc.returncode}"
        assert "copy-budget must be" in proc.stderr, proc.stderr


TESTS = [
    test_identification, test_fill_vram, test_transfer_roundtrip, test_gart_scatter,
    test_fill_and_transfer_virtual, test_discard, test_swizzle_roundtrip,
    test_host_aperture_detile, test_nop_delay_keeps_engine_busy, test_error_bad_opcode,
    test_error_reserved_field, test_error_vram_range, test_error_gart_fault, test_error_dma,
    test_error_vm_fault, test_error_bad_register, test_user_ring_privilege,
    *vmgpu_user_ring_test.TESTS,
    test_fault_part_way_keeps_done_pages, test_large_transfer_spans_slices,
    test_copy_thread_writes_before_the_fence,
    test_tail_rewound_onto_a_thread_copy_stops_there, test_stopped_vm_sees_no_device_writes,
    test_ring_stop_drops_partial_command, test_nop_delay_holds_head,
    test_hap_entry_8byte_write_is_whole, test_hap_bar_8byte_access_is_whole,
    test_hap_direct_windows, test_hap_windows_take_few_ranges,
    test_dma_into_own_bars_refused,
    test_register_8byte_access_rejected, test_ring_size_shift_validated, test_no_intx,
    test_reset_register, test_system_reset, test_unmigratable,
    test_realize_failure_after_msix, test_segments_overflow_rejected,
    test_copy_budget_validated,
    *vmgpu_cache_test.TESTS,
    *vmgpu_compress_test.TESTS,
    *vmgpu_run_test.TESTS,
    *vmgpu_display_test.TESTS,
]


def main(qemu):
    print("vmgpu-test: begin test vmgpu_device_test")
    print("TAP version 13")
    print(f"1..{len(TESTS)}")
    qt = QTest(qemu, DEVICE_ARGS)
    failed = 0
    try:
        dev = Device(qt)
        for n, test in enumerate(TESTS, 1):
            try:
                test(qt, dev)
                print(f"ok {n} {test.__name__}")
            except (AssertionError, RuntimeError) as e:
                failed += 1
                print(f"# {test.__name__}: {e!r}")
                print(f"not ok {n} {test.__name__}")
    finally:
        qt.close()
    print(f"vmgpu-test: end test vmgpu_device_test rc={1 if failed else 0}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
