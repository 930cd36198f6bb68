/*
 * vmgpu: the display controller.
 *
 * Up to VMGPU_MAX_HEADS heads, each scanning out a primary surface and a
 * cursor. The seed's primaries are "implicitly physically accessed by the
 * display controller": a plane's source is a physical reference, a VRAM
 * offset or an aperture-segment offset read through the GART, so the
 * display obeys the same rules as the physical engine, and a bad reference
 * blanks the head instead of reaching memory the guest did not name.
 *
 * The mode, plane and CTRL registers are pending copies; COMMIT latches
 * them whole at the next vblank (a flip, as they were at the COMMIT) or at
 * once. Vblanks tick on the virtual clock at the latched mode's refresh
 * rate, and each frame can have a CRC32 of what the head showed. This file
 * is the controller: registers, COMMIT, vblanks, hotplug and EDID. What a
 * head shows, read for that CRC and for the head's QEMU graphic console,
 * is vmgpu-scanout.c's.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "ui/console.h"
#include "hw/display/edid.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_MAX_HDISPLAY      8192
#define VMGPU_MAX_VDISPLAY      8192
#define VMGPU_MAX_TOTAL         16384
/* At most 1000 frames a second: bounds the vblank timer's work. */
#define VMGPU_MIN_FRAME_NS      1000000
/* CRCs read every pixel under the BQL: at most this many a second. */
#define VMGPU_CRC_PIXELS_PER_S  (64 * 1000 * 1000)

static uint64_t vmgpu_head_frame_ns(const VmgpuHeadRegs *r)
{
    return (uint64_t)r->htotal * r->vtotal * 1000000 / r->clock_khz;
}

/* A physical range the display reads: in VRAM, or inside the aperture. */
static bool vmgpu_display_range_ok(VmgpuState *s, uint32_t space,
                                   uint64_t addr, uint64_t len)
{
    switch (space) {
    case VMGPU_SPACE_VRAM:
        return addr < s->vram_size && len <= s->vram_size - addr;
    case VMGPU_SPACE_GART:
        return addr < (uint64_t)s->gart_max_pages * VMGPU_PAGE_SIZE &&
               len <= (uint64_t)s->gart_max_pages * VMGPU_PAGE_SIZE - addr;
    }
    return false;
}

/* The cursor registers of r: NULL, or what is wrong (*reg, *code). */
static const char *vmgpu_head_check_cursor(VmgpuState *s,
                                           const VmgpuHeadRegs *r,
                                           unsigned *reg,
                                           enum vmgpu_error *code)
{
    *reg = VMGPU_HEAD_CURSOR_ADDR_LO;
    *code = VMGPU_ERR_RANGE;
    if ((r->cursor_ctrl & 1) &&
        (r->cursor_addr % 4 ||
         !vmgpu_display_range_ok(s, r->cursor_space, r->cursor_addr,
                                 VMGPU_CURSOR_SIZE * VMGPU_CURSOR_SIZE * 4))) {
        return "cursor outside its space";
    }
    return NULL;
}

/*
 * Why the pending registers cannot be scanned out, or NULL. *reg is the
 * offending register, for ERROR_SLOT.
 */
static const char *vmgpu_head_check(VmgpuState *s, const VmgpuHeadRegs *r,
                                    unsigned *reg, enum vmgpu_error *code)
{
    unsigned cpp = vmgpu_format_cpp(r->fb_format);

    *code = VMGPU_ERR_BAD_FIELD;
    if (!(r->ctrl & VMGPU_HEAD_CTRL_ENABLE)) {
        return NULL;
    }
    *reg = VMGPU_HEAD_HDISPLAY;
    if (!r->hdisplay || r->hdisplay > VMGPU_MAX_HDISPLAY ||
        !r->vdisplay || r->vdisplay > VMGPU_MAX_VDISPLAY ||
        r->htotal < r->hdisplay || r->htotal > VMGPU_MAX_TOTAL ||
        r->vtotal < r->vdisplay || r->vtotal > VMGPU_MAX_TOTAL ||
        !r->clock_khz) {
        return "bad mode";
    }
    *reg = VMGPU_HEAD_CLOCK_KHZ;
    if (vmgpu_head_frame_ns(r) < VMGPU_MIN_FRAME_NS) {
        return "refresh rate above 1000 Hz";
    }
    if (r->ctrl & VMGPU_HEAD_CTRL_PRIMARY_OFF) {
        return vmgpu_head_check_cursor(s, r, reg, code);
    }
    *reg = VMGPU_HEAD_FB_FORMAT;
    if (!cpp) {
        return "unknown format";
    }
    *reg = VMGPU_HEAD_FB_STRIDE;
    if (r->fb_stride < r->hdisplay * cpp || r->fb_stride % 4 ||
        r->fb_addr % 4) {
        return "stride too small or source not 4-byte aligned";
    }
    /* Consoles and pixman index lines with an int. */
    if ((uint64_t)r->fb_stride * r->vdisplay > INT32_MAX) {
        return "stride times height above 2 GiB";
    }
    *reg = VMGPU_HEAD_FB_ADDR_LO;
    *code = VMGPU_ERR_RANGE;
    if (!vmgpu_display_range_ok(s, r->fb_space, r->fb_addr,
                                vmgpu_head_fb_bytes(r))) {
        return "primary outside its space";
    }
    return vmgpu_head_check_cursor(s, r, reg, code);
}

