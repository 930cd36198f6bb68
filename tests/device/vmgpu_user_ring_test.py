# SPDX-License-Identifier: MIT
"""Device-level tests of contract v1.1 and v1.4: user-ring modes, ring fence
words and FENCE_RINGS, WAIT, per-ring reset, SET_VM. vmgpu_device_test.py
runs them.

Polls here do not step the virtual clock unless the test says so: a WAIT
that ends without a clock step was ended by an event, not by the device's
periodic re-check.
"""
import os
import struct
import time

from vmgpu_qtest import (
    DATA, FENCE, FENCE_WORDS, HW, MMIO, NO_ADDR, RING, VRAM_BAR, ack_errors, addr,
    build_page_table, cmd_fence, cmd_fill, cmd_nop, cmd_range, cmd_set_vm, cmd_transfer,
    cmd_wait, enable_vm, expect_halt, header, map_gart, poll, u64, vm_generation)

VM1_ROOT = 0x500000
VM0_ROOT = 0x600000     # a paging VM that maps what VM 1 maps
WVA = 0x10_0000_0000    # VM 1: the monitored fence page, then a data page
WPAGE = DATA + 0x80000
GPAGE = DATA + 0x90000  # behind aperture page 0
UNMAPPED_VA = WVA + 0x100000


def bit(name):
    return HW[f"VMGPU_RING_STATUS_{name}"]


class UserRing:
    """Ring index (1-3) in a mode: 16 slots at RING + 0x1000 * (index + 1),
    fence word at FENCE_WORDS + 8 * index. A VIRTUAL ring is bound to VM 1
    as it is when the ring is enabled: its slot 0 is that SET_VM."""

    def __init__(self, dev, index, mode="VIRTUAL", bind=True):
        self.dev, self.qt, self.index = dev, dev.qt, index
        self.bind = bind and mode == "VIRTUAL"
        self.base = RING + 0x1000 * (index + 1)
        self.word = FENCE_WORDS + 8 * index
        self.stop()
        for name, val in (("BASE_LO", self.base), ("BASE_HI", 0), ("SIZE_SHIFT", 4),
                          ("MODE", HW[f"VMGPU_RING_MODE_{mode}"]),
                          ("FENCE_ADDR_LO", self.word), ("FENCE_ADDR_HI", 0)):
            self.reg_write(name, val)
        self.qt.write(self.word, bytes(8))
        self.enable()

    def reg(self, name):
        return self.qt.readl(self.dev.ring_mmio(self.index, f"VMGPU_RING_{name}"))

    def reg_write(self, name, val):
        self.qt.writel(self.dev.ring_mmio(self.index, f"VMGPU_RING_{name}"), val)

    def enable(self):
        self.tail = 0
        self.reg_write("CTRL", HW["VMGPU_RING_CTRL_ENABLE"])
        if self.bind:
            self.submit(cmd_set_vm(1, vm_generation(self.dev, 1)))
            poll(lambda: self.reg("HEAD") == 1, f"ring {self.index}: SET_VM")

    def stop(self):
        self.reg_write("CTRL", 0)

    def submit(self, *cmds):
        for c in cmds:
            assert len(c) == 64
            self.qt.write(self.base + self.tail * 64, c)
            self.tail = (self.tail + 1) % 16
        self.reg_write("TAIL", self.tail)

    def fence(self, value, irq=False):
        return cmd_fence(NO_ADDR, value, irq=irq, ring=True)

    def fence_word(self):
        return u64(self.qt.read(self.word, 8))

    def wait_fence(self, value, what):
        poll(lambda: self.fence_word() == value, f"ring {self.index}: {what}")


def expect_user_halt(ur, code, bad_cmd):
    """bad_cmd halts the user ring with code; RESUME runs the command after it."""
    dev = ur.dev
    ack_errors(dev)
    slot = ur.tail
    ur.submit(bad_cmd, ur.fence(0x99))
    poll(lambda: ur.reg("STATUS") & bit("HALTED"), f"ring {ur.index} halting with {code}")
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW[code], \
        f"error {dev.reg('VMGPU_REG_ERROR_CODE')} instead of {code}"
    assert dev.reg("VMGPU_REG_ERROR_RING") == ur.index
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == slot
    assert ur.reg("HEAD") == slot
    assert ur.fence_word() != 0x99, "the command after the failed one ran"
    ur.reg_write("CTRL", HW["VMGPU_RING_CTRL_ENABLE"] | HW["VMGPU_RING_CTRL_RESUME"])
    ur.wait_fence(0x99, "the command after the failed one after RESUME")
    ur.qt.write(ur.word, bytes(8))
    ack_errors(dev)


