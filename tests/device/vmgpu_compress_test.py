# SPDX-License-Identifier: MIT
"""Device-level tests of contract v1.3: the compression state, COMPRESS,
DECOMPRESS, NOTIFY and CAP_IOMMU_DMA; v1.5: owners (VM_ASID), the quota
and FORGET; v1.9: pages past the capacity or the quota left raw.
vmgpu_device_test.py runs them.

Each test starts from a RESET of the shared device (an empty compressed
set) or starts its own QEMU: noncoherent=on for the cache, an intel-iommu
for CAP_IOMMU_DMA, a small compress-pages for the capacity.
"""
import struct

from vmgpu_qtest import (
    DEVICE_ARGS, HW, MMIO, VRAM_BAR, Device, QTest, ack_errors, addr,
    build_page_table, cmd_fill, cmd_range, cmd_transfer, enable_vm, expect_halt, map_gart,
    own_qemu, pattern_bytes, run_qemu, system_reset)
from vmgpu_cache_test import (
    NONCOHERENT, WB, device_reads, flush_range, halt_and_resume, nc_device, run, set_mode,
    words)
from vmgpu_user_ring_test import UserRing, expect_user_halt

PAGE = 0x1000
XOR = HW["VMGPU_COMPRESS_XOR"]
EVICT = HW["VMGPU_NOTIFY_FLAG_EVICTION"]
UNMAP = HW["VMGPU_NOTIFY_FLAG_IOMMU_UNMAP"]
DISCARD = HW["VMGPU_DISCARD_PATTERN"]
# System pages of these tests, clear of the other tests' memory.
PAGES = 0x900000
VM0_ROOT = 0x1800000    # the paging VM, past PAGES + 8 MiB
VM1_ROOT = 0x1810000
VA0 = 0x20_0000_0000
VA1 = 0x30_0000_0000
SCRATCH = 0x340000      # VRAM the device's reads land in


def page(n):
    return PAGES + n * PAGE


def encode(data):
    """What a compressed page stores: each LE word XORed with the key."""
    key = struct.pack("<I", XOR) * (len(data) // 4)
    return bytes(a ^ b for a, b in zip(data, key))


def compress(space, a, size, vm=0):
    return cmd_range("COMPRESS", addr(space, a, vm), size)


def decompress(space, a, size, vm=0):
    return cmd_range("DECOMPRESS", addr(space, a, vm), size)


def notify(flags, va, size, vm=0):
    return cmd_range("NOTIFY", addr("VIRTUAL", va, vm), size, flags)


def virt_reads(dev, va, vm, size=PAGE):
    """What a VIRTUAL TRANSFER reads at va: copied to VRAM and read back."""
    dev.qt.write(VRAM_BAR + SCRATCH, bytes(size))
    run(dev, cmd_transfer(addr("VIRTUAL", va, vm), addr("VRAM", SCRATCH), size))
    return dev.qt.read(VRAM_BAR + SCRATCH, size)


def fresh(dev, pages=()):
    """RESET the shared device (an empty compressed set) and write each
    (page number, data) of pages to memory."""
    dev.setup()
    for n, data in pages:
        dev.qt.write(page(n), data)


def map_vm(dev, vm, root, va, pages):
    """VM vm maps exactly pages at va: its four tables are rebuilt."""
    dev.qt.write(root, bytes(4 * PAGE))
    build_page_table(dev.qt, root, va, pages)
    enable_vm(dev, vm, root)


def own_device(qt, extra="", pre_args=()):
    """A second QEMU with the device, given extra properties."""
    return own_qemu(qt, DEVICE_ARGS + extra, pre_args)


def iommu_device(qt, extra=""):
    return own_device(qt, extra, pre_args=("-device", "intel-iommu"))


def test_compress_system_page(qt, dev):
    data = pattern_bytes(60, 2 * PAGE)
    fresh(dev, [(0, data)])
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(0)), ("SYSTEM", page(1))])
    map_gart(qt, dev, [page(0)])
    run(dev, compress("SYSTEM", page(0), 2 * PAGE))
    assert qt.read(page(0), 2 * PAGE) == encode(data), "COMPRESS did not encode in place"
    # VIRTUAL (ring 0, VM 1) reads decode; physical reads see the stored bytes.
    assert virt_reads(dev, VA1, 1, 2 * PAGE) == data, "VIRTUAL read not decoded"
    assert device_reads(dev, page(0), SCRATCH, 2 * PAGE) == encode(data)
    run(dev, cmd_transfer(addr("GART", 0), addr("VRAM", SCRATCH), PAGE))
    assert qt.read(VRAM_BAR + SCRATCH, PAGE) == encode(data[:PAGE]), "GART read decoded"
    # A VIRTUAL FILL stores encoded words, and the page stays compressed.
    run(dev, cmd_fill(addr("VIRTUAL", VA1 + 0x100, 1), 0x100, 0x12345678))
    plain = data[:0x100] + words(0x12345678, 0x100) + data[0x200:]
    assert qt.read(page(0), 2 * PAGE) == encode(plain), "VIRTUAL FILL not stored encoded"
    assert virt_reads(dev, VA1, 1, 2 * PAGE) == plain
    # Byte writes at odd offsets: each byte encoded at its place in the page.
    qt.write(VRAM_BAR + SCRATCH + PAGE, b"\x01\x02\x03\x04\x05\x06")
    run(dev, cmd_transfer(addr("VRAM", SCRATCH + PAGE), addr("VIRTUAL", VA1 + PAGE + 0x203, 1),
                          6))
    plain = plain[:PAGE + 0x203] + b"\x01\x02\x03\x04\x05\x06" + plain[PAGE + 0x209:]
    assert qt.read(page(0), 2 * PAGE) == encode(plain)
    assert virt_reads(dev, VA1, 1, 2 * PAGE) == plain


