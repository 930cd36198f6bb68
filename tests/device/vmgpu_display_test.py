# SPDX-License-Identifier: MIT
"""Device-level tests of contract v1.8: the display controller. Heads,
modes latched by COMMIT at vblank, vblanks at the mode's refresh rate on
the virtual clock, frame CRCs with the cursor composed, scanout from VRAM
and through the aperture, bad sources that blank a head, EDID, hotplug
from QMP and screendump. vmgpu_device_test.py runs them.

Each test starts its own QEMU: two heads, a QMP socket and an id for
qom-set and screendump.
"""
import contextlib
import os
import re
import struct
import zlib

from vmgpu_qtest import (
    DEVICE_ARGS, GART_TABLE, HW, MMIO, MSIX, VRAM_BAR, Device, QTest, ack_errors, map_gart,
    pattern_bytes)

HEADS = 2
ARGS = DEVICE_ARGS + f",id=gpu,heads={HEADS},xres=800,yres=600"
W, H = 64, 48
# 80 x 50 pixels a frame at 250 kHz: exactly 16 ms a frame.
HTOTAL, VTOTAL, CLOCK_KHZ = 80, 50, 250
PERIOD = HTOTAL * VTOTAL * 1000000 // CLOCK_KHZ
FB_A = 0x100000
FB_B = 0x200000
CURSOR = 0x300000
SYSTEM_PAGES = 0x400000     # guest RAM for the aperture scanout
ENABLE = HW["VMGPU_HEAD_CTRL_ENABLE"]
CRC = HW["VMGPU_HEAD_CTRL_CRC"]
XRGB = HW["VMGPU_FORMAT_XRGB8888"]
ARGB = HW["VMGPU_FORMAT_ARGB8888"]
RGB565 = HW["VMGPU_FORMAT_RGB565"]
NOW = HW["VMGPU_HEAD_COMMIT_NOW"]
AT_VBLANK = HW["VMGPU_HEAD_COMMIT_VBLANK"]
CURSOR_NOW = HW["VMGPU_HEAD_COMMIT_CURSOR"]


@contextlib.contextmanager
def display_device(qemu, pre_args=()):
    qt = QTest(qemu, ARGS, pre_args, qmp=True)
    try:
        yield qt, Device(qt)
    finally:
        qt.close()


def head_addr(h, name):
    return MMIO + HW["VMGPU_REG_HEAD0"] + h * 0x80 + HW[name]


def head_reg(qt, h, name):
    return qt.readl(head_addr(h, name))


def head_write(qt, h, name, val):
    qt.writel(head_addr(h, name), val & 0xFFFFFFFF)


def now(qt):
    """The virtual clock, 1 ns on (qtest cannot step by 0)."""
    return qt.step(1)


def set_head(qt, h, fb, space="VRAM", fmt=XRGB, stride=W * 4, w=W, hgt=H,
             ctrl=ENABLE | CRC, commit=NOW):
    for name, val in (("HDISPLAY", w), ("VDISPLAY", hgt), ("HTOTAL", HTOTAL),
                      ("VTOTAL", VTOTAL), ("CLOCK_KHZ", CLOCK_KHZ),
                      ("FB_ADDR_LO", fb), ("FB_ADDR_HI", fb >> 32),
                      ("FB_SPACE", HW[f"VMGPU_SPACE_{space}"]), ("FB_STRIDE", stride),
                      ("FB_FORMAT", fmt), ("CTRL", ctrl)):
        head_write(qt, h, f"VMGPU_HEAD_{name}", val)
    if commit:
        head_write(qt, h, "VMGPU_HEAD_COMMIT", commit)


def to_xrgb(fb, fmt, stride=W * 4, w=W, hgt=H):
    """The model of what a head shows: rows of XRGB8888 words, X = 0."""
    rows = []
    for y in range(hgt):
        line = fb[y * stride:]
        if fmt == RGB565:
            px = struct.unpack_from(f"<{w}H", line)
            row = []
            for p in px:
                r, g, b = p >> 11 & 31, p >> 5 & 63, p & 31
                row.append((r << 3 | r >> 2) << 16 | (g << 2 | g >> 4) << 8 | (b << 3 | b >> 2))
        else:
            row = [p & 0xFFFFFF for p in struct.unpack_from(f"<{w}I", line)]
        rows.append(row)
    return rows


def blend(dst, src):
    a = src >> 24
    out = 0
    for shift in (0, 8, 16):
        c = ((src >> shift & 255) * a + (dst >> shift & 255) * (255 - a) + 127) // 255
        out |= c << shift
    return out


