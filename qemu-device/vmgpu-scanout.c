/*
 * vmgpu: what a display head shows.
 *
 * The pixels of a head as its latched registers (vmgpu-display.c) name
 * them: the primary's lines, read through the same physical references as
 * the engine's and widened to XRGB8888, with the cursor blended over them.
 * Two readers take them. The vblank can take a CRC32 of the frame, cursor
 * composed, so that guests can test pixels without a screenshot. Each head
 * is a QEMU graphic console; a VRAM primary in a format pixman takes is
 * shown without a copy, and only the lines written since the last update
 * are redrawn; an aperture primary is copied, copy-budget bytes a main-loop
 * slice. A source that cannot be read blanks the head.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ui/console.h"
#include <zlib.h>
#include "vmgpu.h"
#include "trace.h"

/* Bytes per pixel of a VMGPU_FORMAT_*; 0 for an unknown one. */
unsigned vmgpu_format_cpp(uint32_t format)
{
    switch (format) {
    case VMGPU_FORMAT_XRGB8888:
    case VMGPU_FORMAT_ARGB8888:
        return 4;
    case VMGPU_FORMAT_RGB565:
        return 2;
    }
    return 0;
}

static pixman_format_code_t vmgpu_format_pixman(uint32_t format)
{
    /* The display ignores alpha: ARGB8888 is shown as XRGB8888. */
    return format == VMGPU_FORMAT_RGB565 ? PIXMAN_r5g6b5 : PIXMAN_x8r8g8b8;
}

/* Bytes the primary spans, first pixel to last: what it must fit in. */
uint64_t vmgpu_head_fb_bytes(const VmgpuHeadRegs *r)
{
    return (uint64_t)r->fb_stride * (r->vdisplay - 1) +
           (uint64_t)r->hdisplay * vmgpu_format_cpp(r->fb_format);
}

/* One line of what the head shows, as XRGB8888 words with X = 0. */
static bool vmgpu_head_read_line(VmgpuHead *head, unsigned y, uint32_t *line,
                                 VmgpuMemError *err)
{
    VmgpuState *s = head->owner;
    const VmgpuHeadRegs *r = &head->active;
    unsigned cpp = vmgpu_format_cpp(r->fb_format);
    uint32_t bytes = r->hdisplay * cpp;
    uint64_t at = r->fb_addr + (uint64_t)y * r->fb_stride;
    uint8_t *raw = (uint8_t *)line;
    struct vmgpu_addr a = {
        .addr = cpu_to_le64(at),
        .space = cpu_to_le32(r->fb_space),
    };
    int x;

    if (r->ctrl & VMGPU_HEAD_CTRL_PRIMARY_OFF) {
        memset(line, 0, r->hdisplay * 4);
        return true;
    }
    if (cpp == 2) {
        /* Read into the upper half, widen from the left. */
        raw += r->hdisplay * 2;
    }
    if (!vmgpu_mem_rw(s, &a, 0, raw, bytes, false, err)) {
        return false;
    }
    if (cpp == 4) {
        for (x = 0; x < r->hdisplay; x++) {
            line[x] = ldl_le_p(&line[x]) & 0x00ffffff;
        }
        return true;
    }
    for (x = 0; x < r->hdisplay; x++) {
        uint32_t p = lduw_le_p(raw + 2 * x);
        uint32_t r5 = (p >> 11) & 0x1f, g6 = (p >> 5) & 0x3f, b5 = p & 0x1f;

        line[x] = (r5 << 3 | r5 >> 2) << 16 | (g6 << 2 | g6 >> 4) << 8 |
                  (b5 << 3 | b5 >> 2);
    }
    return true;
}

static uint32_t vmgpu_blend(uint32_t dst, uint32_t src)
{
    uint32_t a = src >> 24, out = 0;
    int shift;

    for (shift = 0; shift < 24; shift += 8) {
        uint32_t c = ((src >> shift & 0xff) * a +
                      (dst >> shift & 0xff) * (255 - a) + 127) / 255;
        out |= c << shift;
    }
    return out;
}

/* The cursor over one line; the cursor image is already in head->cursor. */
static void vmgpu_head_cursor_line(VmgpuHead *head, unsigned y,
                                   uint32_t *line)
{
    const VmgpuHeadRegs *r = &head->active;
    int64_t cy = (int64_t)y - r->cursor_y;
    int x;

    if (!(r->cursor_ctrl & 1) || cy < 0 || cy >= VMGPU_CURSOR_SIZE) {
        return;
    }
    for (x = 0; x < VMGPU_CURSOR_SIZE; x++) {
        int64_t dx = (int64_t)r->cursor_x + x;

        if (dx >= 0 && dx < r->hdisplay) {
            line[dx] = vmgpu_blend(line[dx],
                                   head->cursor[cy * VMGPU_CURSOR_SIZE + x]);
        }
    }
}