def test_compress_swizzled_transfer(qt, dev):
    # Swizzling moves plain bytes; the encoding is of the stored layout.
    data = pattern_bytes(61, PAGE)
    fresh(dev, [(2, data), (3, bytes(PAGE)), (4, bytes(PAGE))])
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(3))])
    run(dev, compress("VIRTUAL", VA1, PAGE, 1),
        cmd_transfer(addr("SYSTEM", page(2)), addr("VIRTUAL", VA1, 1), PAGE,
                     HW["VMGPU_TRANSFER_FLAG_SWIZZLE"]),
        cmd_transfer(addr("VIRTUAL", VA1, 1), addr("SYSTEM", page(4)), PAGE,
                     HW["VMGPU_TRANSFER_FLAG_UNSWIZZLE"]))
    assert qt.read(page(4), PAGE) == data, "swizzle round trip through a compressed page"
    tiled = qt.read(page(3), PAGE)
    assert tiled != encode(data), "stored linear"
    assert encode(tiled)[0x40:0x80] == data[0x200:0x240], "not the encoding of the tiled page"


def test_compress_same_bus_page(qt, dev):
    # GART, VIRTUAL and SYSTEM names of one page are one compressed page.
    data = pattern_bytes(62, PAGE)
    fresh(dev, [(5, data)])
    map_gart(qt, dev, [page(5)])
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(5))])
    map_vm(dev, 2, VM1_ROOT + 0x4000, VA1, [("GART", 0)])
    run(dev, compress("GART", 0, PAGE))
    assert qt.read(page(5), PAGE) == encode(data)
    run(dev, compress("VIRTUAL", VA1, PAGE, 1), compress("SYSTEM", page(5), PAGE),
        compress("VIRTUAL", VA1, PAGE, 2))
    assert qt.read(page(5), PAGE) == encode(data), "compressed twice"
    assert virt_reads(dev, VA1, 2, PAGE) == data, "VIRTUAL through GART not decoded"
    run(dev, decompress("VIRTUAL", VA1, PAGE, 1))
    assert qt.read(page(5), PAGE) == data, "DECOMPRESS did not decode in place"
    run(dev, decompress("GART", 0, PAGE), decompress("SYSTEM", page(5), PAGE))
    assert qt.read(page(5), PAGE) == data, "decompressed twice"
    assert virt_reads(dev, VA1, 1, PAGE) == data


def test_compress_vram_pages_skipped(qt, dev):
    data = pattern_bytes(63, PAGE)
    fresh(dev, [(6, data)])
    qt.write(VRAM_BAR + 0x350000, data)
    map_vm(dev, 1, VM1_ROOT, VA1, [("VRAM", 0x350000), ("SYSTEM", page(6))])
    run(dev, compress("VIRTUAL", VA1, 2 * PAGE, 1), compress("VRAM", 0x350000, PAGE))
    assert qt.read(VRAM_BAR + 0x350000, PAGE) == data, "a VRAM page was encoded"
    assert qt.read(page(6), PAGE) == encode(data)
    assert virt_reads(dev, VA1, 1, 2 * PAGE) == data + data