static void vmgpu_display_event(VmgpuState *s, uint32_t event)
{
    s->display_events |= event;
    if (s->display_event_mask & event) {
        vmgpu_raise_irq(s, VMGPU_INT_DISPLAY);
    }
}

/* A bad source: the head shows black until a COMMIT. */
void vmgpu_head_blank(VmgpuHead *head, enum vmgpu_error code,
                      unsigned reg, uint64_t addr, const char *why)
{
    VmgpuState *s = head->owner;

    if (head->blanked) {
        return;
    }
    head->blanked = true;
    head->surface_stale = true;
    qemu_log_mask(LOG_GUEST_ERROR, "vmgpu: head %u blanked: %s\n",
                  head->index, why);
    trace_vmgpu_display_blank(head->index, code, addr);
    vmgpu_report_error(s, code, VMGPU_ERROR_RING_MMIO,
                       VMGPU_REG_HEAD(head->index) + reg, addr);
}

/* COMMIT: regs (pending or committed) become the ones scanned out. */
static void vmgpu_head_latch(VmgpuHead *head, const VmgpuHeadRegs *regs)
{
    VmgpuState *s = head->owner;
    VmgpuHeadRegs old = head->active;
    bool was_on = old.ctrl & VMGPU_HEAD_CTRL_ENABLE;
    enum vmgpu_error code;
    const char *why;
    unsigned reg = 0;
    bool on;

    head->latch_pending = false;
    head->blanked = false;
    head->surface_stale = true;
    why = vmgpu_head_check(s, regs, &reg, &code);
    head->active = *regs;
    on = head->active.ctrl & VMGPU_HEAD_CTRL_ENABLE;
    trace_vmgpu_display_latch(head->index, head->active.ctrl,
                              head->active.hdisplay, head->active.vdisplay,
                              head->active.fb_space, head->active.fb_addr,
                              head->active.fb_stride, head->active.fb_format);
    if (why) {
        /* The mode itself may be unusable: no vblanks, a black head. */
        if (reg == VMGPU_HEAD_HDISPLAY || reg == VMGPU_HEAD_CLOCK_KHZ) {
            on = false;
            head->active.ctrl &= ~VMGPU_HEAD_CTRL_ENABLE;
        }
        vmgpu_head_blank(head, code, reg,
                         reg == VMGPU_HEAD_CURSOR_ADDR_LO ?
                         head->active.cursor_addr : head->active.fb_addr, why);
    }
    if (on && !was_on) {
        /* Frame 0 is the COMMIT that turned the head on. */
        head->frame_count = 0;
        head->frame_time = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    }
    if (on && (!was_on || vmgpu_head_frame_ns(&old) !=
                          vmgpu_head_frame_ns(&head->active))) {
        /* A new mode's first frame starts now. */
        head->next_vblank = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                            vmgpu_head_frame_ns(&head->active);
        timer_mod(&head->vblank, head->next_vblank);
    } else if (!on) {
        timer_del(&head->vblank);
    }
    vmgpu_display_event(s, VMGPU_DISPLAY_EVENT_FLIP_DONE(head->index));
}