def compose(rows, cursor, cx, cy):
    for y in range(64):
        if 0 <= cy + y < len(rows):
            row = rows[cy + y]
            for x in range(64):
                if 0 <= cx + x < len(row):
                    row[cx + x] = blend(row[cx + x], cursor[y * 64 + x])
    return rows


def crc_of(rows):
    crc = 0
    for row in rows:
        crc = zlib.crc32(struct.pack(f"<{len(row)}I", *row), crc)
    return crc


BLACK = crc_of([[0] * W for _ in range(H)])


def next_frame(qt, h=0):
    """Step to the next vblank; returns (frame count, CRC, CRC frame)."""
    before = head_reg(qt, h, "VMGPU_HEAD_FRAME_COUNT")
    qt.step(PERIOD)
    count = head_reg(qt, h, "VMGPU_HEAD_FRAME_COUNT")
    assert count == before + 1, f"frame count {before} -> {count} in one period"
    return count, head_reg(qt, h, "VMGPU_HEAD_CRC"), head_reg(qt, h, "VMGPU_HEAD_CRC_FRAME")


def fill_vram(qt, at, data):
    qt.write(VRAM_BAR + at, data)


def test_display_identification_and_edid(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        assert dev.reg("VMGPU_REG_CAPS") & HW["VMGPU_CAP_DISPLAY"]
        assert dev.reg("VMGPU_REG_DISPLAY_HEADS") == HEADS
        for h in range(HEADS):
            edid = qt.read(MMIO + HW["VMGPU_REG_EDID0"] + h * 0x100, 128)
            assert edid[:8] == b"\x00\xff\xff\xff\xff\xff\xff\x00", f"head {h}: no EDID"
            assert sum(edid) % 256 == 0, "EDID checksum"
            # The first detailed timing is the preferred mode: xres x yres.
            assert edid[56] | (edid[58] >> 4) << 8 == 800
            assert edid[59] | (edid[61] >> 4) << 8 == 600
            assert head_reg(qt, h, "VMGPU_HEAD_STATUS") == HW["VMGPU_HEAD_STATUS_CONNECTED"]
        # A head the device does not have is a bad register.
        ack_errors(dev)
        head_write(qt, HEADS, "VMGPU_HEAD_CTRL", ENABLE)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"]
        # The EDID is read-only: a write is a bad register, and changes nothing.
        ack_errors(dev)
        edid = MMIO + HW["VMGPU_REG_EDID0"] + 0x100
        before = qt.read(edid, 16)
        qt.writel(edid + 8, 0x12345678)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"]
        assert dev.reg("VMGPU_REG_ERROR_SLOT") == HW["VMGPU_REG_EDID0"] + 0x108
        assert qt.read(edid, 16) == before
        assert qt.readl(edid) == int.from_bytes(before[:4], "little")
        ack_errors(dev)


def test_vblanks_at_the_refresh_rate(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        fill_vram(qt, FB_A, pattern_bytes(1, W * H * 4))
        t0 = now(qt)
        set_head(qt, 0, FB_A, ctrl=ENABLE)
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_ACTIVE"]
        # Masked: the event is recorded, no interrupt.
        qt.step(PERIOD)
        assert dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_VBLANK0"]
        assert not dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_DISPLAY"]
        dev.reg_write("VMGPU_REG_DISPLAY_EVENTS", 0xFFFFFFFF)
        dev.reg_write("VMGPU_REG_DISPLAY_EVENT_MASK", HW["VMGPU_DISPLAY_EVENT_VBLANK0"])
        dev.reg_write("VMGPU_REG_INT_MASK", HW["VMGPU_INT_DISPLAY"])
        qt.step(9 * PERIOD - 1)
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == 9
        qt.step(1)
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == 10
        time = head_reg(qt, 0, "VMGPU_HEAD_FRAME_TIME_LO") | \
            head_reg(qt, 0, "VMGPU_HEAD_FRAME_TIME_HI") << 32
        assert time == t0 + 10 * PERIOD, f"vblank at {time}, expected {t0 + 10 * PERIOD}"
        assert dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_DISPLAY"]
        # A new mode on the active head: its first frame starts at the COMMIT.
        t1 = now(qt)
        head_write(qt, 0, "VMGPU_HEAD_CLOCK_KHZ", CLOCK_KHZ * 2)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", NOW)
        qt.step(PERIOD // 2 - 1)
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == 10
        qt.step(1)
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == 11
        time = head_reg(qt, 0, "VMGPU_HEAD_FRAME_TIME_LO") | \
            head_reg(qt, 0, "VMGPU_HEAD_FRAME_TIME_HI") << 32
        assert time == t1 + PERIOD // 2
        # The other head is off: no vblanks of its own.
        assert head_reg(qt, 1, "VMGPU_HEAD_FRAME_COUNT") == 0
        assert not dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_VBLANK0"] << 1
        # Off: the count stops.
        set_head(qt, 0, FB_A, ctrl=0)
        qt.step(5 * PERIOD)
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == 11
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_ACTIVE"]


def pending_flip(qt, dev, seed):
    """Head 0 shows A, a COMMIT 1 to B waits for the next vblank, and no
    display event is left. Returns A's and B's bytes and A's frame CRC."""
    a = pattern_bytes(seed, W * H * 4)
    b = pattern_bytes(seed + 1, W * H * 4)
    fill_vram(qt, FB_A, a)
    fill_vram(qt, FB_B, b)
    set_head(qt, 0, FB_A)
    _, crc, _ = next_frame(qt)
    head_write(qt, 0, "VMGPU_HEAD_FB_ADDR_LO", FB_B)
    head_write(qt, 0, "VMGPU_HEAD_COMMIT", AT_VBLANK)
    dev.reg_write("VMGPU_REG_DISPLAY_EVENTS", 0xFFFFFFFF)
    return a, b, crc


def test_flip_latches_at_vblank(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        a, b, crc = pending_flip(qt, dev, 2)
        assert crc == crc_of(to_xrgb(a, XRGB))
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_FLIP_PENDING"]
        assert head_reg(qt, 0, "VMGPU_HEAD_FB_ADDR_LO") == FB_B, "pending copy reads back"
        qt.step(PERIOD // 2)
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_FLIP_PENDING"]
        assert not dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_FLIP_DONE0"]
        qt.step(PERIOD - PERIOD // 2)
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_FLIP_PENDING"]
        assert dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_FLIP_DONE0"]
        count = head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT")
        assert head_reg(qt, 0, "VMGPU_HEAD_CRC_FRAME") == count
        assert head_reg(qt, 0, "VMGPU_HEAD_CRC") == crc_of(to_xrgb(b, XRGB)), \
            "the frame of the vblank that latched the flip shows B"


def test_commit_now_ends_a_flip_waiting_for_its_vblank(shared, _dev):
    """A COMMIT 2 while a COMMIT 1 waits latches at once, with one
    FLIP_DONE, and the vblank latches nothing more."""
    with display_device(shared.qemu) as (qt, dev):
        _, b, _ = pending_flip(qt, dev, 6)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", NOW)
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_FLIP_PENDING"]
        assert dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_FLIP_DONE0"]
        dev.reg_write("VMGPU_REG_DISPLAY_EVENTS", 0xFFFFFFFF)
        _, crc, _ = next_frame(qt)
        assert crc == crc_of(to_xrgb(b, XRGB)), "the frame after COMMIT 2 shows B"
        assert not dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_FLIP_DONE0"], \
            "the vblank latched the ended flip again"


def test_flip_latches_the_registers_of_its_commit(shared, _dev):
    """1.8: writes after a COMMIT 1 (half a cursor, the next frame's
    address) do not reach the vblank that latches it."""
    with display_device(shared.qemu) as (qt, dev):
        a, b, _ = pending_flip(qt, dev, 4)
        # The next commit's writes begin: a primary back at A, and a
        # cursor enabled before its address is set (outside VRAM).
        head_write(qt, 0, "VMGPU_HEAD_FB_ADDR_LO", FB_A)
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_ADDR_HI", 0x100)
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_CTRL", 1)
        _, crc, _ = next_frame(qt)
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"], \
            "the vblank latched a half-written cursor"
        assert crc == crc_of(to_xrgb(b, XRGB)), "the flip's frame is B, as committed"
        assert head_reg(qt, 0, "VMGPU_HEAD_FB_ADDR_LO") == FB_A, "pending copy reads back"
        assert not dev.reg("VMGPU_REG_ERROR_CODE"), "no error from writes not committed"
        # The next COMMIT takes them.
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_CTRL", 0)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", AT_VBLANK)
        assert next_frame(qt)[1] == crc_of(to_xrgb(a, XRGB))


def test_crc_changes_exactly_when_pixels_change(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        fb = bytearray(pattern_bytes(4, W * H * 4))
        fill_vram(qt, FB_A, bytes(fb))
        set_head(qt, 0, FB_A)
        _, c0, _ = next_frame(qt)
        assert c0 == crc_of(to_xrgb(fb, XRGB))
        _, c1, frame = next_frame(qt)
        assert c1 == c0 and frame == head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT")
        # One pixel's X byte: not shown, same CRC.
        off = (17 * W + 5) * 4
        qt.write(VRAM_BAR + FB_A + off + 3, bytes([fb[off + 3] ^ 0xFF]))
        assert next_frame(qt)[1] == c0
        # One pixel's blue: a new CRC, the model's.
        changed = bytearray(fb)
        changed[off] ^= 0x01
        qt.write(VRAM_BAR + FB_A + off, bytes([changed[off]]))
        _, c2, _ = next_frame(qt)
        assert c2 != c0 and c2 == crc_of(to_xrgb(changed, XRGB))
        qt.write(VRAM_BAR + FB_A + off, bytes([fb[off]]))
        assert next_frame(qt)[1] == c0
        # CTRL.CRC is not latched: without it, from the next frame on, no
        # CRC is computed and CRC_FRAME stays; with it, CRCs come back.
        frame = head_reg(qt, 0, "VMGPU_HEAD_CRC_FRAME")
        head_write(qt, 0, "VMGPU_HEAD_CTRL", ENABLE)
        qt.step(2 * PERIOD)
        assert head_reg(qt, 0, "VMGPU_HEAD_CRC_FRAME") == frame
        head_write(qt, 0, "VMGPU_HEAD_CTRL", ENABLE | CRC)
        count, crc, crc_frame = next_frame(qt)
        assert crc_frame == count and crc == c0


def test_formats_and_cursor(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        fb565 = pattern_bytes(5, W * H * 2)
        fill_vram(qt, FB_A, fb565)
        set_head(qt, 0, FB_A, fmt=RGB565, stride=W * 2)
        assert next_frame(qt)[1] == crc_of(to_xrgb(fb565, RGB565, stride=W * 2))
        fbargb = pattern_bytes(6, W * H * 4)
        fill_vram(qt, FB_B, fbargb)
        set_head(qt, 0, FB_B, fmt=ARGB)
        assert next_frame(qt)[1] == crc_of(to_xrgb(fbargb, ARGB)), "alpha is not shown"
        # A cursor with every alpha, half off the left edge.
        cursor = [(i * 37 & 0xFF) << 24 | (i * 2654435761 & 0xFFFFFF) for i in range(64 * 64)]
        fill_vram(qt, CURSOR, struct.pack("<4096I", *cursor))
        for name, val in (("CURSOR_ADDR_LO", CURSOR), ("CURSOR_ADDR_HI", 0),
                          ("CURSOR_SPACE", HW["VMGPU_SPACE_VRAM"]), ("CURSOR_X", -10),
                          ("CURSOR_Y", 20), ("CURSOR_CTRL", 1)):
            head_write(qt, 0, f"VMGPU_HEAD_{name}", val)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", AT_VBLANK)
        expect = crc_of(compose(to_xrgb(fbargb, ARGB), cursor, -10, 20))
        assert next_frame(qt)[1] == expect, "cursor composed over the primary"
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_CTRL", 0)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", AT_VBLANK)
        assert next_frame(qt)[1] == crc_of(to_xrgb(fbargb, ARGB))


def test_cursor_latches_alone_at_once(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        a, b = pattern_bytes(12, W * H * 4), pattern_bytes(13, W * H * 4)
        fill_vram(qt, FB_A, a)
        fill_vram(qt, FB_B, b)
        cursor = [0xFF000000 | (i * 2654435761 & 0xFFFFFF) for i in range(64 * 64)]
        fill_vram(qt, CURSOR, struct.pack("<4096I", *cursor))
        set_head(qt, 0, FB_A)
        next_frame(qt)
        # A flip to B waits for its vblank; the cursor, latched alone,
        # does not, and neither completes nor hurries the flip.
        dev.reg_write("VMGPU_REG_DISPLAY_EVENTS", 0xFFFFFFFF)
        head_write(qt, 0, "VMGPU_HEAD_FB_ADDR_LO", FB_B)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", AT_VBLANK)
        for name, val in (("CURSOR_ADDR_LO", CURSOR), ("CURSOR_ADDR_HI", 0),
                          ("CURSOR_SPACE", HW["VMGPU_SPACE_VRAM"]), ("CURSOR_X", 5),
                          ("CURSOR_Y", 7), ("CURSOR_CTRL", 1)):
            head_write(qt, 0, f"VMGPU_HEAD_{name}", val)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", CURSOR_NOW)
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_FLIP_PENDING"]
        assert not dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_FLIP_DONE0"]
        # The flip's frame: B, with the cursor latched before it.
        assert next_frame(qt)[1] == crc_of(compose(to_xrgb(b, XRGB), cursor, 5, 7))
        assert dev.reg("VMGPU_REG_DISPLAY_EVENTS") & HW["VMGPU_DISPLAY_EVENT_FLIP_DONE0"]
        # With no flip pending, the next frame already has the moved cursor.
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_X", 30)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", CURSOR_NOW)
        assert next_frame(qt)[1] == crc_of(compose(to_xrgb(b, XRGB), cursor, 30, 7))
        # A cursor outside VRAM blanks the head, with an error.
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_ADDR_HI", 0x100)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", CURSOR_NOW)
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]
        assert next_frame(qt)[1] == BLACK
        ack_errors(dev)


def msix_aim(qt, dev, vector, address, data):
    """Turn MSI-X on and aim vector at address with data."""
    cap = qt.cfg_read(dev.dev, 0x34) & 0xFF
    while qt.cfg_read(dev.dev, cap) & 0xFF != 0x11:
        cap = qt.cfg_read(dev.dev, cap) >> 8 & 0xFF
        assert cap, "no MSI-X capability"
    qt.cfg_write(dev.dev, cap, qt.cfg_read(dev.dev, cap) | 1 << 31)
    entry = MSIX + 16 * vector
    qt.writel(entry, address & 0xFFFFFFFF)
    qt.writel(entry + 4, address >> 32)
    qt.writel(entry + 8, data)
    qt.writel(entry + 12, 0)


def test_interrupt_aimed_at_own_registers_does_not_reenter(shared, _dev):
    """An error raised at a vblank, its MSI-X message aimed at RESET: the
    write must not reset the device in the middle of the latch (which
    then divided by the zeroed mode's clock)."""
    with display_device(shared.qemu) as (qt, dev):
        msix_aim(qt, dev, HW["VMGPU_MSIX_VEC_ERROR"], MMIO + HW["VMGPU_REG_RESET"],
                 HW["VMGPU_RESET_VALUE"])
        dev.reg_write("VMGPU_REG_INT_MASK", HW["VMGPU_INT_ERROR"])
        fill_vram(qt, FB_A, pattern_bytes(8, W * H * 4))
        set_head(qt, 0, FB_A)
        head_write(qt, 0, "VMGPU_HEAD_FB_ADDR_HI", 0x100)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", AT_VBLANK)
        qt.step(PERIOD)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_RANGE"], "the device was reset"
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]
        assert next_frame(qt)[1] == BLACK
        ack_errors(dev)


def test_head_without_primary_is_black_under_the_cursor(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        cursor = [0xFF000000 | (i * 2654435761 & 0xFFFFFF) for i in range(64 * 64)]
        fill_vram(qt, CURSOR, struct.pack("<4096I", *cursor))
        for name, val in (("CURSOR_ADDR_LO", CURSOR), ("CURSOR_ADDR_HI", 0),
                          ("CURSOR_SPACE", HW["VMGPU_SPACE_VRAM"]), ("CURSOR_X", 3),
                          ("CURSOR_Y", 4), ("CURSOR_CTRL", 1)):
            head_write(qt, 0, f"VMGPU_HEAD_{name}", val)
        # FB registers that would blank the head are ignored without a primary.
        set_head(qt, 0, 1 << 40, stride=1, ctrl=ENABLE | CRC | HW["VMGPU_HEAD_CTRL_PRIMARY_OFF"])
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]
        assert dev.reg("VMGPU_REG_ERROR_CODE") == 0
        assert next_frame(qt)[1] == crc_of(compose([[0] * W for _ in range(H)], cursor, 3, 4))
        # The negative: the same registers with a primary blank the head.
        set_head(qt, 0, 1 << 40, stride=1)
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]
        ack_errors(dev)


def test_display_time_dates_vblanks(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        set_head(qt, 0, FB_A)
        next_frame(qt)
        qt.step(PERIOD // 3)
        t = now(qt)
        lo = dev.reg("VMGPU_REG_DISPLAY_TIME_LO")
        assert (dev.reg("VMGPU_REG_DISPLAY_TIME_HI") << 32 | lo) == t, "the virtual clock"
        frame = head_reg(qt, 0, "VMGPU_HEAD_FRAME_TIME_HI") << 32 | \
            head_reg(qt, 0, "VMGPU_HEAD_FRAME_TIME_LO")
        assert t - frame == PERIOD // 3 + 1, "the last vblank, a third of a frame ago"
        # 1.8: the same in one read.
        age = head_reg(qt, 0, "VMGPU_HEAD_VBLANK_AGE")
        assert age == now(qt) - 1 - frame, f"VBLANK_AGE {age}"
        # A 16384 x 16384 frame at 1 kHz lasts 268 s: the age saturates.
        head_write(qt, 0, "VMGPU_HEAD_HTOTAL", 16384)
        head_write(qt, 0, "VMGPU_HEAD_VTOTAL", 16384)
        head_write(qt, 0, "VMGPU_HEAD_CLOCK_KHZ", 1)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", NOW)
        qt.step(5 * 10**9)
        assert head_reg(qt, 0, "VMGPU_HEAD_VBLANK_AGE") == HW["VMGPU_HEAD_VBLANK_AGE_MAX"]
        # Off: no vblank to date.
        head_write(qt, 0, "VMGPU_HEAD_CTRL", 0)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", NOW)
        assert head_reg(qt, 0, "VMGPU_HEAD_VBLANK_AGE") == HW["VMGPU_HEAD_VBLANK_AGE_OFF"]


def test_crc_within_a_pixel_budget(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        # 2048x1024 at 1000 frames a second: 2 Gpixel/s, past the budget.
        set_head(qt, 0, 0, stride=8192, w=2048, hgt=1024, commit=0)
        for name, val in (("HTOTAL", 2048), ("VTOTAL", 1024), ("CLOCK_KHZ", 2048 * 1024)):
            head_write(qt, 0, f"VMGPU_HEAD_{name}", val)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", NOW)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]
        qt.step(5 * 1000000)
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == 5
        assert head_reg(qt, 0, "VMGPU_HEAD_CRC_FRAME") == 0, "CRC computed past the budget"
        # The same at 16 ms a frame (131 Mpixel/s) is still too much; 64x48 is not.
        set_head(qt, 0, FB_A)
        assert next_frame(qt)[2] == head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT")


def gart_primary(qt, dev):
    """A 64x48 XRGB primary in 3 scattered system pages of the aperture."""
    pages = [SYSTEM_PAGES + 0x5000, SYSTEM_PAGES + 0x1000, SYSTEM_PAGES + 0x9000]
    fb = pattern_bytes(7, W * H * 4)
    for i, page in enumerate(pages):
        qt.write(page, fb[i * 4096:(i + 1) * 4096])
    map_gart(qt, dev, pages)
    return fb


def test_scanout_through_the_aperture(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        fb = gart_primary(qt, dev)
        set_head(qt, 0, 0, space="GART")
        assert next_frame(qt)[1] == crc_of(to_xrgb(fb, XRGB))
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]
        # The middle page's entry goes away: the head blanks, it is an error.
        qt.write(0x120000 + 8, bytes(8))
        _, crc, _ = next_frame(qt)
        assert crc == BLACK
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_GART_FAULT"]
        assert dev.reg("VMGPU_REG_ERROR_RING") == HW["VMGPU_ERROR_RING_MMIO"]
        assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") == 0x1000
        assert "head 0 blanked" in qt.guest_log()
        # Mapped again and committed: shown again.
        ack_errors(dev)
        gart_primary(qt, dev)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", AT_VBLANK)
        assert next_frame(qt)[1] == crc_of(to_xrgb(fb, XRGB))
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]


def expect_blank(qt, dev, code, reg, **head):
    ack_errors(dev)
    set_head(qt, 0, **head)
    assert dev.reg("VMGPU_REG_ERROR_CODE") == HW[code], \
        f"{head}: error {dev.reg('VMGPU_REG_ERROR_CODE')}, expected {code}"
    assert dev.reg("VMGPU_REG_ERROR_SLOT") == HW["VMGPU_REG_HEAD0"] + HW[reg]
    assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]


def test_bad_sources_blank_the_head(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        vram = dev.reg("VMGPU_REG_VRAM_SIZE_LO")
        expect_blank(qt, dev, "VMGPU_ERR_BAD_FIELD", "VMGPU_HEAD_FB_STRIDE", fb=FB_A,
                     stride=W * 4 - 4)
        assert next_frame(qt)[1] == BLACK
        expect_blank(qt, dev, "VMGPU_ERR_BAD_FIELD", "VMGPU_HEAD_FB_FORMAT", fb=FB_A, fmt=9)
        # Lines 2 GiB apart: pixman and the consoles index lines with an int.
        expect_blank(qt, dev, "VMGPU_ERR_BAD_FIELD", "VMGPU_HEAD_FB_STRIDE", fb=FB_A,
                     stride=1 << 30, hgt=3)
        expect_blank(qt, dev, "VMGPU_ERR_RANGE", "VMGPU_HEAD_FB_ADDR_LO",
                     fb=vram - W * 4 * (H - 1))
        expect_blank(qt, dev, "VMGPU_ERR_RANGE", "VMGPU_HEAD_FB_ADDR_LO", fb=1 << 40)
        expect_blank(qt, dev, "VMGPU_ERR_RANGE", "VMGPU_HEAD_FB_ADDR_LO", fb=0,
                     space="GART", stride=1 << 23)
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_ADDR_LO", vram - 4096)
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_CTRL", 1)
        expect_blank(qt, dev, "VMGPU_ERR_RANGE", "VMGPU_HEAD_CURSOR_ADDR_LO", fb=FB_A)
        assert dev.reg("VMGPU_REG_ERROR_ADDR_LO") == vram - 4096, "the cursor's address"
        head_write(qt, 0, "VMGPU_HEAD_CURSOR_CTRL", 0)
        # A mode that cannot run: blanked and off, no vblanks.
        expect_blank(qt, dev, "VMGPU_ERR_BAD_FIELD", "VMGPU_HEAD_HDISPLAY", fb=FB_A, w=0)
        ack_errors(dev)
        set_head(qt, 0, FB_A, w=1, hgt=1, commit=0)
        head_write(qt, 0, "VMGPU_HEAD_CLOCK_KHZ", 1 << 30)
        head_write(qt, 0, "VMGPU_HEAD_COMMIT", NOW)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_BAD_FIELD"]
        assert dev.reg("VMGPU_REG_ERROR_SLOT") == \
            HW["VMGPU_REG_HEAD0"] + HW["VMGPU_HEAD_CLOCK_KHZ"], "over 1000 Hz refused"
        count = head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT")
        qt.step(10 * PERIOD)
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == count
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_ACTIVE"]
        # Bad register values are refused outright.
        for name, val in (("COMMIT", 4), ("CTRL", 8), ("CURSOR_CTRL", 2)):
            ack_errors(dev)
            head_write(qt, 0, f"VMGPU_HEAD_{name}", val)
            assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"], name
        ack_errors(dev)
        dev.reg_write("VMGPU_REG_DISPLAY_EVENT_MASK", 1 << 31)
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_REGISTER"]
        # A good commit brings the head back.
        ack_errors(dev)
        set_head(qt, 0, FB_A)
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_ACTIVE"]
        assert not head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_BLANKED"]
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]


def test_hotplug_from_qmp(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        dev.reg_write("VMGPU_REG_DISPLAY_EVENT_MASK", HW["VMGPU_DISPLAY_EVENT_HOTPLUG0"] << 1)
        dev.reg_write("VMGPU_REG_INT_MASK", HW["VMGPU_INT_DISPLAY"])
        reply = qt.qmp.call("qom-set", path="gpu", property="head1-connected", value=False)
        assert "return" in reply, reply
        assert qt.qmp.call("qom-get", path="gpu", property="head1-connected")["return"] is False
        assert not head_reg(qt, 1, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_CONNECTED"]
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_CONNECTED"]
        assert dev.reg("VMGPU_REG_DISPLAY_EVENTS") == HW["VMGPU_DISPLAY_EVENT_HOTPLUG0"] << 1
        assert dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_DISPLAY"]
        dev.reg_write("VMGPU_REG_DISPLAY_EVENTS", 0xFFFFFFFF)
        qt.qmp.call("qom-set", path="gpu", property="head1-connected", value=True)
        assert head_reg(qt, 1, "VMGPU_HEAD_STATUS") & HW["VMGPU_HEAD_STATUS_CONNECTED"]
        assert dev.reg("VMGPU_REG_DISPLAY_EVENTS") == HW["VMGPU_DISPLAY_EVENT_HOTPLUG0"] << 1


def screendump(qt, head):
    path = os.path.join(qt.dir, f"head{head}.ppm")
    reply = qt.qmp.call("screendump", filename=path, device="gpu", head=head)
    assert "return" in reply, reply
    with open(path, "rb") as f:
        data = f.read()
    magic, w, h, maxval, pixels = data.split(maxsplit=4)
    assert magic == b"P6" and maxval == b"255"
    return int(w), int(h), pixels


def rgb_of(rows):
    return b"".join(bytes((p >> 16 & 255, p >> 8 & 255, p & 255)) for row in rows for p in row)


def test_screendump_is_the_scanout(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        fb = bytearray(pattern_bytes(8, W * H * 4))
        fill_vram(qt, FB_A, bytes(fb))
        set_head(qt, 0, FB_A)
        w, h, pixels = screendump(qt, 0)
        assert (w, h) == (W, H) and pixels == rgb_of(to_xrgb(fb, XRGB))
        # Pixels written since show at once: the surface is VRAM itself.
        fb[100:104] = b"\x11\x22\x33\x00"
        qt.write(VRAM_BAR + FB_A + 100, bytes(fb[100:104]))
        assert screendump(qt, 0)[2] == rgb_of(to_xrgb(fb, XRGB))
        # Through the aperture, on the second head.
        gfb = gart_primary(qt, dev)
        set_head(qt, 1, 0, space="GART")
        assert screendump(qt, 1)[2] == rgb_of(to_xrgb(gfb, XRGB))
        # Off: QEMU's placeholder, not the old picture.
        set_head(qt, 1, 0, space="GART", ctrl=0)
        assert screendump(qt, 1)[:2] == (640, 480)


def test_aperture_primary_is_copied_within_the_budget(shared, _dev):
    # The console's copy of an aperture primary takes copy-budget bytes
    # (4 KiB here: 16 lines of 64 pixels) a main-loop slice, and a
    # screendump waits for its last line.
    with display_device(shared.qemu, ("-trace", "vmgpu_display_copy")) as (qt, dev):
        fb = gart_primary(qt, dev)
        set_head(qt, 1, 0, space="GART")
        assert screendump(qt, 1)[2] == rgb_of(to_xrgb(fb, XRGB))
        slices = re.findall(r"vmgpu_display_copy head 1 lines (\d+)\+(\d+) copied",
                            qt.guest_log())
        assert [(int(y), int(n)) for y, n in slices] == [(0, 16), (16, 16), (32, 16)], slices


def test_stopped_vm_keeps_its_display_state(shared, _dev):
    # A refresh while the VM is stopped (a screendump, a redraw of the
    # window) reads the scanout but changes nothing the guest sees: a source
    # it cannot read blanks the head and reports the error only once the VM
    # runs again.
    blanked = HW["VMGPU_HEAD_STATUS_BLANKED"]
    with display_device(shared.qemu) as (qt, dev):
        gart_primary(qt, dev)
        set_head(qt, 1, 0, space="GART", ctrl=ENABLE)
        screendump(qt, 1)
        ack_errors(dev)
        assert "return" in qt.qmp.call("stop")
        qt.write(GART_TABLE + 8, bytes(8))
        screendump(qt, 1)
        assert not head_reg(qt, 1, "VMGPU_HEAD_STATUS") & blanked, "blanked while stopped"
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_NONE"]
        assert not dev.reg("VMGPU_REG_INT_STATUS") & HW["VMGPU_INT_ERROR"]
        assert "return" in qt.qmp.call("cont")
        screendump(qt, 1)
        assert head_reg(qt, 1, "VMGPU_HEAD_STATUS") & blanked
        assert dev.reg("VMGPU_REG_ERROR_CODE") == HW["VMGPU_ERR_GART_FAULT"]
        ack_errors(dev)


def test_reset_turns_the_display_off(shared, _dev):
    with display_device(shared.qemu) as (qt, dev):
        set_head(qt, 0, FB_A)
        dev.reg_write("VMGPU_REG_DISPLAY_EVENT_MASK", HW["VMGPU_DISPLAY_EVENT_VBLANK0"])
        next_frame(qt)
        dev.reg_write("VMGPU_REG_RESET", HW["VMGPU_RESET_VALUE"])
        qt.step(3 * PERIOD)
        assert head_reg(qt, 0, "VMGPU_HEAD_STATUS") == HW["VMGPU_HEAD_STATUS_CONNECTED"]
        assert head_reg(qt, 0, "VMGPU_HEAD_FRAME_COUNT") == 0
        assert dev.reg("VMGPU_REG_DISPLAY_EVENTS") == 0
        assert dev.reg("VMGPU_REG_DISPLAY_EVENT_MASK") == 0
        # Every pending register reads 0: the driver's shadow of them
        # starts from that.
        for name in ("CTRL", "HDISPLAY", "VDISPLAY", "HTOTAL", "VTOTAL", "CLOCK_KHZ",
                     "FB_ADDR_LO", "FB_ADDR_HI", "FB_SPACE", "FB_STRIDE", "FB_FORMAT",
                     "CURSOR_CTRL", "CURSOR_ADDR_LO", "CURSOR_ADDR_HI", "CURSOR_SPACE",
                     "CURSOR_X", "CURSOR_Y", "CURSOR_HOT"):
            assert head_reg(qt, 0, f"VMGPU_HEAD_{name}") == 0, f"{name} after reset"


TESTS = [
    test_display_identification_and_edid, test_vblanks_at_the_refresh_rate,
    test_flip_latches_at_vblank, test_commit_now_ends_a_flip_waiting_for_its_vblank,
    test_interrupt_aimed_at_own_registers_does_not_reenter,
    test_flip_latches_the_registers_of_its_commit,
    test_crc_changes_exactly_when_pixels_change,
    test_formats_and_cursor, test_cursor_latches_alone_at_once,
    test_head_without_primary_is_black_under_the_cursor, test_display_time_dates_vblanks,
    test_crc_within_a_pixel_budget, test_scanout_through_the_aperture,
    test_bad_sources_blank_the_head, test_hotplug_from_qmp, test_screendump_is_the_scanout,
    test_aperture_primary_is_copied_within_the_budget,
    test_stopped_vm_keeps_its_display_state,
    test_reset_turns_the_display_off,
]