def test_compress_dropped_by_raw_writes(qt, dev):
    data = pattern_bytes(64, PAGE)
    fresh(dev)
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(7))])
    map_gart(qt, dev, [page(7)])
    cases = {
        "DECOMPRESS": (decompress("SYSTEM", page(7), PAGE), data),
        "DISCARD": (cmd_range("DISCARD", addr("SYSTEM", page(7)), PAGE), words(DISCARD)),
        "VIRTUAL DISCARD": (cmd_range("DISCARD", addr("VIRTUAL", VA1, 1), PAGE), words(DISCARD)),
        "physical FILL": (cmd_fill(addr("SYSTEM", page(7) + 0x100), 0x100, 0xF111),
                          encode(data)[:0x100] + words(0xF111, 0x100) + encode(data)[0x200:]),
        "GART TRANSFER": (cmd_transfer(addr("VRAM", SCRATCH + PAGE), addr("GART", 0x10), 8),
                          encode(data)[:0x10] + bytes(8) + encode(data)[0x18:]),
    }
    qt.write(VRAM_BAR + SCRATCH + PAGE, bytes(8))
    for what, (cmd, memory) in cases.items():
        qt.write(page(7), data)
        run(dev, compress("SYSTEM", page(7), PAGE), cmd)
        assert qt.read(page(7), PAGE) == memory, f"{what}: memory"
        # The state is gone: VIRTUAL reads the raw bytes.
        assert virt_reads(dev, VA1, 1) == memory, f"{what}: still compressed"


def test_paging_vm_sees_stored_bytes(qt, dev):
    # The kernel's moves and clears go through VM 0: they copy what is
    # stored, and a write drops the state, as physical accesses do.
    data = pattern_bytes(68, PAGE)
    fresh(dev, [(10, data)])
    map_vm(dev, 0, VM0_ROOT, VA0, [("SYSTEM", page(10))])
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(10))])
    run(dev, compress("SYSTEM", page(10), PAGE))
    assert virt_reads(dev, VA0, 0) == encode(data), "VM 0 read decoded"
    assert virt_reads(dev, VA1, 1) == data, "VM 1 read not decoded"
    run(dev, cmd_fill(addr("VIRTUAL", VA0 + 0x100, 0), 0x100, 0xF222))
    memory = encode(data)[:0x100] + words(0xF222, 0x100) + encode(data)[0x200:]
    assert qt.read(page(10), PAGE) == memory, "VM 0 FILL not stored raw"
    assert virt_reads(dev, VA1, 1) == memory, "VM 0 FILL did not drop the state"


def test_notify_eviction_decodes(qt, dev):
    data, other = pattern_bytes(65, PAGE), pattern_bytes(66, PAGE)
    fresh(dev, [(8, data), (9, other)])
    qt.write(VRAM_BAR + 0x360000, encode(data))
    map_vm(dev, 0, VM0_ROOT, VA0,
           [("SYSTEM", page(8)), ("VRAM", 0x360000), ("SYSTEM", page(9))])
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(8)), ("SYSTEM", page(9))])
    run(dev, compress("VIRTUAL", VA1, PAGE, 1))
    run(dev, notify(EVICT, VA0, 3 * PAGE))
    assert qt.read(page(8), PAGE) == data, "EVICTION did not decode in place"
    assert qt.read(page(9), PAGE) == other, "EVICTION touched a plain page"
    assert qt.read(VRAM_BAR + 0x360000, PAGE) == encode(data), "EVICTION touched VRAM"
    assert virt_reads(dev, VA1, 1, 2 * PAGE) == data + other, "still compressed"
    # Again: nothing left to do.
    run(dev, notify(EVICT, VA0, 3 * PAGE))
    assert qt.read(page(8), 2 * PAGE) == data + other


def test_notify_iommu_unmap(qt, dev):
    data = pattern_bytes(67, 2 * PAGE)
    with iommu_device(qt) as (iqt, idev):
        assert idev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_IOMMU_DMA"], "no CAP_IOMMU_DMA"
        iqt.write(page(10), data)
        map_vm(idev, 0, VM0_ROOT, VA0, [("SYSTEM", page(10)), ("SYSTEM", page(11))])
        # VM 1 reads decode (VM 0's data accesses see stored bytes).
        map_vm(idev, 1, VM1_ROOT, VA1, [("SYSTEM", page(10)), ("SYSTEM", page(11))])
        run(idev, compress("VIRTUAL", VA0, 2 * PAGE))
        run(idev, notify(UNMAP, VA0, PAGE))
        assert iqt.read(page(10), 2 * PAGE) == encode(data), "IOMMU_UNMAP decoded"
        # The state is gone from the first page only.
        assert virt_reads(idev, VA1, 1, 2 * PAGE) == encode(data)[:PAGE] + data[PAGE:]
        # Both flags: EVICTION (decode) first.
        run(idev, notify(EVICT | UNMAP, VA0 + PAGE, PAGE))
        assert iqt.read(page(11), PAGE) == data[PAGE:]
        assert virt_reads(idev, VA1 + PAGE, 1) == data[PAGE:], "still compressed"
        assert idev.reg("VMGPU_REG_ERROR_COUNT") == 0