static void vmgpu_head_vblank(void *opaque)
{
    VmgpuHead *head = opaque;
    uint64_t period = vmgpu_head_frame_ns(&head->active);
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint64_t frames = 1;

    /* A late timer still counts every vblank that went by. */
    if (now > head->next_vblank) {
        frames += (now - head->next_vblank) / period;
    }
    head->frame_count += frames;
    head->frame_time = head->next_vblank + (frames - 1) * period;
    trace_vmgpu_display_vblank(head->index, head->frame_count,
                               head->frame_time);
    if (head->latch_pending) {
        /* CTRL.CRC is not latched: it stays as last written. */
        head->committed.ctrl = (head->committed.ctrl & ~VMGPU_HEAD_CTRL_CRC) |
                               (head->active.ctrl & VMGPU_HEAD_CTRL_CRC);
        vmgpu_head_latch(head, &head->committed);
        if (!(head->active.ctrl & VMGPU_HEAD_CTRL_ENABLE)) {
            return;
        }
        period = vmgpu_head_frame_ns(&head->active);
    }
    if ((head->active.ctrl & VMGPU_HEAD_CTRL_CRC) &&
        (uint64_t)head->active.hdisplay * head->active.vdisplay *
        NANOSECONDS_PER_SECOND / period <= VMGPU_CRC_PIXELS_PER_S) {
        vmgpu_head_crc(head);
    }
    head->next_vblank = head->frame_time + period;
    timer_mod(&head->vblank, head->next_vblank);
    vmgpu_display_event(head->owner,
                        VMGPU_DISPLAY_EVENT_VBLANK(head->index));
}

static uint32_t vmgpu_head_status(const VmgpuHead *head)
{
    return (head->connected ? VMGPU_HEAD_STATUS_CONNECTED : 0) |
           (head->active.ctrl & VMGPU_HEAD_CTRL_ENABLE ?
            VMGPU_HEAD_STATUS_ACTIVE : 0) |
           (head->latch_pending ? VMGPU_HEAD_STATUS_FLIP_PENDING : 0) |
           (head->blanked ? VMGPU_HEAD_STATUS_BLANKED : 0);
}

/* How long ago the last vblank was: one read dates it, no HI/LO pairs. */
static uint32_t vmgpu_head_vblank_age(const VmgpuHead *head)
{
    int64_t age;

    if (!(head->active.ctrl & VMGPU_HEAD_CTRL_ENABLE)) {
        return VMGPU_HEAD_VBLANK_AGE_OFF;
    }
    age = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - head->frame_time;
    return MIN(MAX(age, 0), VMGPU_HEAD_VBLANK_AGE_MAX);
}

static uint32_t *vmgpu_head_pending_reg(VmgpuHead *head, hwaddr reg)
{
    VmgpuHeadRegs *p = &head->pending;

    switch (reg) {
    case VMGPU_HEAD_CTRL:
        return &p->ctrl;
    case VMGPU_HEAD_HDISPLAY:
        return &p->hdisplay;
    case VMGPU_HEAD_VDISPLAY:
        return &p->vdisplay;
    case VMGPU_HEAD_HTOTAL:
        return &p->htotal;
    case VMGPU_HEAD_VTOTAL:
        return &p->vtotal;
    case VMGPU_HEAD_CLOCK_KHZ:
        return &p->clock_khz;
    case VMGPU_HEAD_FB_SPACE:
        return &p->fb_space;
    case VMGPU_HEAD_FB_STRIDE:
        return &p->fb_stride;
    case VMGPU_HEAD_FB_FORMAT:
        return &p->fb_format;
    case VMGPU_HEAD_CURSOR_CTRL:
        return &p->cursor_ctrl;
    case VMGPU_HEAD_CURSOR_SPACE:
        return &p->cursor_space;
    case VMGPU_HEAD_CURSOR_X:
        return (uint32_t *)&p->cursor_x;
    case VMGPU_HEAD_CURSOR_Y:
        return (uint32_t *)&p->cursor_y;
    case VMGPU_HEAD_CURSOR_HOT:
        return &p->cursor_hot;
    }
    return NULL;
}