def map_user_vm(qt, dev):
    """VM 1 maps WVA to WPAGE and WVA + 4K to WPAGE + 4K, writable."""
    build_page_table(qt, VM1_ROOT, WVA, [("SYSTEM", WPAGE), ("SYSTEM", WPAGE + 0x1000)])
    enable_vm(dev, 1, VM1_ROOT)
    qt.write(WPAGE, bytes(0x2000))


def stop_rings(dev, *rings):
    for ur in rings:
        ur.stop()
    ack_errors(dev)


def test_fence_ring_word(qt, dev):
    ur = UserRing(dev, 2)
    try:
        sentinel = 0x5E5E5E5E_5E5E5E5E
        qt.writeq(VRAM_BAR, sentinel)
        dev.reg_write("VMGPU_REG_FENCE_RINGS", 0xF)
        dev.reg_write("VMGPU_REG_INT_STATUS", HW["VMGPU_INT_FENCE"])
        assert dev.reg("VMGPU_REG_FENCE_RINGS") == 0
        ur.submit(ur.fence(0x1234, irq=True))
        ur.wait_fence(0x1234, "fence word")
        assert dev.reg("VMGPU_REG_FENCE_RINGS") == 1 << 2
        assert dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_FENCE"]
        assert qt.readq(VRAM_BAR) == sentinel, "FLAG_RING fence wrote its (zero) dst"
        dev.reg_write("VMGPU_REG_FENCE_RINGS", 1 << 2)
        assert dev.reg("VMGPU_REG_FENCE_RINGS") == 0, "write 1 did not clear"
        # Without FENCE_FLAG_IRQ: the word, but no bit.
        ur.submit(ur.fence(0x1235))
        ur.wait_fence(0x1235, "fence word without IRQ")
        assert dev.reg("VMGPU_REG_FENCE_RINGS") == 0
        # The paging ring has its own word and bit.
        dev.submit(cmd_fence(NO_ADDR, 0x77, ring=True))
        dev.wait_idle()
        assert u64(qt.read(FENCE_WORDS, 8)) == 0x77
        assert ur.fence_word() == 0x1235
        assert dev.reg("VMGPU_REG_FENCE_RINGS") == 1
        dev.reg_write("VMGPU_REG_FENCE_RINGS", 1 << 3)
        assert dev.reg("VMGPU_REG_FENCE_RINGS") == 1, "write 1 cleared another bit"
        dev.reg_write("VMGPU_REG_FENCE_RINGS", 1)
        # dst must be all zero, every field of it; other flags are bad.
        expect_halt(dev, "VMGPU_ERR_BAD_FIELD", cmd_fence(addr("SYSTEM", FENCE), 1, ring=True))
        expect_user_halt(ur, "VMGPU_ERR_BAD_FIELD",
                         cmd_fence(struct.pack("<QII", 0, 0, 1), 1, ring=True))
        bad_flags = HW["VMGPU_FENCE_FLAG_RING"] | 1 << 2
        expect_user_halt(ur, "VMGPU_ERR_BAD_FIELD",
                         header("FENCE", bad_flags) + NO_ADDR + struct.pack("<Q", 1) + bytes(32))
        assert u64(qt.read(FENCE_WORDS, 8)) == 0x77
        # A fence word that is not 8-byte aligned.
        ur.stop()
        ur.reg_write("FENCE_ADDR_LO", ur.word + 4)
        ur.enable()
        ack_errors(dev)
        qt.write(ur.word, bytes(16))
        dev.reg_write("VMGPU_REG_FENCE_RINGS", 0xF)
        ur.submit(ur.fence(0x1236, irq=True))
        poll(lambda: ur.reg("STATUS") & bit("HALTED"), "misaligned fence word halting")
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_BAD_FIELD"]
        assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") == ur.word + 4
        assert qt.read(ur.word, 16) == bytes(16), "misaligned fence word written"
        assert dev.reg("VMGPU_REG_FENCE_RINGS") == 0, "a failed fence set its ring's bit"
    finally:
        stop_rings(dev, ur)