def test_notify_iommu_unmap_noncoherent(qt, dev):
    # IOMMU_UNMAP writes back and drops the lines of the range.
    with iommu_device(qt, ",noncoherent=on") as (iqt, idev):
        set_mode(idev, NONCOHERENT)
        iqt.write(page(12), bytes(2 * PAGE))
        map_vm(idev, 0, VM0_ROOT, VA0, [("SYSTEM", page(12))])
        run(idev, cmd_fill(addr("SYSTEM", page(12)), 2 * PAGE, 0x0A0A))
        assert iqt.read(page(12), 2 * PAGE) == bytes(2 * PAGE)
        run(idev, notify(UNMAP, VA0, PAGE))
        assert iqt.read(page(12), PAGE) == words(0x0A0A), "IOMMU_UNMAP did not write back"
        assert iqt.read(page(13), PAGE) == bytes(PAGE), "a line outside the range written"
        iqt.write(page(12), words(0xC0C0))
        assert device_reads(idev, page(12), SCRATCH) == words(0xC0C0), "line kept"


def test_notify_noncoherent(qt, dev):
    data = pattern_bytes(68, PAGE)
    with nc_device(qt) as (nqt, ndev):
        for n in (14, 15, 16):
            nqt.write(page(n), data)
        map_vm(ndev, 0, VM0_ROOT, VA0, [("SYSTEM", page(14)), ("SYSTEM", page(15))])
        map_vm(ndev, 1, VM1_ROOT, VA1, [("SYSTEM", page(15))])
        # COMPRESS goes through the cache: memory stays plain until a write back.
        run(ndev, compress("SYSTEM", page(17), PAGE))
        run(ndev, cmd_fill(addr("SYSTEM", page(14)), PAGE, 0x1414),
            cmd_fill(addr("SYSTEM", page(16)), PAGE, 0x1616),
            compress("SYSTEM", page(15), PAGE),
            cmd_fill(addr("VIRTUAL", VA1, 1), PAGE, 0x1515))
        assert nqt.read(page(14), 3 * PAGE) == data * 3, "a data write reached memory"
        run(ndev, notify(EVICT, VA0, 2 * PAGE))
        assert nqt.read(page(14), PAGE) == words(0x1414), "dirty line not written back"
        assert nqt.read(page(15), PAGE) == words(0x1515), "not decoded, or not written back"
        assert nqt.read(page(16), PAGE) == data, "a line outside the range was written back"
        # The lines of the range are gone: the device sees CPU writes.
        nqt.write(page(14), words(0x4141))
        nqt.write(page(15), words(0x5151))
        assert device_reads(ndev, page(14), SCRATCH, 2 * PAGE) == \
            words(0x4141) + words(0x5151), "NOTIFY kept a line"
        # The line outside the range is still there, dirty.
        assert device_reads(ndev, page(16), SCRATCH) == words(0x1616)
        run(ndev, flush_range(WB, page(16), PAGE))
        assert nqt.read(page(16), PAGE) == words(0x1616)
        # What COMPRESS left in the cache is the stored, encoded page.
        before = nqt.read(page(17), PAGE)
        run(ndev, flush_range(WB, page(17), PAGE))
        assert nqt.read(page(17), PAGE) == encode(before)


def test_notify_writeback_fault(qt, dev):
    # A write back that fails halts NOTIFY with DMA at the page, like
    # CACHE_FLUSH. The BIOS page takes DMA reads, not writes.
    rom = 0xFFFFF000
    with nc_device(qt) as (nqt, ndev):
        map_vm(ndev, 0, VM0_ROOT, VA0, [("SYSTEM", page(18)), ("SYSTEM", rom)])
        nqt.write(page(18), bytes(PAGE))
        run(ndev, cmd_fill(addr("SYSTEM", page(18)), PAGE, 0x18),
            cmd_fill(addr("SYSTEM", rom + 0x10), 4, 0xBAD))
        assert halt_and_resume(ndev, notify(EVICT, VA0, 2 * PAGE)) == \
            (HW["VMGPU_ERR_DMA"], rom), "failed write back not reported"
        assert nqt.read(page(18), PAGE) == words(0x18), "the page before the fault not done"