bool vmgpu_display_reg_read(VmgpuState *s, hwaddr addr, uint32_t *val)
{
    VmgpuHead *head;
    uint32_t *pending;
    hwaddr reg;

    switch (addr) {
    case VMGPU_REG_DISPLAY_HEADS:
        *val = s->num_heads;
        return true;
    case VMGPU_REG_DISPLAY_EVENTS:
        *val = s->display_events;
        return true;
    case VMGPU_REG_DISPLAY_EVENT_MASK:
        *val = s->display_event_mask;
        return true;
    case VMGPU_REG_DISPLAY_TIME_LO: {
        /* FRAME_TIME's clock: a driver's vblank timestamps follow it. */
        uint64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

        s->display_time_hi = now >> 32;
        *val = now;
        return true;
    }
    case VMGPU_REG_DISPLAY_TIME_HI:
        *val = s->display_time_hi;
        return true;
    }
    if (addr < VMGPU_REG_HEAD(0) || addr >= VMGPU_REG_HEAD(s->num_heads)) {
        return false;
    }
    head = &s->heads[(addr - VMGPU_REG_HEAD(0)) / VMGPU_HEAD_BANK_SIZE];
    reg = (addr - VMGPU_REG_HEAD(0)) % VMGPU_HEAD_BANK_SIZE;
    pending = vmgpu_head_pending_reg(head, reg);
    if (pending) {
        *val = *pending;
        return true;
    }
    switch (reg) {
    case VMGPU_HEAD_STATUS:
        *val = vmgpu_head_status(head);
        return true;
    case VMGPU_HEAD_FB_ADDR_LO:
        *val = head->pending.fb_addr;
        return true;
    case VMGPU_HEAD_FB_ADDR_HI:
        *val = head->pending.fb_addr >> 32;
        return true;
    case VMGPU_HEAD_CURSOR_ADDR_LO:
        *val = head->pending.cursor_addr;
        return true;
    case VMGPU_HEAD_CURSOR_ADDR_HI:
        *val = head->pending.cursor_addr >> 32;
        return true;
    case VMGPU_HEAD_FRAME_COUNT:
        *val = head->frame_count;
        return true;
    case VMGPU_HEAD_FRAME_TIME_LO:
        *val = head->frame_time;
        return true;
    case VMGPU_HEAD_FRAME_TIME_HI:
        *val = head->frame_time >> 32;
        return true;
    case VMGPU_HEAD_CRC:
        *val = head->crc;
        return true;
    case VMGPU_HEAD_CRC_FRAME:
        *val = head->crc_frame;
        return true;
    case VMGPU_HEAD_VBLANK_AGE:
        *val = vmgpu_head_vblank_age(head);
        return true;
    }
    return false;
}

static void vmgpu_head_copy_cursor(VmgpuHeadRegs *to, const VmgpuHeadRegs *from)
{
    to->cursor_ctrl = from->cursor_ctrl;
    to->cursor_addr = from->cursor_addr;
    to->cursor_space = from->cursor_space;
    to->cursor_x = from->cursor_x;
    to->cursor_y = from->cursor_y;
    to->cursor_hot = from->cursor_hot;
}

/*
 * COMMIT_CURSOR: the cursor registers alone become the scanned-out ones,
 * now, without FLIP_DONE: a cursor move never waits for a frame, nor
 * completes a flip that does. A flip that waits for its vblank takes
 * this cursor along, not the one it was committed with.
 */
static void vmgpu_head_latch_cursor(VmgpuHead *head)
{
    VmgpuHeadRegs *a = &head->active;
    enum vmgpu_error code;
    const char *why;
    unsigned reg;

    vmgpu_head_copy_cursor(a, &head->pending);
    if (head->latch_pending) {
        vmgpu_head_copy_cursor(&head->committed, &head->pending);
    }
    trace_vmgpu_display_latch_cursor(head->index, a->cursor_ctrl,
                                     a->cursor_space, a->cursor_addr,
                                     a->cursor_x, a->cursor_y);
    why = vmgpu_head_check_cursor(head->owner, a, &reg, &code);
    if (why) {
        vmgpu_head_blank(head, code, reg, a->cursor_addr, why);
    }
}

static const char *vmgpu_head_commit(VmgpuHead *head, uint32_t val)
{
    switch (val) {
    case VMGPU_HEAD_COMMIT_CURSOR:
        vmgpu_head_latch_cursor(head);
        return NULL;
    case VMGPU_HEAD_COMMIT_VBLANK:
        if (head->active.ctrl & VMGPU_HEAD_CTRL_ENABLE) {
            /* Writes from now on wait for the next COMMIT. */
            head->committed = head->pending;
            head->latch_pending = true;
            return NULL;
        }
        /* fall through: an idle head has no vblank to wait for */
    case VMGPU_HEAD_COMMIT_NOW:
        vmgpu_head_latch(head, &head->pending);
        return NULL;
    }
    return "unknown COMMIT value";
}