static bool vmgpu_head_read_cursor(VmgpuHead *head, VmgpuMemError *err)
{
    const VmgpuHeadRegs *r = &head->active;
    struct vmgpu_addr a = {
        .addr = cpu_to_le64(r->cursor_addr),
        .space = cpu_to_le32(r->cursor_space),
    };
    int i;

    if (!(r->cursor_ctrl & 1)) {
        return true;
    }
    if (!vmgpu_mem_rw(head->owner, &a, 0, head->cursor,
                      sizeof(head->cursor), false, err)) {
        return false;
    }
    for (i = 0; i < ARRAY_SIZE(head->cursor); i++) {
        head->cursor[i] = le32_to_cpu(head->cursor[i]);
    }
    return true;
}

/* CRC32 of the frame's lines; false if the primary could not be read. */
static bool vmgpu_head_crc_lines(VmgpuHead *head, uLong *crc,
                                 VmgpuMemError *err)
{
    const VmgpuHeadRegs *r = &head->active;
    unsigned x, y;

    *crc = crc32(0, NULL, 0);
    for (y = 0; y < r->vdisplay; y++) {
        if (head->blanked) {
            memset(head->line, 0, r->hdisplay * 4);
        } else if (!vmgpu_head_read_line(head, y, head->line, err)) {
            return false;
        } else {
            vmgpu_head_cursor_line(head, y, head->line);
        }
        for (x = 0; x < r->hdisplay; x++) {
            head->line[x] = cpu_to_le32(head->line[x]);
        }
        *crc = crc32(*crc, (const Bytef *)head->line, r->hdisplay * 4);
    }
    return true;
}

/*
 * The frame's CRC32 over its lines of XRGB8888 words (little-endian, X = 0),
 * cursor composed; a blanked head shows black and no cursor.
 */
void vmgpu_head_crc(VmgpuHead *head)
{
    VmgpuMemError err;
    uLong crc;

    if (!head->blanked && !vmgpu_head_read_cursor(head, &err)) {
        vmgpu_head_blank(head, err.code, VMGPU_HEAD_CURSOR_ADDR_LO, err.addr,
                         "cursor unreadable");
    }
    if (!vmgpu_head_crc_lines(head, &crc, &err)) {
        vmgpu_head_blank(head, err.code, VMGPU_HEAD_FB_ADDR_LO, err.addr,
                         "primary unreadable");
        vmgpu_head_crc_lines(head, &crc, &err);
    }
    head->crc = crc;
    head->crc_frame = head->frame_count;
    trace_vmgpu_display_crc(head->index, head->crc_frame, head->crc);
}

/* A new DisplaySurface for what the head shows now. */
static void vmgpu_head_new_surface(VmgpuHead *head)
{
    VmgpuState *s = head->owner;
    const VmgpuHeadRegs *r = &head->active;
    DisplaySurface *ds;

    head->surface_stale = false;
    head->surface_copies = false;
    if (!(r->ctrl & VMGPU_HEAD_CTRL_ENABLE)) {
        ds = qemu_create_placeholder_surface(640, 480, "vmgpu: head off");
    } else if (head->blanked || (r->ctrl & VMGPU_HEAD_CTRL_PRIMARY_OFF)) {
        ds = qemu_create_displaysurface(r->hdisplay, r->vdisplay);
    } else if (r->fb_space == VMGPU_SPACE_VRAM) {
        /* Straight over VRAM: no copy per frame. */
        ds = qemu_create_displaysurface_from(r->hdisplay, r->vdisplay,
                                             vmgpu_format_pixman(r->fb_format),
                                             r->fb_stride,
                                             s->vram_ptr + r->fb_addr);
    } else {
        /* Aperture pages are scattered: each update copies them. */
        ds = qemu_create_displaysurface(r->hdisplay, r->vdisplay);
        head->surface_copies = true;
    }
    dpy_gfx_replace_surface(head->con, ds);
}

/* Redraw the lines of a VRAM primary written since the last update. */
static void vmgpu_head_update_dirty(VmgpuHead *head)
{
    VmgpuState *s = head->owner;
    const VmgpuHeadRegs *r = &head->active;
    DirtyBitmapSnapshot *snap;
    int y, first = -1;

    snap = memory_region_snapshot_and_clear_dirty(&s->vram, r->fb_addr,
                                                  vmgpu_head_fb_bytes(r),
                                                  DIRTY_MEMORY_VGA);
    for (y = 0; y <= r->vdisplay; y++) {
        uint64_t line = r->fb_addr + (uint64_t)y * r->fb_stride;
        bool dirty = y < r->vdisplay &&
            memory_region_snapshot_get_dirty(&s->vram, snap, line,
                                             r->hdisplay *
                                             vmgpu_format_cpp(r->fb_format));

        if (dirty && first < 0) {
            first = y;
        } else if (!dirty && first >= 0) {
            dpy_gfx_update(head->con, 0, first, r->hdisplay, y - first);
            first = -1;
        }
    }
    g_free(snap);
}

static void vmgpu_head_gfx_update(void *opaque);