def test_compress_on_user_rings(qt, dev):
    data = pattern_bytes(69, PAGE)
    fresh(dev, [(19, data), (20, bytes(PAGE)), (21, data)])
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(19)), ("SYSTEM", page(20))])
    map_vm(dev, 0, VM0_ROOT, VA0, [("SYSTEM", page(19))])
    map_gart(qt, dev, [page(21)])
    virt, phys = UserRing(dev, 1, "VIRTUAL"), UserRing(dev, 3, "PHYSICAL")
    try:
        virt.submit(compress("VIRTUAL", VA1, PAGE, 1),
                    cmd_transfer(addr("VIRTUAL", VA1, 1), addr("VIRTUAL", VA1 + PAGE, 1), PAGE),
                    virt.fence(1))
        virt.wait_fence(1, "COMPRESS on a GPU-VA engine")
        assert qt.read(page(19), PAGE) == encode(data)
        assert qt.read(page(20), PAGE) == data, "the user's VIRTUAL read not decoded"
        virt.submit(decompress("VIRTUAL", VA1, PAGE, 1), virt.fence(2))
        virt.wait_fence(2, "DECOMPRESS on a GPU-VA engine")
        assert qt.read(page(19), PAGE) == data
        phys.submit(compress("GART", 0, PAGE), phys.fence(3))
        phys.wait_fence(3, "COMPRESS on a physical engine")
        assert qt.read(page(21), PAGE) == encode(data)
        for ring, bad in ((virt, compress("VIRTUAL", VA0, PAGE, 0)),
                          (virt, decompress("GART", 0, PAGE)),
                          (virt, notify(EVICT, VA1, PAGE, 1)),
                          (virt, notify(EVICT, VA0, PAGE, 0)),
                          (phys, compress("SYSTEM", page(19), PAGE)),
                          (phys, decompress("VIRTUAL", VA1, PAGE, 1)),
                          (phys, notify(EVICT, VA0, PAGE, 0))):
            expect_user_halt(ring, "VMGPU_ERR_PRIVILEGE", bad)
        assert qt.read(page(19), PAGE) == data, "a refused command ran"
        assert qt.read(page(21), PAGE) == encode(data), "a refused command ran"
    finally:
        virt.stop()
        phys.stop()
        ack_errors(dev)


def expect_bad_field(qt, dev, cmd, logged):
    before = qt.guest_log().count(logged)
    expect_halt(dev, "VMGPU_ERR_BAD_FIELD", cmd)
    assert qt.guest_log().count(logged) == before + 1, f"not logged: {logged}"


def test_compress_notify_bad_fields(qt, dev):
    data = pattern_bytes(70, PAGE)
    fresh(dev, [(22, data)])
    map_vm(dev, 0, VM0_ROOT, VA0, [("SYSTEM", page(22))])
    map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(22))])
    assert not dev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_IOMMU_DMA"]
    bad = [
        (cmd_range("NOTIFY", addr("SYSTEM", page(22)), PAGE, EVICT), "paging VM 0"),
        (notify(EVICT, VA1, PAGE, 1), "paging VM 0"),
        (cmd_range("NOTIFY", addr("GART", 0), PAGE, EVICT), "paging VM 0"),
        (notify(0, VA0, PAGE), "EVICTION and/or"),
        (notify(1 << 2, VA0, PAGE), "EVICTION and/or"),
        (notify(EVICT | 1 << 15, VA0, PAGE), "EVICTION and/or"),
        (notify(UNMAP, VA0, PAGE), "no CAP_IOMMU_DMA"),
        (notify(EVICT | UNMAP, VA0, PAGE), "no CAP_IOMMU_DMA"),
        (notify(EVICT, VA0 + 0x800, PAGE), "not 4 KiB aligned"),
        (notify(EVICT, VA0, 0x800), "not 4 KiB aligned"),
        (notify(EVICT, VA0, 0), "size is 0"),
        (compress("SYSTEM", page(22), PAGE)[:2] + b"\x01\x00" +
         compress("SYSTEM", page(22), PAGE)[4:], "flags must be 0"),
        (compress("SYSTEM", page(22) + 4, PAGE), "not 4 KiB aligned"),
        (decompress("SYSTEM", page(22), PAGE + 4), "not 4 KiB aligned"),
        (decompress("SYSTEM", page(22), 0), "size is 0"),
        (compress("SYSTEM", page(22), PAGE, 1), "unknown space"),
        (cmd_range("COMPRESS", struct.pack("<QII", page(22), 7, 0), PAGE), "unknown space"),
    ]
    for cmd, logged in bad:
        expect_bad_field(qt, dev, cmd, logged)
    expect_halt(dev, "VMGPU_ERR_BAD_FIELD", compress("SYSTEM", page(22), PAGE)[:60] + b"\x01" +
                bytes(3))
    expect_halt(dev, "VMGPU_ERR_RANGE", compress("SYSTEM", 0xFFFF_FFFF_FFFF_F000, 2 * PAGE))
    expect_halt(dev, "VMGPU_ERR_RANGE", compress("VRAM", 16 << 20, PAGE))
    assert qt.read(page(22), PAGE) == data, "a refused command changed the page"