def test_user_ring_modes(qt, dev):
    map_user_vm(qt, dev)
    build_page_table(qt, VM0_ROOT, WVA, [("SYSTEM", WPAGE), ("SYSTEM", WPAGE + 0x1000)])
    enable_vm(dev, 0, VM0_ROOT)
    virt, phys = UserRing(dev, 1, "VIRTUAL"), UserRing(dev, 3, "PHYSICAL")
    try:
        assert virt.reg("MODE") == HW["VMGPU_RING_MODE_VIRTUAL"]
        assert phys.reg("MODE") == HW["VMGPU_RING_MODE_PHYSICAL"]
        # GPU-VA engine: any VM but the paging VM, nothing physical.
        data = WPAGE + 0x1000
        virt.submit(cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0x600DF111), virt.fence(1))
        virt.wait_fence(1, "FILL through VM 1")
        assert qt.readl(data) == 0x600DF111
        qt.writel(VRAM_BAR + 0xC0000, 0x0)
        for bad in (cmd_fill(addr("VIRTUAL", WVA + 0x1000, 0), 64, 0xBAD),
                    cmd_fill(addr("VIRTUAL", WVA + 0x1000, HW["VMGPU_MAX_VMS"]), 64, 0xBAD),
                    cmd_fill(addr("VRAM", 0xC0000), 64, 0xBAD),
                    cmd_fence(addr("SYSTEM", data), 0xBAD),
                    cmd_transfer(addr("VIRTUAL", WVA, 1), addr("GART", 0), 64),
                    cmd_range("DISCARD", addr("VIRTUAL", WVA + 0x1000, 1), 0x1000)):
            expect_user_halt(virt, "VMGPU_ERR_PRIVILEGE", bad)
        assert qt.readl(data) == 0x600DF111, "a refused command wrote through the VM"
        assert qt.readl(VRAM_BAR + 0xC0000) == 0
        # Physical engine: VRAM and GART, nothing else.
        map_gart(qt, dev, [GPAGE])
        qt.write(GPAGE, bytes(64))
        phys.submit(cmd_fill(addr("VRAM", 0xC0000), 64, 0x0F0F0F0F),
                    cmd_fill(addr("GART", 0), 32, 0xABCD1234),
                    cmd_transfer(addr("VRAM", 0xC0000), addr("GART", 32), 32), phys.fence(2))
        phys.wait_fence(2, "FILL and TRANSFER on a physical engine")
        assert qt.readl(VRAM_BAR + 0xC0000) == 0x0F0F0F0F
        assert qt.read(GPAGE, 64) == struct.pack("<I", 0xABCD1234) * 8 + \
            struct.pack("<I", 0x0F0F0F0F) * 8
        for bad in (cmd_fill(addr("SYSTEM", GPAGE), 64, 0xBAD),
                    cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0xBAD),
                    cmd_transfer(addr("SYSTEM", DATA), addr("VRAM", 0xC0000), 64),
                    cmd_range("DISCARD", addr("VRAM", 0xC0000), 0x1000)):
            expect_user_halt(phys, "VMGPU_ERR_PRIVILEGE", bad)
        assert qt.readl(GPAGE) == 0xABCD1234 and qt.readl(data) == 0x600DF111
        assert qt.readl(VRAM_BAR + 0xC0000) == 0x0F0F0F0F
        check_mode_register(qt, dev, phys)
    finally:
        stop_rings(dev, virt, phys)


