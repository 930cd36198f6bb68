/*
 * vmgpu: the copy thread.
 *
 * The runs of a FILL or TRANSFER (vmgpu-copy.c) are plain memsets and
 * memcpys between host pointers, but on the main loop they hold the BQL
 * for all of it, and every vCPU that touches a register or raises an
 * interrupt meanwhile waits. So the engine translates and maps a batch
 * of them under the BQL, in the command's order, and hands it to this
 * thread, which copies them in that order without the BQL; the thread
 * schedules the engine again when done, and the engine, under the BQL,
 * unmaps them (dirty tracking) and only then lets the command complete.
 *
 * The device stays one engine: while a batch is in flight no ring runs,
 * so commands keep their order and a command's writes are all done
 * before the ring's next command starts, as before. What the guest sees
 * differently is only that register accesses and the CPU's own memory
 * accesses go on during a batch. Anything that changes what the engine
 * reads or writes waits for the batch first: register writes other than
 * doorbells, acknowledgements, the display and the host aperture's table
 * (vmgpu_offload_reg_write_waits()), every PCI configuration write (Bus
 * Master Enable), reset and unplug. So no write of the device lands after
 * the guest has turned it off, and a run translated through tables or VM
 * slots that a register then changes completes before the change, as if
 * it had been copied before the write. Tables live in memory, so the
 * contract (1.10) names one read that waits too: MAGIC, the driver's
 * invalidation read, after which no run translated through an old entry
 * writes.
 *
 * A command's cursor (ring->cmd_done) passes a run once it is queued: a
 * dropped command's batch is still copied before the drop completes, and
 * a command goes on, or completes, only after its batch is copied. A
 * page that needs the page path (vmgpu-mem.c) waits for the batch before
 * it, so the bytes before a fault are still all written when the fault is
 * reported. A small batch is copied on the main loop: handing it over
 * costs more. Queued bytes are not charged to the slice's budget, which
 * bounds the main loop's time; VMGPU_OFFLOAD_MAX bounds what a wait for
 * the thread costs. Dirty tracking (the display's redraw, migration bits,
 * and for guest RAM TCG's translated code) learns of the bytes when the
 * batch is unmapped, before the command completes: consumers that wait
 * for its fence see them. Code run from VRAM through the BAR is not
 * translated again after a device write, on either path.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/units.h"
#include "vmgpu.h"
#include "trace.h"

/* Batches smaller than this are copied on the main loop. */
#define VMGPU_OFFLOAD_MIN   (64 * KiB)
/*
 * What a wait for the thread may cost, under the BQL: about a millisecond
 * of copying. A batch passes it by at most a page (vmgpu_offload_room()).
 */
#define VMGPU_OFFLOAD_MAX   (8 * MiB)

static void vmgpu_offload_copy(const VmgpuOffload *o)
{
    unsigned i;

    for (i = 0; i < o->count; i++) {
        const VmgpuOffloadRun *r = &o->runs[i];

        if (o->fill) {
            vmgpu_copy_pattern(r->dst.host, r->len, o->pattern);
        } else {
            memmove(r->dst.host, r->src.host, r->len);
        }
    }
}

static void *vmgpu_offload_thread(void *opaque)
{
    VmgpuState *s = opaque;
    VmgpuOffload *o = &s->offload;

    qemu_mutex_lock(&o->lock);
    for (;;) {
        while (!o->stop && o->state != VMGPU_OFFLOAD_RUNNING) {
            qemu_cond_wait(&o->cond, &o->lock);
        }
        if (o->stop) {
            break;
        }
        qemu_mutex_unlock(&o->lock);
        vmgpu_offload_copy(o);
        qemu_mutex_lock(&o->lock);
        o->state = VMGPU_OFFLOAD_DONE;
        qemu_cond_broadcast(&o->cond);
        qemu_bh_schedule(s->engine_bh);
    }
    qemu_mutex_unlock(&o->lock);
    return NULL;
}

/*
 * Whether a register write waits for the copy thread's batch: one that
 * changes what the engine reaches or runs (RESET, rings, VMs, the GART,
 * the cache, compression) takes effect after it, as if the run had been
 * copied before. Doorbells, acknowledgements and the display go on at
 * once: they change neither; nor do the host aperture's table writes
 * (vmgpu-hap.c), which move CPU windows onto VRAM and never get here.
 */
bool vmgpu_offload_reg_write_waits(hwaddr addr)
{
    switch (addr) {
    case VMGPU_REG_INT_STATUS:
    case VMGPU_REG_FENCE_RINGS:
    case VMGPU_REG_INT_MASK:
    case VMGPU_REG_ERROR_ACK:
    case VMGPU_REG_DISPLAY_EVENTS:
    case VMGPU_REG_DISPLAY_EVENT_MASK:
        return false;
    }
    if (addr >= VMGPU_REG_RING(0) && addr < VMGPU_REG_RING(VMGPU_MAX_RINGS)) {
        return (addr - VMGPU_REG_RING(0)) % 0x40 != VMGPU_RING_TAIL;
    }
    return addr < VMGPU_REG_HEAD(0) || addr >= VMGPU_REG_HEAD(VMGPU_MAX_HEADS);
}

/* Bytes the batch may still take: the next run's bound, 0 when full. */
uint64_t vmgpu_offload_room(const VmgpuState *s)
{
    const VmgpuOffload *o = &s->offload;

    if (o->count == VMGPU_OFFLOAD_RUNS || o->bytes >= VMGPU_OFFLOAD_MAX) {
        return 0;
    }
    return VMGPU_OFFLOAD_MAX - o->bytes;
}