static const char *vmgpu_display_write(VmgpuState *s, hwaddr addr,
                                       uint32_t val)
{
    VmgpuHead *head;
    uint32_t *pending;
    hwaddr reg;

    switch (addr) {
    case VMGPU_REG_DISPLAY_EVENTS:
        s->display_events &= ~val;
        return NULL;
    case VMGPU_REG_DISPLAY_EVENT_MASK:
        if (val & ~VMGPU_DISPLAY_EVENTS_ALL) {
            return "unknown display event bits";
        }
        s->display_event_mask = val;
        return NULL;
    }
    head = &s->heads[(addr - VMGPU_REG_HEAD(0)) / VMGPU_HEAD_BANK_SIZE];
    reg = (addr - VMGPU_REG_HEAD(0)) % VMGPU_HEAD_BANK_SIZE;
    if (reg == VMGPU_HEAD_COMMIT) {
        return vmgpu_head_commit(head, val);
    }
    if (reg == VMGPU_HEAD_CTRL &&
        (val & ~(VMGPU_HEAD_CTRL_ENABLE | VMGPU_HEAD_CTRL_CRC |
                 VMGPU_HEAD_CTRL_PRIMARY_OFF))) {
        return "unknown head control bits";
    }
    if (reg == VMGPU_HEAD_CTRL) {
        /* CRC is not latched: capture starts and stops at once. */
        head->active.ctrl = (head->active.ctrl & ~VMGPU_HEAD_CTRL_CRC) |
                            (val & VMGPU_HEAD_CTRL_CRC);
    }
    if (reg == VMGPU_HEAD_CURSOR_CTRL && val > 1) {
        return "unknown cursor control bits";
    }
    pending = vmgpu_head_pending_reg(head, reg);
    if (pending) {
        *pending = val;
        return NULL;
    }
    switch (reg) {
    case VMGPU_HEAD_FB_ADDR_LO:
        head->pending.fb_addr = deposit64(head->pending.fb_addr, 0, 32, val);
        return NULL;
    case VMGPU_HEAD_FB_ADDR_HI:
        head->pending.fb_addr = deposit64(head->pending.fb_addr, 32, 32, val);
        return NULL;
    case VMGPU_HEAD_CURSOR_ADDR_LO:
        head->pending.cursor_addr =
            deposit64(head->pending.cursor_addr, 0, 32, val);
        return NULL;
    case VMGPU_HEAD_CURSOR_ADDR_HI:
        head->pending.cursor_addr =
            deposit64(head->pending.cursor_addr, 32, 32, val);
        return NULL;
    }
    return "read-only or unknown head register";
}

/*
 * False if addr is not a display register; else *why is NULL, or why the
 * write was refused (a bad register write).
 */
bool vmgpu_display_reg_write(VmgpuState *s, hwaddr addr, uint32_t val,
                             const char **why)
{
    if (addr == VMGPU_REG_DISPLAY_EVENTS ||
        addr == VMGPU_REG_DISPLAY_EVENT_MASK ||
        (addr >= VMGPU_REG_HEAD(0) && addr < VMGPU_REG_HEAD(s->num_heads))) {
        *why = vmgpu_display_write(s, addr, val);
        return true;
    }
    return false;
}

static void vmgpu_head_get_connected(Object *obj, Visitor *v, const char *name,
                                     void *opaque, Error **errp)
{
    VmgpuHead *head = opaque;
    bool connected = head->connected;

    visit_type_bool(v, name, &connected, errp);
}

/* Hotplug from QMP: qom-set DEVICE headN-connected false. */
static void vmgpu_head_set_connected(Object *obj, Visitor *v, const char *name,
                                     void *opaque, Error **errp)
{
    VmgpuHead *head = opaque;
    bool connected;

    if (!visit_type_bool(v, name, &connected, errp)) {
        return;
    }
    if (connected == head->connected) {
        return;
    }
    head->connected = connected;
    trace_vmgpu_display_hotplug(head->index, connected);
    vmgpu_display_event(head->owner, VMGPU_DISPLAY_EVENT_HOTPLUG(head->index));
}