def check_mode_register(qt, dev, phys):
    mode_reg = dev.ring_mmio(phys.index, "VMGPU_RING_MODE")
    for name, val in (("MODE", HW["VMGPU_RING_MODE_VIRTUAL"]), ("FENCE_ADDR_LO", 0x8)):
        ack_errors(dev)
        phys.reg_write(name, val)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"], \
            f"{name} written while the ring is enabled"
    assert phys.reg("MODE") == HW["VMGPU_RING_MODE_PHYSICAL"]
    assert phys.reg("FENCE_ADDR_LO") == phys.word
    phys.stop()
    ack_errors(dev)
    phys.reg_write("MODE", 2)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"], "MODE 2 accepted"
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == mode_reg - MMIO
    assert phys.reg("MODE") == HW["VMGPU_RING_MODE_PHYSICAL"]
    ack_errors(dev)
    phys.reg_write("MODE", HW["VMGPU_RING_MODE_VIRTUAL"])
    assert phys.reg("MODE") == HW["VMGPU_RING_MODE_VIRTUAL"]
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]
    # MODE does nothing to the paging ring.
    dev.ring_reg_write("VMGPU_RING_CTRL", 0)
    dev.ring_reg_write("VMGPU_RING_MODE", HW["VMGPU_RING_MODE_PHYSICAL"])
    dev.ring_reg_write("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"])
    dev.tail = 0
    try:
        dev.submit(cmd_fill(addr("VIRTUAL", WVA + 0x1000, 0), 4, 0x0DD),
                   cmd_fence(addr("SYSTEM", FENCE), 0x3C))
        dev.wait_idle()
        assert u64(qt.read(FENCE, 8)) == 0x3C and qt.readl(WPAGE + 0x1000) == 0x0DD, \
            "ring 0 obeyed MODE_PHYSICAL"
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]
    finally:
        dev.ring_reg_write("VMGPU_RING_CTRL", 0)
        dev.ring_reg_write("VMGPU_RING_MODE", HW["VMGPU_RING_MODE_VIRTUAL"])
        dev.ring_reg_write("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"])
        dev.tail = 0


def wait_cmd(target, va=WVA):
    return cmd_wait(addr("VIRTUAL", va, 1), target)


def check_waiting(ur, slot, polls=100):
    """The ring sits on its WAIT at slot, through polls engine passes."""
    for _ in range(polls):
        status, head = ur.reg("STATUS"), ur.reg("HEAD")
        assert status & bit("WAITING") and status & bit("BUSY"), f"status {status:#x}"
        assert not status & bit("HALTED"), f"status {status:#x}"
        assert head == slot, f"head {head} passed the WAIT at {slot}"


def test_wait_met_by_another_ring(qt, dev):
    map_user_vm(qt, dev)
    ur = UserRing(dev, 1)
    try:
        ur.submit(wait_cmd(5), cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0xF111F111),
                  ur.fence(0x51))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "ring 1 waiting")
        check_waiting(ur, 1)
        assert qt.readl(WPAGE + 0x1000) == 0, "the FILL behind an unmet WAIT ran"
        assert ur.fence_word() != 0x51
        # The paging ring writes 5 by physical address, after a FILL that
        # spans slices: the re-check of its doorbell comes too early, so only
        # the re-check after its FENCE, with no clock step, can end the wait.
        dev.submit(cmd_fill(addr("VRAM", 0x100000), 0x10000, 0x12345678),
                   cmd_fence(addr("SYSTEM", WPAGE), 5, irq=False))
        ur.wait_fence(0x51, "the commands behind the met WAIT")
        assert qt.readl(WPAGE + 0x1000) == 0xF111F111
        assert not ur.reg("STATUS") & (bit("WAITING") | bit("BUSY"))
        assert ur.reg("HEAD") == 4
        # A value already there: no wait at all. Greater also meets it.
        ur.submit(wait_cmd(4), wait_cmd(5), ur.fence(0x52))
        ur.wait_fence(0x52, "WAITs already met")
        # Unsigned: 2^63 is more than 5, 5 is less than 2^63.
        qt.writeq(WPAGE + 8, 1 << 63)
        ur.submit(wait_cmd(5, WVA + 8), ur.fence(0x53))
        ur.wait_fence(0x53, "WAIT for 5 on 2^63")
        ur.submit(wait_cmd(1 << 63), ur.fence(0x54))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "WAIT for 2^63 on 5")
        check_waiting(ur, 9)
    finally:
        stop_rings(dev, ur)