/* Queue a mapped run of ring's command; the caller moves its cursor. */
void vmgpu_offload_add(VmgpuState *s, VmgpuRing *ring, const VmgpuRun *dst,
                       const VmgpuRun *src, uint64_t len)
{
    VmgpuOffload *o = &s->offload;
    VmgpuOffloadRun *r = &o->runs[o->count++];

    o->ring = ring;
    o->fill = !src;
    r->dst = *dst;
    if (src) {
        r->src = *src;
    }
    r->len = len;
    o->bytes += len;
}

/* The runs' bytes are in memory: unmap them, all written. */
static void vmgpu_offload_unmap(VmgpuState *s)
{
    VmgpuOffload *o = &s->offload;
    unsigned i;

    for (i = 0; i < o->count; i++) {
        vmgpu_run_unmap(s, &o->runs[i].dst, o->runs[i].len, true);
        if (!o->fill) {
            vmgpu_run_unmap(s, &o->runs[i].src, o->runs[i].len, false);
        }
    }
    o->ring = NULL;
    o->count = 0;
    o->bytes = 0;
    qemu_mutex_lock(&o->lock);
    o->state = VMGPU_OFFLOAD_IDLE;
    qemu_mutex_unlock(&o->lock);
}

/*
 * Copy what is queued: a small batch at once, charged to *budget, a
 * large one in the thread. Returns true if the thread has it: the slice
 * ends, and the command goes on, or if last completes, only once
 * vmgpu_offload_settle() has seen it done.
 */
bool vmgpu_offload_flush(VmgpuState *s, uint32_t pattern, bool last,
                         uint64_t *budget)
{
    VmgpuOffload *o = &s->offload;

    if (!o->count) {
        return false;
    }
    assert(o->state == VMGPU_OFFLOAD_IDLE);
    o->pattern = pattern;
    o->last = last;
    if (o->bytes < VMGPU_OFFLOAD_MIN) {
        *budget -= MIN(*budget, o->bytes);
        vmgpu_offload_copy(o);
        vmgpu_offload_unmap(s);
        return false;
    }
    trace_vmgpu_offload_start(o->ring - s->rings, o->ring->head, o->count,
                              o->bytes);
    qemu_mutex_lock(&o->lock);
    o->state = VMGPU_OFFLOAD_RUNNING;
    qemu_cond_broadcast(&o->cond);
    qemu_mutex_unlock(&o->lock);
    *budget = 0;
    return true;
}

void vmgpu_offload_wait(VmgpuState *s)
{
    VmgpuOffload *o = &s->offload;

    qemu_mutex_lock(&o->lock);
    while (o->state == VMGPU_OFFLOAD_RUNNING) {
        qemu_cond_wait(&o->cond, &o->lock);
    }
    qemu_mutex_unlock(&o->lock);
}

/*
 * Returns false while the thread copies (it schedules the engine when
 * done). Else unmaps a copied batch, and in *finished names the ring
 * whose command it completed, if it was that command's last, for the
 * engine to complete it now: its bytes are all written, nothing is left
 * to check.
 */
bool vmgpu_offload_settle(VmgpuState *s, VmgpuRing **finished)
{
    VmgpuOffload *o = &s->offload;
    VmgpuOffloadState state;

    *finished = NULL;
    qemu_mutex_lock(&o->lock);
    state = o->state;
    qemu_mutex_unlock(&o->lock);
    if (state == VMGPU_OFFLOAD_RUNNING) {
        return false;
    }
    if (state == VMGPU_OFFLOAD_DONE) {
        trace_vmgpu_offload_done(o->ring - s->rings, o->ring->head, o->count,
                                 o->bytes);
        if (o->last) {
            *finished = o->ring;
        }
        vmgpu_offload_unmap(s);
    }
    return true;
}

/* ring's command is dropped (any ring's if NULL): finish its batch. */
void vmgpu_offload_drop(VmgpuState *s, VmgpuRing *ring)
{
    VmgpuOffload *o = &s->offload;

    if (!o->ring || (ring && o->ring != ring)) {
        return;
    }
    vmgpu_offload_wait(s);
    trace_vmgpu_offload_drop(o->ring - s->rings, o->ring->head, o->bytes);
    vmgpu_offload_unmap(s);
}

void vmgpu_offload_init(VmgpuState *s)
{
    VmgpuOffload *o = &s->offload;

    qemu_mutex_init(&o->lock);
    qemu_cond_init(&o->cond);
    o->ready = true;
    o->state = VMGPU_OFFLOAD_IDLE;
    o->stop = false;
    o->ring = NULL;
    o->count = 0;
    o->bytes = 0;
    qemu_thread_create(&o->thread, "vmgpu-copy", vmgpu_offload_thread, s,
                       QEMU_THREAD_JOINABLE);
}

void vmgpu_offload_exit(VmgpuState *s)
{
    VmgpuOffload *o = &s->offload;

    vmgpu_offload_drop(s, NULL);
    qemu_mutex_lock(&o->lock);
    o->stop = true;
    qemu_cond_broadcast(&o->cond);
    qemu_mutex_unlock(&o->lock);
    qemu_thread_join(&o->thread);
}

/*
 * The lock outlives unrealize with the device, as the host aperture's
 * table does: an access on its way into BAR0 may still wait (for nothing).
 */
void vmgpu_offload_finalize(VmgpuState *s)
{
    VmgpuOffload *o = &s->offload;

    if (o->ready) {
        qemu_cond_destroy(&o->cond);
        qemu_mutex_destroy(&o->lock);
        o->ready = false;
    }
}
