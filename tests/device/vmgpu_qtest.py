# SPDX-License-Identifier: MIT
"""The qtest harness of the vmgpu device tests: QEMU over the qtest
protocol, the device with its BARs and paging ring, command builders and
the helpers the tests share.
"""
import base64
import contextlib
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from vmgpu_hw import HW  # noqa: E402
from vmgpu_qmp import Qmp  # noqa: E402

MMIO = 0xF0000000
MSIX = 0xF0100000
VRAM_BAR = 0xC0000000
HAP_BAR = 0xD0000000
RING = 0x100000
RING_SHIFT = 6
FENCE = 0x110000
FENCE_WORDS = 0x118000  # ring r's fence word (RING_FENCE_ADDR) is at + 8 * r
GART_TABLE = 0x120000
DATA = 0x200000
VRAM_SIZE = 16 << 20
ECAM = 0xB0000000
# Small slices, so that every copy in these tests spans several of them.
DEVICE_ARGS = "vmgpu,segments=8M:64K,,8M:4K,bar-size=4M,host-aperture-size=1M,copy-budget=4K"


def run_qemu(qemu, device_args, *extra, qmp=()):
    """Start QEMU with one vmgpu, send it the QMP commands in qmp and quit."""
    commands = [{"execute": "qmp_capabilities"}, *qmp, {"execute": "quit"}]
    return subprocess.run(
        [qemu, "-L", "/usr/share/seabios", "-L", "/usr/share/qemu", "-machine", "q35",
         "-accel", "qtest", "-nodefaults", "-display", "none", "-m", "64M",
         "-device", device_args, "-qmp", "stdio", *extra],
        input="".join(json.dumps(c) + "\n" for c in commands),
        capture_output=True, text=True, timeout=60)