def test_notify_vm_fault(qt, dev):
    # Each page resolves through VM 0: an unmapped one faults, after the
    # pages before it were done.
    data = pattern_bytes(71, PAGE)
    fresh(dev, [(23, data)])
    map_vm(dev, 0, VM0_ROOT, VA0, [("SYSTEM", page(23))])
    run(dev, compress("SYSTEM", page(23), PAGE))
    ack_errors(dev)
    assert halt_and_resume(dev, notify(EVICT, VA0, 2 * PAGE)) == \
        (HW["VMGPU_ERR_VM_FAULT"], VA0 + PAGE)
    assert qt.read(page(23), PAGE) == data, "the page before the fault not decoded"
    assert halt_and_resume(dev, notify(EVICT, 0x7000_0000_0000, PAGE)) == \
        (HW["VMGPU_ERR_VM_FAULT"], 0x7000_0000_0000)
    # COMPRESS through a VM that is not enabled.
    assert halt_and_resume(dev, compress("VIRTUAL", VA1, PAGE, 5)) == \
        (HW["VMGPU_ERR_VM_FAULT"], VA1)


def test_compress_capacity(qt, dev):
    data = pattern_bytes(72, 4 * PAGE)
    with own_device(qt, ",compress-pages=2") as (oqt, odev):
        oqt.write(page(24), data)
        # v1.9: the page without a place stays raw and is counted; no error.
        errors = odev.reg("VMGPU_REG_ERROR_COUNT")
        run(odev, compress("SYSTEM", page(24), 3 * PAGE))
        assert odev.reg("VMGPU_REG_ERROR_COUNT") == errors, "COMPRESS past the capacity failed"
        assert oqt.read(page(24), 3 * PAGE) == encode(data[:2 * PAGE]) + data[2 * PAGE:3 * PAGE]
        assert odev.reg("VMGPU_REG_COMPRESS_SKIPPED") == 1, "the raw page not counted"
        # Compressed pages are no new ones; a freed place takes one.
        run(odev, compress("SYSTEM", page(24), 2 * PAGE), decompress("SYSTEM", page(24), PAGE),
            compress("SYSTEM", page(26), PAGE))
        assert oqt.read(page(24), 3 * PAGE) == data[:PAGE] + encode(data[PAGE:3 * PAGE])
        # Pages dropped by raw writes, or by RESET, free their places too.
        run(odev, cmd_fill(addr("SYSTEM", page(25)), 4, 0), compress("SYSTEM", page(27), PAGE))
        odev.setup()
        assert odev.reg("VMGPU_REG_COMPRESS_SKIPPED") == 0, "RESET kept the count"
        run(odev, compress("SYSTEM", page(24), 2 * PAGE))
        assert odev.reg("VMGPU_REG_COMPRESS_SKIPPED") == 0, "a page with a place counted"
    for pages in ("0", "65537"):
        proc = run_qemu(qt.qemu, f"vmgpu,compress-pages={pages}")
        assert proc.returncode == 1, f"compress-pages={pages}: QEMU exited {proc.returncode}"
        assert "compress-pages must be" in proc.stderr, proc.stderr


def set_asid(qt, vm, asid):
    qt.writel(MMIO + HW["VMGPU_REG_VM_ASID0"] + 4 * vm, asid)