void vmgpu_display_reset(VmgpuState *s)
{
    unsigned i;

    s->display_events = 0;
    s->display_event_mask = 0;
    for (i = 0; i < s->num_heads; i++) {
        VmgpuHead *head = &s->heads[i];

        timer_del(&head->vblank);
        memset(&head->pending, 0, sizeof(head->pending));
        memset(&head->committed, 0, sizeof(head->committed));
        memset(&head->active, 0, sizeof(head->active));
        head->latch_pending = false;
        head->blanked = false;
        head->surface_stale = true;
        head->frame_count = 0;
        head->frame_time = 0;
        head->crc = 0;
        head->crc_frame = 0;
    }
}

/* Head h's EDID: read-only bytes, read at any size up to 8. */
static uint64_t vmgpu_edid_read(void *opaque, hwaddr addr, unsigned size)
{
    VmgpuHead *head = opaque;
    uint64_t val = ldn_le_p(head->edid + addr, size);

    trace_vmgpu_edid_read(head->index, addr, size, val);
    return val;
}

static void vmgpu_edid_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    VmgpuHead *head = opaque;
    hwaddr reg = VMGPU_REG_EDID(head->index) + addr;

    qemu_log_mask(LOG_GUEST_ERROR,
                  "vmgpu: write 0x%" PRIx64 " to EDID byte 0x%" HWADDR_PRIx
                  " of head %u ignored: read-only\n", val, addr, head->index);
    vmgpu_report_error(head->owner, VMGPU_ERR_REGISTER, VMGPU_ERROR_RING_MMIO,
                       reg, val);
}

static const MemoryRegionOps vmgpu_edid_ops = {
    .read = vmgpu_edid_read,
    .write = vmgpu_edid_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
    },
};

bool vmgpu_display_init(VmgpuState *s, Error **errp)
{
    unsigned i;

    if (!s->num_heads || s->num_heads > VMGPU_MAX_HEADS) {
        error_setg(errp, "vmgpu: heads must be between 1 and %u",
                   VMGPU_MAX_HEADS);
        return false;
    }
    if (!s->edid_info.prefx) {
        s->edid_info.prefx = 1024;
    }
    if (!s->edid_info.prefy) {
        s->edid_info.prefy = 768;
    }
    if (s->edid_info.prefx > VMGPU_MAX_HDISPLAY ||
        s->edid_info.prefy > VMGPU_MAX_VDISPLAY) {
        error_setg(errp, "vmgpu: xres and yres must be at most %ux%u",
                   VMGPU_MAX_HDISPLAY, VMGPU_MAX_VDISPLAY);
        return false;
    }
    memory_region_set_log(&s->vram, true, DIRTY_MEMORY_VGA);
    for (i = 0; i < s->num_heads; i++) {
        VmgpuHead *head = &s->heads[i];
        g_autofree char *prop = g_strdup_printf("head%u-connected", i);

        head->owner = s;
        head->index = i;
        head->connected = true;
        head->surface_stale = true;
        head->line = g_new(uint32_t, VMGPU_MAX_HDISPLAY);
        timer_init_ns(&head->vblank, QEMU_CLOCK_VIRTUAL, vmgpu_head_vblank,
                      head);
        qemu_edid_generate(head->edid, sizeof(head->edid), &s->edid_info);
        memory_region_init_io(&head->edid_mr, OBJECT(s), &vmgpu_edid_ops, head,
                              "vmgpu.edid", sizeof(head->edid));
        memory_region_add_subregion(&s->mmio, VMGPU_REG_EDID(i),
                                    &head->edid_mr);
        object_property_add(OBJECT(s), prop, "bool", vmgpu_head_get_connected,
                            vmgpu_head_set_connected, NULL, head);
        head->con = vmgpu_head_console_init(head);
    }
    return true;
}

void vmgpu_display_exit(VmgpuState *s)
{
    unsigned i;

    for (i = 0; i < MIN(s->num_heads, VMGPU_MAX_HEADS); i++) {
        VmgpuHead *head = &s->heads[i];

        if (!head->owner) {
            continue;
        }
        timer_del(&head->vblank);
        vmgpu_head_console_exit(head);
        memory_region_del_subregion(&s->mmio, &head->edid_mr);
        g_free(head->line);
    }
}