class QTest:
    def __init__(self, qemu, device_args, pre_args=(), qmp=False):
        """pre_args go before the vmgpu device on the command line (an
        IOMMU must be created before the devices it translates for). With
        qmp, self.qmp is a QMP connection to the same QEMU."""
        self.qemu = qemu
        self.dir = tempfile.mkdtemp(prefix="vmgpu-qtest-")
        path = os.path.join(self.dir, "qtest.sock")
        qmp_path = os.path.join(self.dir, "qmp.sock")
        qmp_args = ("-qmp", f"unix:{qmp_path},server=on,wait=off") if qmp else ()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(1)
        self.proc = subprocess.Popen(
            [qemu, "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
             "-machine", "q35", "-accel", "qtest", "-nodefaults",
             "-display", "none", "-m", "64M", "-qtest", f"unix:{path}",
             "-qtest-log", "/dev/null", *qmp_args, *pre_args,
             "-device", device_args, "-d", "guest_errors",
             "-D", os.path.join(self.dir, "qemu.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        server.settimeout(30)
        self.sock, _ = server.accept()
        server.close()
        self.buf = b""
        self.qmp = Qmp(qmp_path) if qmp else None

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\n")
        return self.reply(line)

    def batch(self, lines):
        """Send several commands at once. QEMU handles the whole batch in one
        read of its qtest socket, so no bottom half runs in between: the
        replies are one snapshot of the device."""
        self.sock.sendall("".join(line + "\n" for line in lines).encode())
        return [self.reply(line) for line in lines]

    def reply(self, line):
        while True:
            while b"\n" not in self.buf:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise RuntimeError("QEMU went away")
                self.buf += chunk
            reply, self.buf = self.buf.split(b"\n", 1)
            reply = reply.decode()
            if reply.startswith("IRQ"):
                continue
            if not reply.startswith("OK"):
                raise RuntimeError(f"{line!r}: {reply}")
            return reply[3:]

    def close(self):
        # Like libqtest: QEMU does not exit when the qtest socket closes.
        if self.qmp:
            self.qmp.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.sock.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def guest_log(self):
        with open(os.path.join(self.dir, "qemu.log"), errors="replace") as f:
            return f.read()

    # Guest memory and MMIO
    def write(self, addr, data):
        self.cmd(f"b64write 0x{addr:x} {len(data)} {base64.b64encode(data).decode()}")

    def read(self, addr, size):
        return base64.b64decode(self.cmd(f"b64read 0x{addr:x} {size}"))

    def writel(self, addr, val):
        self.cmd(f"writel 0x{addr:x} 0x{val:x}")

    def readl(self, addr):
        return int(self.cmd(f"readl 0x{addr:x}"), 16)

    def writeq(self, addr, val):
        self.cmd(f"writeq 0x{addr:x} 0x{val:x}")

    def readq(self, addr):
        return int(self.cmd(f"readq 0x{addr:x}"), 16)

    def step(self, ns=None):
        """Advance the virtual clock; returns its new value in ns."""
        return int(self.cmd("clock_step" + (f" {ns}" if ns else "")))

    # PCI config space through the legacy 0xcf8/0xcfc ports
    def cfg_addr(self, dev, reg):
        return 0x80000000 | (dev << 11) | (reg & 0xFC)

    def cfg_read(self, dev, reg):
        self.cmd(f"outl 0xcf8 0x{self.cfg_addr(dev, reg):x}")
        return int(self.cmd("inl 0xcfc"), 16)

    def cfg_write(self, dev, reg, val):
        self.cmd(f"outl 0xcf8 0x{self.cfg_addr(dev, reg):x}")
        self.cmd(f"outl 0xcfc 0x{val:x}")


class Device:
    """The vmgpu function with its BARs assigned and a paging ring."""

    def __init__(self, qt):
        self.qt = qt
        self.dev = next(d for d in range(32)
                        if qt.cfg_read(d, 0) == (HW["VMGPU_PCI_DEVICE_ID"] << 16 |
                                                 HW["VMGPU_PCI_VENDOR_ID"]))
        self.setup()

    def setup(self):
        """Assign the BARs, reset the device and start the paging ring."""
        self.assign_bars()
        self.tail = 0
        self.reg_write("VMGPU_REG_RESET", HW["VMGPU_RESET_VALUE"])
        self.ring_reg_write("VMGPU_RING_BASE_LO", RING)
        self.ring_reg_write("VMGPU_RING_BASE_HI", 0)
        self.ring_reg_write("VMGPU_RING_SIZE_SHIFT", RING_SHIFT)
        self.ring_reg_write("VMGPU_RING_FENCE_ADDR_LO", FENCE_WORDS)
        self.ring_reg_write("VMGPU_RING_FENCE_ADDR_HI", 0)
        self.ring_reg_write("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"])

    def assign_bars(self):
        qt = self.qt
        qt.cfg_write(self.dev, 0x10, MMIO)
        qt.cfg_write(self.dev, 0x14, MSIX)
        qt.cfg_write(self.dev, 0x18, VRAM_BAR)
        qt.cfg_write(self.dev, 0x1C, 0)
        qt.cfg_write(self.dev, 0x20, HAP_BAR)
        qt.cfg_write(self.dev, 0x24, 0)
        qt.cfg_write(self.dev, 0x04, 0x6)  # memory decode + bus master

    def reg(self, name):
        return self.qt.readl(MMIO + HW[name])

    def reg_write(self, name, val):
        self.qt.writel(MMIO + HW[name], val)

    def ring_reg(self, name):
        return self.qt.readl(MMIO + HW["VMGPU_REG_RING0"] + HW[name])

    def ring_reg_write(self, name, val):
        self.qt.writel(MMIO + HW["VMGPU_REG_RING0"] + HW[name], val)

    def ring_mmio(self, ring, name):
        return MMIO + HW["VMGPU_REG_RING0"] + ring * 0x40 + HW[name]

    def submit(self, *cmds):
        for c in cmds:
            assert len(c) == 64
            self.qt.write(RING + self.tail * 64, c)
            self.tail = (self.tail + 1) % (1 << RING_SHIFT)
        self.ring_reg_write("VMGPU_RING_TAIL", self.tail)

    def wait_idle(self, max_steps=1000):
        for _ in range(max_steps):
            status = self.ring_reg("VMGPU_RING_STATUS")
            if not status & HW["VMGPU_RING_STATUS_BUSY"]:
                return status
            self.qt.step(100000)
        raise RuntimeError("ring never went idle")


@contextlib.contextmanager
def own_qemu(qt, device_args, pre_args=()):
    """Another QEMU with the device as device_args say: (QTest, Device)."""
    oqt = QTest(qt.qemu, device_args, pre_args)
    try:
        yield oqt, Device(oqt)
    finally:
        oqt.close()


def addr(space, a, vm=0):
    return struct.pack("<QII", a, HW[f"VMGPU_SPACE_{space}"], vm)


def header(op, flags=0):
    return struct.pack("<HHI", HW[f"VMGPU_OP_{op}"], flags, 0)


def cmd_nop(delay_us=0):
    return header("NOP") + struct.pack("<I", delay_us) + bytes(52)


# The dst of a FENCE with VMGPU_FENCE_FLAG_RING.
NO_ADDR = bytes(16)


def cmd_fence(dst, value, irq=True, ring=False):
    flags = (HW["VMGPU_FENCE_FLAG_IRQ"] if irq else 0) | \
        (HW["VMGPU_FENCE_FLAG_RING"] if ring else 0)
    return header("FENCE", flags) + dst + struct.pack("<Q", value) + bytes(32)


def cmd_fill(dst, size, pattern, flags=0):
    return header("FILL", flags) + dst + struct.pack("<QI", size, pattern) + bytes(28)


def cmd_transfer(src, dst, size, flags=0):
    return header("TRANSFER", flags) + src + dst + struct.pack("<Q", size) + bytes(16)


def cmd_range(op, a, size, flags=0):
    return header(op, flags) + a + struct.pack("<Q", size) + bytes(32)


def cmd_wait(a, value, flags=0):
    return header("WAIT", flags) + a + struct.pack("<Q", value) + bytes(32)


def cmd_set_vm(vm, generation, flags=0):
    return header("SET_VM", flags) + struct.pack("<II", vm, generation) + bytes(48)


def vm_generation(dev, vm):
    return dev.qt.readl(MMIO + HW["VMGPU_REG_VM0"] + vm * 0x10 + HW["VMGPU_VM_GENERATION"])


def swizzle_offset(off):
    block = (off >> 6) & 63
    return ((((block & 7) << 3) | (block >> 3)) << 6) | (off & 63)


def pattern_bytes(seed, size):
    return bytes((seed * 131 + i * 7 + (i >> 8)) & 0xFF for i in range(size))


def map_gart(qt, dev, pages):
    for i, page in enumerate(pages):
        qt.write(GART_TABLE + i * 8, struct.pack("<Q", page | HW["VMGPU_GART_PTE_VALID"]))
    dev.reg_write("VMGPU_REG_GART_BASE_LO", GART_TABLE)
    dev.reg_write("VMGPU_REG_GART_BASE_HI", 0)
    dev.reg_write("VMGPU_REG_GART_NUM_PAGES", len(pages) + 1)


def build_page_table(qt, base, va, pages):
    """4-level table at base (system memory) mapping va.. to pages."""
    levels = [base, base + 0x1000, base + 0x2000, base + 0x3000]
    for i in range(3):
        index = (va >> (12 + 9 * (3 - i))) & 511
        entry = levels[i + 1] | HW["VMGPU_PTE_VALID"] | \
            (HW["VMGPU_SPACE_SYSTEM"] << HW["VMGPU_PTE_SPACE_SHIFT"])
        qt.write(levels[i] + index * 8, struct.pack("<Q", entry))
    for n, (space, page) in enumerate(pages):
        index = ((va >> 12) + n) & 511
        entry = page | HW["VMGPU_PTE_VALID"] | HW["VMGPU_PTE_WRITE"] | \
            (HW[f"VMGPU_SPACE_{space}"] << HW["VMGPU_PTE_SPACE_SHIFT"])
        qt.write(levels[3] + index * 8, struct.pack("<Q", entry))


def enable_vm(dev, vm, root):
    base = HW["VMGPU_REG_VM0"] + vm * 0x10
    dev.qt.writel(MMIO + base + HW["VMGPU_VM_ROOT_LO"], root)
    dev.qt.writel(MMIO + base + HW["VMGPU_VM_ROOT_HI"], 0)
    dev.qt.writel(MMIO + base + HW["VMGPU_VM_CTRL"], HW["VMGPU_VM_CTRL_ENABLE"] |
                  HW["VMGPU_SPACE_SYSTEM"] << HW["VMGPU_VM_CTRL_SPACE_SHIFT"])


def expect_halt(dev, code, bad_cmd):
    dev.reg_write("VMGPU_REG_ERROR_ACK", 1)
    slot = dev.tail
    dev.submit(bad_cmd, cmd_fence(addr("SYSTEM", FENCE), 0x99))
    status = dev.wait_idle()
    assert status & HW["VMGPU_RING_STATUS_HALTED"], "ring did not halt"
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW[code], \
        f"error {dev.reg('VMGPU_REG_ERROR_CODE')} instead of {code}"
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == slot
    assert dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_ERROR"]
    assert struct.unpack("<Q", dev.qt.read(FENCE, 8))[0] != 0x99
    dev.ring_reg_write("VMGPU_RING_CTRL", HW["VMGPU_RING_CTRL_ENABLE"] |
                       HW["VMGPU_RING_CTRL_RESUME"])
    dev.wait_idle()
    assert struct.unpack("<Q", dev.qt.read(FENCE, 8))[0] == 0x99
    dev.qt.write(FENCE, bytes(8))
    dev.reg_write("VMGPU_REG_ERROR_ACK", 1)
    dev.reg_write("VMGPU_REG_INT_STATUS", HW["VMGPU_INT_ERROR"])


def u64(data):
    return struct.unpack("<Q", data)[0]


def ack_errors(dev):
    dev.reg_write("VMGPU_REG_ERROR_ACK", 1)
    dev.reg_write("VMGPU_REG_INT_STATUS", HW["VMGPU_INT_ERROR"])


def poll(pred, what, tries=2000):
    """Wait for pred() without stepping the virtual clock: every qtest
    command is a main-loop iteration, so the engine's bottom half runs in
    between, but no timer fires."""
    for _ in range(tries):
        if pred():
            return
    raise AssertionError(f"{what}: never happened")


def system_reset(dev):
    """A guest-triggered system reset (port 0xcf9), waited for: the
    device's first BAR reads back unassigned."""
    dev.qt.cmd("outb 0xcf9 0x6")
    poll(lambda: dev.qt.cfg_read(dev.dev, 0x10) == 0, "system reset", tries=1000)