def test_wait_sees_cpu_write_by_timer(qt, dev):
    map_user_vm(qt, dev)
    ur = UserRing(dev, 1)
    try:
        ur.submit(wait_cmd(7), ur.fence(0x61))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "ring 1 waiting")
        qt.writeq(WPAGE, 7)
        # Nothing tells the device of a CPU write: it stays idle, and does
        # not re-read, until its timer; an engine that polled would see it.
        check_waiting(ur, 1, polls=300)
        half = HW["VMGPU_WAIT_RECHECK_US"] * 1000 // 2
        qt.step(half)
        check_waiting(ur, 1)
        qt.step(half + 10000)
        ur.wait_fence(0x61, "the WAIT met by a CPU write, after the re-check period")
        assert not ur.reg("STATUS") & bit("WAITING")
    finally:
        stop_rings(dev, ur)


def test_wait_rechecked_on_doorbell_and_resume(qt, dev):
    # Another ring's doorbell, or RESUME, re-checks an unmet WAIT even when
    # what it runs (a NOP) writes nothing: CPU writes are seen then too.
    map_user_vm(qt, dev)
    ur, other = UserRing(dev, 1), UserRing(dev, 2)
    try:
        ur.submit(wait_cmd(8), ur.fence(0xA1))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "ring 1 waiting")
        qt.writeq(WPAGE, 8)
        check_waiting(ur, 1)
        other.submit(cmd_nop())
        ur.wait_fence(0xA1, "the WAIT re-checked on a doorbell")
        ur.submit(wait_cmd(9), ur.fence(0xA2))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "ring 1 waiting again")
        other.submit(cmd_nop()[:60] + b"\x01\x00\x00\x00", cmd_nop())
        poll(lambda: other.reg("STATUS") & bit("HALTED"), "ring 2 halting")
        qt.writeq(WPAGE, 9)
        check_waiting(ur, 3)
        other.reg_write("CTRL", HW["VMGPU_RING_CTRL_ENABLE"] | HW["VMGPU_RING_CTRL_RESUME"])
        ur.wait_fence(0xA2, "the WAIT re-checked on RESUME")
    finally:
        stop_rings(dev, ur, other)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_share(pid, seconds):
    """The share of one CPU the process used over the next seconds."""
    cpu, wall = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(pid) - cpu) / (time.monotonic() - wall)


def test_wait_is_not_a_busy_loop(qt, dev):
    map_user_vm(qt, dev)
    waiter, worker = UserRing(dev, 1), UserRing(dev, 2)
    try:
        waiter.submit(wait_cmd(9), waiter.fence(0x71))
        poll(lambda: waiter.reg("STATUS") & bit("WAITING"), "ring 1 waiting")
        # No qtest command and no clock step: a device that polled its WAIT
        # would keep QEMU's main loop spinning all along (a whole core). An
        # idle one only wakes for its VMGPU_WAIT_RECHECK_US timer, whose
        # virtual deadline qtest never reaches: measured at 0.2 to 0.3 of a
        # core on this host. The quietest of a few windows, so that a
        # moment of noise on a shared machine does not count.
        assert min(cpu_share(qt.proc.pid, 0.4) for _ in range(3)) < 0.5, \
            "QEMU kept spinning while a ring waited"
        # Other rings run meanwhile, even through the waiting ring's VM, and
        # their writes re-check the WAIT: unmet, then met by a user ring.
        worker.submit(cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0x2222), worker.fence(0x72))
        worker.wait_fence(0x72, "work on another ring")
        assert qt.readl(WPAGE + 0x1000) == 0x2222
        check_waiting(waiter, 1)
        worker.submit(cmd_fence(addr("VIRTUAL", WVA, 1), 9, irq=False), worker.fence(0x73))
        waiter.wait_fence(0x71, "the WAIT met by a user ring's FENCE")
        assert worker.fence_word() == 0x73
    finally:
        stop_rings(dev, waiter, worker)