/* What the console asked for is in its surface. */
static void vmgpu_head_update_done(VmgpuHead *head)
{
    head->copying = false;
    graphic_hw_update_done(head->con);
}

/*
 * Copy the next lines of an aperture primary into the surface, about
 * copy-budget bytes of them, and leave the rest to the next main-loop
 * slice: a frame may be 256 MiB of scattered pages.
 */
static void vmgpu_head_copy_lines(void *opaque)
{
    VmgpuHead *head = opaque;
    VmgpuState *s = head->owner;
    const VmgpuHeadRegs *r = &head->active;
    unsigned first = head->copy_y;
    uint64_t bytes = 0;
    DisplaySurface *ds;
    VmgpuMemError err;

    if (head->surface_stale || !head->surface_copies ||
        !(r->ctrl & VMGPU_HEAD_CTRL_ENABLE) || head->blanked ||
        (r->ctrl & VMGPU_HEAD_CTRL_PRIMARY_OFF)) {
        /* A latch since the last slice: start over with what it shows. */
        head->copying = false;
        vmgpu_head_gfx_update(head);
        return;
    }
    ds = qemu_console_surface(head->con);
    while (head->copy_y < r->vdisplay && bytes < s->copy_budget) {
        uint32_t *dst = (uint32_t *)(surface_data(ds) +
                                     head->copy_y * surface_stride(ds));

        if (!vmgpu_head_read_line(head, head->copy_y, head->line, &err)) {
            /*
             * A stopped VM (a screendump, a redraw of the window) sees no
             * change of the device: the head blanks at the first refresh
             * after it runs again, if the source is still unreadable; the
             * lines copied so far stay in the surface meanwhile.
             */
            if (s->engine_vm_running) {
                vmgpu_head_blank(head, err.code, VMGPU_HEAD_FB_ADDR_LO,
                                 err.addr, "primary unreadable");
            }
            vmgpu_head_update_done(head);
            return;
        }
        memcpy(dst, head->line, r->hdisplay * 4);
        head->copy_y++;
        bytes += r->hdisplay * 4;
    }
    trace_vmgpu_display_copy(head->index, first, head->copy_y - first);
    dpy_gfx_update(head->con, 0, first, r->hdisplay, head->copy_y - first);
    if (head->copy_y < r->vdisplay) {
        qemu_bh_schedule(head->copy_bh);
        return;
    }
    vmgpu_head_update_done(head);
}

/*
 * The console's refresh. An aperture primary is copied over several
 * main-loop slices; the update is done (a screendump waits for that) once
 * its last line is in.
 */
static void vmgpu_head_gfx_update(void *opaque)
{
    VmgpuHead *head = opaque;
    VmgpuState *s = head->owner;
    const VmgpuHeadRegs *r = &head->active;

    if (head->copying) {
        /* The copy under way ends this update too. */
        return;
    }
    if (head->surface_stale) {
        vmgpu_head_new_surface(head);
        if (r->fb_space == VMGPU_SPACE_VRAM && !head->blanked &&
            (r->ctrl & (VMGPU_HEAD_CTRL_ENABLE |
                        VMGPU_HEAD_CTRL_PRIMARY_OFF)) ==
            VMGPU_HEAD_CTRL_ENABLE) {
            g_free(memory_region_snapshot_and_clear_dirty(
                       &s->vram, r->fb_addr, vmgpu_head_fb_bytes(r),
                       DIRTY_MEMORY_VGA));
        }
        if (!head->surface_copies) {
            dpy_gfx_update_full(head->con);
            vmgpu_head_update_done(head);
            return;
        }
    }
    if (!(r->ctrl & VMGPU_HEAD_CTRL_ENABLE) || head->blanked ||
        (r->ctrl & VMGPU_HEAD_CTRL_PRIMARY_OFF)) {
        vmgpu_head_update_done(head);
        return;
    }
    if (!head->surface_copies) {
        vmgpu_head_update_dirty(head);
        vmgpu_head_update_done(head);
        return;
    }
    head->copying = true;
    head->copy_y = 0;
    vmgpu_head_copy_lines(head);
}

static const GraphicHwOps vmgpu_head_gfx_ops = {
    .gfx_update = vmgpu_head_gfx_update,
    .gfx_update_async = true,
};

/* Made here, by the gfx_update it calls; vmgpu_display_init() asks. */
QemuConsole *vmgpu_head_console_init(VmgpuHead *head)
{
    DeviceState *dev = DEVICE(head->owner);

    head->copy_bh = qemu_bh_new_guarded(vmgpu_head_copy_lines, head,
                                        &dev->mem_reentrancy_guard);
    return graphic_console_init(dev, head->index, &vmgpu_head_gfx_ops, head);
}

/* Before the console goes: a screendump waiting for a copy is let go. */
void vmgpu_head_console_exit(VmgpuHead *head)
{
    qemu_bh_delete(head->copy_bh);
    if (head->copying) {
        vmgpu_head_update_done(head);
    }
    graphic_console_close(head->con);
}