def expect_asid_register_error(qt, dev, reg, val, logged):
    ack_errors(dev)
    before = qt.guest_log().count(logged)
    qt.writel(MMIO + reg, val)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"], f"{val:#x} accepted"
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == reg
    assert qt.guest_log().count(logged) == before + 1, f"not logged: {logged}"
    ack_errors(dev)


def test_compress_owners_quota_forget(qt, dev):
    # Two address spaces (ASIDs 7 and 8) map the same two pages. A page is
    # decoded only for its owner; the quota stops one ASID, not the other;
    # FORGET drops an ASID's pages; RESET restores quota and ASIDs.
    data = pattern_bytes(74, 3 * PAGE)
    with own_device(qt, ",compress-pages=4") as (oqt, odev):
        assert odev.reg("VMGPU_REG_COMPRESS_PAGES") == 4
        assert odev.reg("VMGPU_REG_COMPRESS_QUOTA") == 4, "the quota is not the capacity"
        oqt.write(page(40), data)
        both = [("SYSTEM", page(40)), ("SYSTEM", page(41)), ("SYSTEM", page(42))]
        map_vm(odev, 1, VM1_ROOT, VA1, both)
        map_vm(odev, 2, VM1_ROOT + 0x4000, VA1, both)
        set_asid(oqt, 1, 7)
        set_asid(oqt, 2, 8)
        assert oqt.readl(MMIO + HW["VMGPU_REG_VM_ASID0"] + 4) == 7
        run(odev, compress("VIRTUAL", VA1, PAGE, 1))
        assert oqt.read(page(40), PAGE) == encode(data[:PAGE])
        assert virt_reads(odev, VA1, 1) == data[:PAGE], "not decoded for its owner"
        assert virt_reads(odev, VA1, 2) == encode(data[:PAGE]), "decoded for another ASID"
        # Another ASID's DECOMPRESS and COMPRESS leave the page as it is.
        run(odev, decompress("VIRTUAL", VA1, PAGE, 2), compress("VIRTUAL", VA1, PAGE, 2))
        assert oqt.read(page(40), PAGE) == encode(data[:PAGE]), "another ASID changed it"
        assert virt_reads(odev, VA1, 1) == data[:PAGE]

        odev.reg_write("VMGPU_REG_COMPRESS_QUOTA", 1)
        errors = odev.reg("VMGPU_REG_ERROR_COUNT")
        run(odev, compress("VIRTUAL", VA1 + PAGE, PAGE, 1))
        assert odev.reg("VMGPU_REG_ERROR_COUNT") == errors, "COMPRESS past the quota failed"
        assert odev.reg("VMGPU_REG_COMPRESS_SKIPPED") == 1, "past the quota not counted"
        assert oqt.read(page(41), PAGE) == data[PAGE:2 * PAGE], "compressed past the quota"
        assert virt_reads(odev, VA1 + PAGE, 1) == data[PAGE:2 * PAGE]
        # ASID 8 owns nothing yet; physical COMPRESS (ASID 0) has no quota.
        run(odev, compress("VIRTUAL", VA1 + PAGE, PAGE, 2), compress("SYSTEM", page(42), PAGE))
        assert virt_reads(odev, VA1 + PAGE, 2) == data[PAGE:2 * PAGE]
        assert virt_reads(odev, VA1 + 2 * PAGE, 1) == encode(data[2 * PAGE:]), \
            "a physical COMPRESS decoded for an ASID"

        # FORGET 7: its page is raw to everyone and its quota free again.
        odev.reg_write("VMGPU_REG_COMPRESS_FORGET", 7)
        assert virt_reads(odev, VA1, 1) == encode(data[:PAGE]), "FORGET kept the page"
        assert virt_reads(odev, VA1 + PAGE, 2) == data[PAGE:2 * PAGE], "FORGET took ASID 8's"
        run(odev, cmd_fill(addr("SYSTEM", page(40)), PAGE, 0x40),
            compress("VIRTUAL", VA1, PAGE, 1))
        assert oqt.read(page(40), PAGE) == encode(words(0x40)), "quota not given back"

        expect_asid_register_error(oqt, odev, HW["VMGPU_REG_COMPRESS_QUOTA"], 5,
                                   "quota above COMPRESS_PAGES")
        expect_asid_register_error(oqt, odev, HW["VMGPU_REG_VM_ASID0"], 3,
                                   "the paging VM's ASID is 0")
        odev.setup()
        assert odev.reg("VMGPU_REG_COMPRESS_QUOTA") == 4, "RESET kept the quota"
        assert oqt.readl(MMIO + HW["VMGPU_REG_VM_ASID0"] + 4) == 0, "RESET kept the ASID"


def snapshot(dev, words_at):
    """Memory words at words_at, then ring 0's STATUS and HEAD, in one
    batch: no engine slice runs in between."""
    lines = [f"readl 0x{a:x}" for a in words_at]
    lines += [f"readl 0x{dev.ring_mmio(0, name):x}"
              for name in ("VMGPU_RING_STATUS", "VMGPU_RING_HEAD")]
    return [int(v, 16) for v in dev.qt.batch(lines)]


def sliced_run(dev, cmd, first, last, polls=20000):
    """Run cmd, which must span slices: seen started (the word at first
    changed) while not done (the word at last unchanged), HEAD on it."""
    slot = dev.tail
    old_first, old_last = snapshot(dev, (first, last))[:2]
    dev.submit(cmd)
    for _ in range(polls):
        a, b, status, head = snapshot(dev, (first, last))
        if a != old_first:
            assert b == old_last, "the whole command ran in one slice"
            assert status & HW["VMGPU_RING_STATUS_BUSY"] and head == slot, \
                f"status {status:#x} head {head}"
            break
    else:
        raise AssertionError("the command never started")
    status = dev.wait_idle()
    assert not status & HW["VMGPU_RING_STATUS_HALTED"]


def map_vm_linear(dev, vm, root, va, bus, n):
    """VM vm maps n pages from bus at va (2 MiB aligned): one table per
    512 pages after the three upper levels at root."""
    qt = dev.qt
    tables = (n + 511) // 512
    qt.write(root, bytes((3 + tables) * PAGE))
    sys_space = HW["VMGPU_SPACE_SYSTEM"] << HW["VMGPU_PTE_SPACE_SHIFT"]
    valid = HW["VMGPU_PTE_VALID"]
    for level in range(2):
        index = (va >> (12 + 9 * (3 - level))) & 511
        qt.write(root + level * PAGE + index * 8,
                 struct.pack("<Q", root + (level + 1) * PAGE | valid | sys_space))
    for t in range(tables):
        index = ((va >> 21) + t) & 511
        qt.write(root + 2 * PAGE + index * 8,
                 struct.pack("<Q", root + (3 + t) * PAGE | valid | sys_space))
    entries = b"".join(struct.pack("<Q", bus + i * PAGE | valid | HW["VMGPU_PTE_WRITE"] |
                                   sys_space) for i in range(n))
    qt.write(root + 3 * PAGE, entries)
    enable_vm(dev, vm, root)


def test_compress_notify_slices(qt, dev):
    # 2048 pages at one page per slice (copy-budget=4K), seen part-way;
    # then the same on a device whose slices take 256 pages: the same memory.
    n = 2048
    one = pattern_bytes(73, PAGE)
    last = page(30 + n - 1) + PAGE - 4
    results = []
    for budget in ("", ",copy-budget=1M"):
        with own_device(qt, budget) as (oqt, odev):
            oqt.write(page(30), one * n)
            map_vm_linear(odev, 0, VM0_ROOT, VA0, page(30), n)
            cmds = [compress("SYSTEM", page(30), n * PAGE),
                    cmd_fill(addr("VIRTUAL", VA0 + 5 * PAGE), PAGE, 0x55),
                    notify(EVICT, VA0, n * PAGE)]
            if not budget:
                sliced_run(odev, cmds[0], page(30), last)
                assert oqt.read(page(30), n * PAGE) == encode(one) * n
                run(odev, cmds[1])
                sliced_run(odev, cmds[2], page(30), last)
            else:
                run(odev, *cmds)
            results.append(oqt.read(page(30), n * PAGE))
    expect = one * 5 + words(0x55) + one * (n - 6)
    assert results[0] == expect, "sliced COMPRESS / NOTIFY"
    assert results[1] == expect, "COMPRESS / NOTIFY in larger slices"


def test_compress_reset_drops_set(qt, dev):
    data = pattern_bytes(74, PAGE)
    for how in ("RESET", "system reset"):
        fresh(dev, [(28, data)])
        run(dev, compress("SYSTEM", page(28), PAGE))
        if how == "RESET":
            dev.reg_write("VMGPU_REG_RESET", HW["VMGPU_RESET_VALUE"])
        else:
            system_reset(dev)
        dev.setup()
        assert qt.read(page(28), PAGE) == encode(data), f"{how}: memory changed"
        map_vm(dev, 1, VM1_ROOT, VA1, [("SYSTEM", page(28))])
        assert virt_reads(dev, VA1, 1) == encode(data), f"{how}: the page is still compressed"


def test_iommu_dma_cap(qt, dev):
    assert not dev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_IOMMU_DMA"]
    with iommu_device(qt) as (iqt, idev):
        assert idev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_IOMMU_DMA"]
    # An IOMMU created after the device does not translate its DMA.
    oqt = QTest(qt.qemu, "intel-iommu", pre_args=("-device", DEVICE_ARGS))
    try:
        assert not Device(oqt).reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_IOMMU_DMA"], \
            "CAP_IOMMU_DMA with the IOMMU created after the device"
    finally:
        oqt.close()


TESTS = [
    test_compress_system_page, test_compress_swizzled_transfer, test_compress_same_bus_page,
    test_compress_vram_pages_skipped, test_compress_dropped_by_raw_writes,
    test_paging_vm_sees_stored_bytes,
    test_notify_eviction_decodes, test_notify_iommu_unmap, test_notify_iommu_unmap_noncoherent,
    test_notify_noncoherent, test_notify_writeback_fault, test_compress_on_user_rings,
    test_compress_notify_bad_fields, test_notify_vm_fault, test_compress_capacity,
    test_compress_notify_slices, test_compress_reset_drops_set, test_iommu_dma_cap,
    test_compress_owners_quota_forget,
]