def test_wait_faults_and_bad_fields(qt, dev):
    map_user_vm(qt, dev)
    ur, other = UserRing(dev, 1), UserRing(dev, 2)
    try:
        ack_errors(dev)
        ur.submit(wait_cmd(1, UNMAPPED_VA), ur.fence(0x81))
        other.submit(other.fence(0x82))
        poll(lambda: ur.reg("STATUS") & bit("HALTED"), "WAIT on an unmapped VA halting")
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_VM_FAULT"]
        assert dev.reg("VMGPU_REG_ERROR_RING") == 1 and dev.reg("VMGPU_REG_ERROR_SLOT") == 1
        assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") | dev.reg("VMGPU_REG_ERROR_ADDR_HI") << 32 \
            == UNMAPPED_VA
        assert not ur.reg("STATUS") & bit("WAITING") and ur.reg("HEAD") == 1
        other.wait_fence(0x82, "ring 2 next to a faulted ring")
        assert ur.fence_word() != 0x81
        stop_rings(dev, ur)
        # Each re-check walks the table again: unmapping the page under an
        # unmet WAIT faults at the next re-check.
        ur.enable()
        ur.submit(wait_cmd(1), ur.fence(0x83))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "ring 1 waiting")
        qt.writeq(VM1_ROOT + 0x3000, 0)
        other.submit(other.fence(0x84))
        poll(lambda: ur.reg("STATUS") & bit("HALTED"), "WAIT on a page unmapped under it")
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_VM_FAULT"]
        stop_rings(dev, ur)
        map_user_vm(qt, dev)
        ur.enable()
        for bad in (wait_cmd(1, WVA + 4), cmd_wait(addr("VIRTUAL", WVA, 1), 1, flags=1),
                    wait_cmd(1)[:60] + b"\x01\x00\x00\x00"):
            expect_user_halt(ur, "VMGPU_ERR_BAD_FIELD", bad)
        expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE", cmd_wait(addr("SYSTEM", WPAGE), 1))
        # The paging ring may wait on any space.
        qt.writeq(DATA + 0x88000, 0x10)
        dev.submit(cmd_wait(addr("SYSTEM", DATA + 0x88000), 0x10),
                   cmd_fence(addr("SYSTEM", FENCE), 0x85))
        dev.wait_idle()
        assert u64(qt.read(FENCE, 8)) == 0x85
    finally:
        stop_rings(dev, ur, other)


def test_ring_reset_drops_wait(qt, dev):
    map_user_vm(qt, dev)
    ur, other = UserRing(dev, 1), UserRing(dev, 2)
    try:
        ur.submit(wait_cmd(3), cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0x3333),
                  ur.fence(0x91))
        other.submit(cmd_nop(300), other.fence(0x92))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "ring 1 waiting")
        assert ur.reg("HEAD") == 1
        ur.stop()
        for name in ("STATUS", "HEAD", "TAIL"):
            assert ur.reg(name) == 0, f"ring 1 {name} {ur.reg(name):#x} after CTRL = 0"
        # The dropped WAIT is gone, not parked: meeting it now runs nothing,
        # and its timer (past its period) re-checks nothing.
        qt.writeq(WPAGE, 3)
        for _ in range(10):
            qt.step(100000)
        other.wait_fence(0x92, "ring 2's queued work after ring 1 was reset")
        assert qt.readl(WPAGE + 0x1000) == 0 and ur.fence_word() != 0x91
        assert ur.reg("STATUS") == 0
        ur.enable()
        ur.submit(ur.fence(0x93))
        ur.wait_fence(0x93, "new work on the re-enabled ring")
        assert qt.readl(WPAGE + 0x1000) == 0
        # RESET drops a WAIT too.
        qt.writeq(WPAGE, 0)
        ur.submit(wait_cmd(3))
        poll(lambda: ur.reg("STATUS") & bit("WAITING"), "ring 1 waiting")
        dev.setup()
        assert ur.reg("STATUS") == 0
        qt.step(1000000)
        assert ur.reg("STATUS") == 0
    finally:
        stop_rings(dev, ur, other)


VM2_ROOT = 0x700000


def test_set_vm_binds_a_ring_to_one_vm(qt, dev):
    """A VIRTUAL ring reaches only the VM of its last SET_VM, and only while
    that VM has not been reprogrammed since (lent to another space)."""
    map_user_vm(qt, dev)
    # VM 2 maps the same VA onto its own page.
    other_page = DATA + 0xA0000
    build_page_table(qt, VM2_ROOT, WVA, [("SYSTEM", other_page), ("SYSTEM", other_page)])
    enable_vm(dev, 2, VM2_ROOT)
    qt.write(other_page, bytes(64))
    unbound, ur = UserRing(dev, 2, bind=False), UserRing(dev, 1)
    phys = UserRing(dev, 3, "PHYSICAL")
    data = WPAGE + 0x1000
    try:
        # Each CTRL write of a VM bumps its generation.
        gen = vm_generation(dev, 2)
        enable_vm(dev, 2, VM2_ROOT)
        assert vm_generation(dev, 2) == (gen + 1) & 0xFFFFFFFF
        # Not bound since enabled: no VIRTUAL access at all.
        expect_user_halt(unbound, "VMGPU_ERR_PRIVILEGE",
                         cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0xBAD))
        # Bound to VM 1: VM 1 yes, VM 2 no.
        ur.submit(cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0x5E7F111), ur.fence(1))
        ur.wait_fence(1, "FILL through the bound VM")
        assert qt.readl(data) == 0x5E7F111
        expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE",
                         cmd_fill(addr("VIRTUAL", WVA, 2), 64, 0xBAD))
        # VM 1 lent again (reprogrammed): the old binding reaches nothing,
        # a SET_VM of the new generation does.
        enable_vm(dev, 1, VM1_ROOT)
        expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE",
                         cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0xBAD))
        expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE",
                         cmd_wait(addr("VIRTUAL", WVA, 1), 0))
        ur.submit(cmd_set_vm(1, vm_generation(dev, 1)),
                  cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0x600D2), ur.fence(2))
        ur.wait_fence(2, "FILL after a SET_VM of the new generation")
        assert qt.readl(data) == 0x600D2
        # Rebinding to VM 2 leaves VM 1 out.
        ur.submit(cmd_set_vm(2, vm_generation(dev, 2)),
                  cmd_fill(addr("VIRTUAL", WVA, 2), 64, 0x2222), ur.fence(3))
        ur.wait_fence(3, "FILL through VM 2 after SET_VM 2")
        assert qt.readl(other_page) == 0x2222
        expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE",
                         cmd_fill(addr("VIRTUAL", WVA + 0x1000, 1), 64, 0xBAD))
        # Stopping the ring unbinds it.
        ur.stop()
        ur.bind = False
        ur.enable()
        expect_user_halt(ur, "VMGPU_ERR_PRIVILEGE",
                         cmd_fill(addr("VIRTUAL", WVA, 2), 64, 0xBAD))
        # Bad SET_VMs: the paging VM, no VM, flags, reserved words.
        for bad in (cmd_set_vm(0, 0), cmd_set_vm(HW["VMGPU_MAX_VMS"], 0),
                    cmd_set_vm(1, 0, flags=1), cmd_set_vm(1, 0)[:60] + b"\x01\x00\x00\x00"):
            expect_user_halt(ur, "VMGPU_ERR_BAD_FIELD", bad)
        # Only VIRTUAL user rings run in a user VM.
        expect_user_halt(phys, "VMGPU_ERR_PRIVILEGE", cmd_set_vm(1, vm_generation(dev, 1)))
        expect_halt(dev, "VMGPU_ERR_PRIVILEGE", cmd_set_vm(1, vm_generation(dev, 1)))
        assert qt.readl(data) == 0x600D2 and qt.readl(other_page) == 0x2222, \
            "a refused command wrote through a VM"
    finally:
        stop_rings(dev, unbound, ur, phys)


TESTS = [
    test_fence_ring_word, test_user_ring_modes, test_wait_met_by_another_ring,
    test_wait_sees_cpu_write_by_timer, test_wait_rechecked_on_doorbell_and_resume,
    test_wait_is_not_a_busy_loop,
    test_wait_faults_and_bad_fields, test_set_vm_binds_a_ring_to_one_vm,
    # Last: its device reset leaves the rings without a size, as at power-on.
    test_ring_reset_drops_wait,
]
