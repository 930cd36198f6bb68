/*
 * vmgpu: the command processor.
 *
 * Rings live in guest memory; a doorbell (TAIL write) schedules a bottom
 * half that executes commands outside the MMIO write. One run of it is a
 * slice: at most VMGPU_ENGINE_BATCH commands per ring and copy-budget bytes
 * of FILL/TRANSFER work in all (4 KiB per page of COMPRESS, DECOMPRESS and
 * NOTIFY), taken from the rings in turn, so that neither a long ring nor
 * one huge copy stalls the main loop. A command left unfinished keeps its
 * place at HEAD with a cursor and goes on in the next slice. NOP with a
 * delay parks the ring, HEAD on the NOP, on a virtual-clock timer; an unmet
 * WAIT parks it until its value may have changed (vmgpu-wait.c). A failing
 * command halts its ring, latches the error and raises the error
 * interrupt; RESUME skips it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "system/dma.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_ENGINE_BATCH  64      /* commands per bottom-half run */

/*
 * The ring's fence word is the kernel's, given by bus address, so that a
 * user ring can signal a job it cannot otherwise address: the command
 * names no memory at all.
 */
static bool vmgpu_fence_ring_word(VmgpuState *s, VmgpuRing *ring,
                                  const struct vmgpu_cmd_fence *c,
                                  VmgpuMemError *err)
{
    struct vmgpu_addr word = {
        .addr = cpu_to_le64(ring->fence_addr),
        .space = cpu_to_le32(VMGPU_SPACE_SYSTEM),
    };
    uint64_t value = c->value;      /* already little endian */

    if (!buffer_is_zero(&c->dst, sizeof(c->dst))) {
        return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, le64_to_cpu(c->dst.addr));
    }
    if (ring->fence_addr % 8) {
        return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, ring->fence_addr);
    }
    trace_vmgpu_fence_ring(ring - s->rings, ring->fence_addr,
                           le64_to_cpu(value));
    return vmgpu_mem_rw(s, &word, 0, &value, sizeof(value), true, err);
}

static bool vmgpu_exec_fence(VmgpuState *s, VmgpuRing *ring,
                             const struct vmgpu_cmd_fence *c,
                             VmgpuMemError *err)
{
    unsigned index = ring - s->rings;
    uint16_t flags = le16_to_cpu(c->hdr.flags);
    uint64_t value = c->value;      /* already little endian */

    if (flags & ~(VMGPU_FENCE_FLAG_IRQ | VMGPU_FENCE_FLAG_RING)) {
        return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, flags);
    }
    if (flags & VMGPU_FENCE_FLAG_RING) {
        if (!vmgpu_fence_ring_word(s, ring, c, err)) {
            return false;
        }
    } else {
        if (!vmgpu_mem_check_addr(&c->dst, err)) {
            return false;
        }
        if (le64_to_cpu(c->dst.addr) % 8) {
            return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD,
                              le64_to_cpu(c->dst.addr));
        }
        if (!vmgpu_mem_rw(s, &c->dst, 0, &value, sizeof(value), true, err)) {
            return false;
        }
    }
    if (flags & VMGPU_FENCE_FLAG_IRQ) {
        /* Before the interrupt, so that its handler sees the ring's bit. */
        s->fence_rings |= 1u << index;
        trace_vmgpu_fence_irq(index, s->fence_rings);
        vmgpu_raise_irq(s, VMGPU_INT_FENCE);
    }
    return true;
}

/*
 * Whether a user ring may name the address. A VIRTUAL ring names only the
 * VM its job runs in (SET_VM), and only while that VM is the one SET_VM
 * saw: a job left behind when the kernel lent the VM to another address
 * space must not walk the new owner's tables.
 */
static bool vmgpu_mode_allows(VmgpuState *s, const VmgpuRing *ring,
                              const struct vmgpu_addr *a)
{
    uint32_t space = le32_to_cpu(a->space);
    uint32_t vm = le32_to_cpu(a->vm);

    if (ring->mode == VMGPU_RING_MODE_VIRTUAL) {
        return space == VMGPU_SPACE_VIRTUAL && ring->vm_bound &&
               vm == ring->bound_vm &&
               s->vms[vm].generation == ring->bound_generation;
    }
    return space == VMGPU_SPACE_VRAM || space == VMGPU_SPACE_GART;
}

static bool vmgpu_exec_set_vm(VmgpuState *s, VmgpuRing *ring,
                              const struct vmgpu_cmd_set_vm *c,
                              VmgpuMemError *err)
{
    unsigned index = ring - s->rings;
    uint32_t vm = le32_to_cpu(c->vm);

    if (index == VMGPU_RING_PAGING || ring->mode != VMGPU_RING_MODE_VIRTUAL) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: SET_VM on ring %u, which runs in no user VM\n",
                      index);
        return vmgpu_fail(err, VMGPU_ERR_PRIVILEGE, VMGPU_OP_SET_VM);
    }
    if (c->hdr.flags || vm == VMGPU_VM_PAGING || vm >= VMGPU_MAX_VMS ||
        !buffer_is_zero(c->reserved, sizeof(c->reserved))) {
        return vmgpu_fail(err, VMGPU_ERR_BAD_FIELD, vm);
    }
    trace_vmgpu_set_vm(index, vm, le32_to_cpu(c->generation),
                       s->vms[vm].generation);
    ring->vm_bound = true;
    ring->bound_vm = vm;
    ring->bound_generation = le32_to_cpu(c->generation);
    return true;
}

/*
 * The kernel checked a user ring's commands before it copied them in; the
 * device checks again, so that a driver bug cannot turn a user ring into a
 * way around the VMs. User rings may not run the paging-only commands and
 * name only the memory of their mode; the paging ring (ring 0) may do
 * anything.
 */
static bool vmgpu_ring_allows(VmgpuState *s, const VmgpuRing *ring,
                              unsigned index, const union vmgpu_cmd *cmd,
                              VmgpuMemError *err)
{
    uint16_t opcode = le16_to_cpu(cmd->hdr.opcode);
    const struct vmgpu_addr *addrs[2] = { NULL, NULL };
    unsigned i;

    if (index == VMGPU_RING_PAGING) {
        return true;
    }
    switch (opcode) {
    case VMGPU_OP_FENCE:
        if (!(le16_to_cpu(cmd->hdr.flags) & VMGPU_FENCE_FLAG_RING)) {
            addrs[0] = &cmd->fence.dst;
        }
        break;
    case VMGPU_OP_FILL:
        /* Bypassing the cache is for the kernel's own memory. */
        if (le16_to_cpu(cmd->hdr.flags) & VMGPU_FILL_FLAG_COHERENT) {
            return vmgpu_fail(err, VMGPU_ERR_PRIVILEGE, opcode);
        }
        addrs[0] = &cmd->fill.dst;
        break;
    case VMGPU_OP_TRANSFER:
        addrs[0] = &cmd->transfer.src;
        addrs[1] = &cmd->transfer.dst;
        break;
    case VMGPU_OP_WAIT:
        addrs[0] = &cmd->wait.addr;
        break;
    case VMGPU_OP_COMPRESS:
    case VMGPU_OP_DECOMPRESS:
        addrs[0] = &cmd->range.addr;
        break;
    case VMGPU_OP_CACHE_FLUSH:
        /* Dropping dirty lines unwritten drops other owners' writes. */
        if ((le16_to_cpu(cmd->hdr.flags) &
             (VMGPU_CACHE_FLAG_WRITEBACK | VMGPU_CACHE_FLAG_INVALIDATE)) ==
            VMGPU_CACHE_FLAG_INVALIDATE) {
            return vmgpu_fail(err, VMGPU_ERR_PRIVILEGE, opcode);
        }
        /* The whole cache names no memory; a range is SYSTEM, never allowed. */
        if (!buffer_is_zero(&cmd->range.addr, sizeof(cmd->range.addr))) {
            addrs[0] = &cmd->range.addr;
        }
        break;
    case VMGPU_OP_NOP:
    case VMGPU_OP_SET_VM:
        break;
    default:
        return vmgpu_fail(err, VMGPU_ERR_PRIVILEGE, opcode);
    }
    for (i = 0; i < ARRAY_SIZE(addrs); i++) {
        if (addrs[i] && !vmgpu_mode_allows(s, ring, addrs[i])) {
            return vmgpu_fail(err, VMGPU_ERR_PRIVILEGE,
                              le64_to_cpu(addrs[i]->addr));
        }
    }
    return true;
}

/* A NOP with a delay keeps the ring busy, and HEAD on it, until it ends. */
static VmgpuCmdStatus vmgpu_exec_nop(VmgpuState *s, VmgpuRing *ring,
                                     uint32_t delay_us)
{
    if (!delay_us || ring->cmd_delayed) {
        return VMGPU_CMD_DONE;
    }
    trace_vmgpu_nop_delay(ring - s->rings, ring->head, delay_us);
    ring->cmd_delayed = true;
    timer_mod(&ring->delay, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              (int64_t)delay_us * SCALE_US);
    return VMGPU_CMD_WAIT;
}

static VmgpuCmdStatus vmgpu_cmd_status(bool ok)
{
    return ok ? VMGPU_CMD_DONE : VMGPU_CMD_FAILED;
}

/*
 * Run the ring's current command, or the next slice of it: a copy goes on
 * from ring->cmd_done and spends at most about *budget bytes.
 */
static VmgpuCmdStatus vmgpu_exec(VmgpuState *s, VmgpuRing *ring,
                                 uint64_t *budget, VmgpuMemError *err)
{
    const union vmgpu_cmd *cmd = &ring->cmd;
    uint16_t opcode = le16_to_cpu(cmd->hdr.opcode);

    if (cmd->hdr.reserved) {
        return vmgpu_cmd_fail(err, VMGPU_ERR_BAD_FIELD, opcode);
    }
    switch (opcode) {
    case VMGPU_OP_NOP: {
        uint32_t delay_us = le32_to_cpu(cmd->nop.delay_us);

        if (cmd->hdr.flags || delay_us > VMGPU_NOP_MAX_DELAY_US ||
            !buffer_is_zero(cmd->nop.reserved,
                                     sizeof(cmd->nop.reserved))) {
            return vmgpu_cmd_fail(err, VMGPU_ERR_BAD_FIELD, opcode);
        }
        return vmgpu_exec_nop(s, ring, delay_us);
    }
    case VMGPU_OP_FENCE:
        if (!buffer_is_zero(cmd->fence.reserved,
                                     sizeof(cmd->fence.reserved))) {
            break;
        }
        return vmgpu_cmd_status(vmgpu_exec_fence(s, ring, &cmd->fence, err));
    case VMGPU_OP_FILL:
        if ((le16_to_cpu(cmd->hdr.flags) & ~VMGPU_FILL_FLAG_COHERENT) ||
            !buffer_is_zero(cmd->fill.reserved, sizeof(cmd->fill.reserved))) {
            break;
        }
        if (!vmgpu_mem_check_addr(&cmd->fill.dst, err)) {
            return VMGPU_CMD_FAILED;
        }
        return vmgpu_copy_fill(s, ring, &cmd->fill.dst,
                               le64_to_cpu(cmd->fill.size),
                               le32_to_cpu(cmd->fill.pattern), false,
                               le16_to_cpu(cmd->hdr.flags) &
                               VMGPU_FILL_FLAG_COHERENT, budget, err);
    case VMGPU_OP_DISCARD:
        if (cmd->hdr.flags || !buffer_is_zero(
                cmd->range.reserved, sizeof(cmd->range.reserved))) {
            break;
        }
        if (!vmgpu_mem_check_addr(&cmd->range.addr, err)) {
            return VMGPU_CMD_FAILED;
        }
        return vmgpu_copy_fill(s, ring, &cmd->range.addr,
                               le64_to_cpu(cmd->range.size),
                               VMGPU_DISCARD_PATTERN, true, false, budget,
                               err);
    case VMGPU_OP_TRANSFER:
        if (!buffer_is_zero(cmd->transfer.reserved,
                                     sizeof(cmd->transfer.reserved))) {
            break;
        }
        if (!vmgpu_mem_check_addr(&cmd->transfer.src, err) ||
            !vmgpu_mem_check_addr(&cmd->transfer.dst, err)) {
            return VMGPU_CMD_FAILED;
        }
        return vmgpu_copy_transfer(s, ring, &cmd->transfer, budget, err);
    case VMGPU_OP_WAIT:
        if (cmd->hdr.flags || !buffer_is_zero(
                cmd->wait.reserved, sizeof(cmd->wait.reserved))) {
            break;
        }
        return vmgpu_exec_wait(s, ring, &cmd->wait, err);
    case VMGPU_OP_SET_VM:
        return vmgpu_cmd_status(vmgpu_exec_set_vm(s, ring, &cmd->set_vm, err));
    case VMGPU_OP_CACHE_FLUSH:
        if (!buffer_is_zero(cmd->range.reserved, sizeof(cmd->range.reserved))) {
            break;
        }
        /* Its cursor counts cache slots visited, not bytes. */
        return vmgpu_cache_flush(s, &cmd->range, &ring->cmd_done, budget, err);
    case VMGPU_OP_NOTIFY:
    case VMGPU_OP_COMPRESS:
    case VMGPU_OP_DECOMPRESS:
        if (!buffer_is_zero(cmd->range.reserved, sizeof(cmd->range.reserved))) {
            break;
        }
        return vmgpu_compress_exec(s, ring - s->rings, &cmd->range,
                                   &ring->cmd_done, budget, err);
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "vmgpu: unsupported opcode %u\n",
                      opcode);
        return vmgpu_cmd_fail(err, VMGPU_ERR_BAD_OPCODE, opcode);
    }
    return vmgpu_cmd_fail(err, VMGPU_ERR_BAD_FIELD, opcode);
}

/* Forget the command at HEAD and how far it got. */
static void vmgpu_ring_drop_cmd(VmgpuState *s, VmgpuRing *ring)
{
    if (ring->cmd_fetched) {
        trace_vmgpu_cmd_drop(ring - s->rings, ring->head, ring->cmd_done);
    }
    vmgpu_offload_drop(s, ring);
    ring->cmd_fetched = false;
    ring->cmd_done = 0;
    ring->cmd_delayed = false;
    vmgpu_wait_drop(ring);
}

static void vmgpu_ring_halt(VmgpuState *s, VmgpuRing *ring,
                            const VmgpuMemError *err)
{
    unsigned index = ring - s->rings;

    qemu_log_mask(LOG_GUEST_ERROR,
                  "vmgpu: ring %u command %u failed: error %u at 0x%" PRIx64
                  "\n", index, ring->head, err->code, err->addr);
    ring->halted = true;
    vmgpu_ring_drop_cmd(s, ring);
    vmgpu_report_error(s, err->code, index, ring->head, err->addr);
}

/*
 * Slot index mask. Only for an enabled ring: enabling checks the size
 * shift and SIZE_SHIFT cannot change while the ring is enabled.
 */
static uint32_t vmgpu_ring_mask(const VmgpuRing *ring)
{
    return (1u << ring->size_shift) - 1;
}

static bool vmgpu_ring_ready(VmgpuRing *ring)
{
    return ring->enabled && !ring->halted && ring->head != ring->tail &&
           !timer_pending(&ring->delay) && !vmgpu_wait_blocked(ring);
}

/* Commands whose completion may meet another ring's WAIT. */
static bool vmgpu_cmd_writes_memory(const union vmgpu_cmd *cmd)
{
    switch (le16_to_cpu(cmd->hdr.opcode)) {
    case VMGPU_OP_FENCE:
    case VMGPU_OP_FILL:
    case VMGPU_OP_TRANSFER:
    case VMGPU_OP_DISCARD:
    case VMGPU_OP_CACHE_FLUSH:      /* write backs */
    case VMGPU_OP_NOTIFY:           /* decodes in place, write backs */
    case VMGPU_OP_COMPRESS:
    case VMGPU_OP_DECOMPRESS:
        return true;
    }
    return false;
}

/* Read the command at HEAD into the ring, once. */
static bool vmgpu_ring_fetch(VmgpuState *s, VmgpuRing *ring,
                             VmgpuMemError *err)
{
    unsigned index = ring - s->rings;
    dma_addr_t addr = ring->base + (dma_addr_t)ring->head * VMGPU_CMD_SIZE;

    if (vmgpu_dma_rw(s, addr, &ring->cmd, sizeof(ring->cmd),
                     false) != MEMTX_OK) {
        return vmgpu_fail(err, VMGPU_ERR_DMA, addr);
    }
    trace_vmgpu_cmd(index, ring->head, le16_to_cpu(ring->cmd.hdr.opcode));
    ring->cmd_fetched = true;
    ring->cmd_done = 0;
    ring->cmd_delayed = false;
    return true;
}

/* The command at HEAD is done: HEAD passes it. */
static void vmgpu_ring_complete(VmgpuState *s, VmgpuRing *ring)
{
    if (vmgpu_cmd_writes_memory(&ring->cmd)) {
        vmgpu_wait_kick(s);
    }
    ring->cmd_fetched = false;
    ring->head = (ring->head + 1) & vmgpu_ring_mask(ring);
}

/*
 * Run the ring's commands until it has nothing to do, waits, halts, ends
 * its batch or spends the budget. Returns true if it stopped with work it
 * can do in the next slice.
 */
static bool vmgpu_ring_run(VmgpuState *s, VmgpuRing *ring, uint64_t *budget)
{
    unsigned done;

    for (done = 0; done < VMGPU_ENGINE_BATCH; done++) {
        VmgpuMemError err = { 0 };

        if (!vmgpu_ring_ready(ring)) {
            return false;
        }
        if (!*budget) {
            return true;
        }
        if (!ring->cmd_fetched && !vmgpu_ring_fetch(s, ring, &err)) {
            vmgpu_ring_halt(s, ring, &err);
            return false;
        }
        /*
         * Every slice of a command, not only its first: the VM it names
         * may have been lent to another space since (SET_VM).
         */
        if (!vmgpu_ring_allows(s, ring, ring - s->rings, &ring->cmd, &err)) {
            vmgpu_ring_halt(s, ring, &err);
            return false;
        }
        switch (vmgpu_exec(s, ring, budget, &err)) {
        case VMGPU_CMD_FAILED:
            vmgpu_ring_halt(s, ring, &err);
            return false;
        case VMGPU_CMD_MORE:
            trace_vmgpu_cmd_more(ring - s->rings, ring->head, ring->cmd_done);
            return true;
        case VMGPU_CMD_WAIT:
            return false;
        case VMGPU_CMD_DONE:
            break;
        }
        vmgpu_ring_complete(s, ring);
    }
    return true;
}

/*
 * One slice. The rings take turns: the slice starts at the ring after the
 * one that spent the last slice's budget, so one ring's huge copy cannot
 * starve the others.
 */
static void vmgpu_engine_bh(void *opaque)
{
    VmgpuState *s = opaque;
    uint64_t budget = s->copy_budget;
    VmgpuRing *finished;
    bool more = false;
    unsigned i;

    /* Stopped: vmgpu_engine_vm_state() schedules the engine on resume. */
    if (!s->engine_vm_running) {
        return;
    }
    /* A batch in the copy thread: it schedules the engine when done. */
    if (!vmgpu_offload_settle(s, &finished)) {
        return;
    }
    /*
     * A TAIL rewound onto the command meanwhile stops the ring there, as
     * it does without the thread: the next slice after a doorbell ends
     * the command, with nothing left to copy.
     */
    if (finished && finished->head != finished->tail) {
        vmgpu_ring_complete(s, finished);
    }
    for (i = 0; i < VMGPU_MAX_RINGS; i++) {
        unsigned index = (s->next_ring + i) % VMGPU_MAX_RINGS;

        more |= vmgpu_ring_run(s, &s->rings[index], &budget);
        if (!budget) {
            s->next_ring = (index + 1) % VMGPU_MAX_RINGS;
            more = true;
            break;
        }
    }
    if (more) {
        qemu_bh_schedule(s->engine_bh);
    }
}

static void vmgpu_ring_delay_done(void *opaque)
{
    VmgpuRing *ring = opaque;

    qemu_bh_schedule(ring->owner->engine_bh);
}

static void vmgpu_ring_enable(VmgpuState *s, VmgpuRing *ring, bool enable)
{
    if (enable && (ring->base & (VMGPU_PAGE_SIZE - 1) ||
                   ring->size_shift < VMGPU_RING_SIZE_SHIFT_MIN ||
                   ring->size_shift > VMGPU_RING_SIZE_SHIFT_MAX)) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: ring %td enabled with base 0x%" PRIx64
                      " and size shift %u\n", ring - s->rings, ring->base,
                      ring->size_shift);
        vmgpu_report_error(s, VMGPU_ERR_RING_SETUP, ring - s->rings, 0,
                           ring->base);
        return;
    }
    if (!enable && ring->enabled) {
        trace_vmgpu_ring_stop(ring - s->rings, ring->head);
    }
    ring->enabled = enable;
    ring->vm_bound = false;
    if (!enable) {
        vmgpu_ring_drop_cmd(s, ring);
        ring->head = ring->tail = 0;
        ring->halted = false;
        timer_del(&ring->delay);
    }
}

uint32_t vmgpu_ring_reg_read(VmgpuState *s, unsigned index, hwaddr reg,
                             bool *ok)
{
    VmgpuRing *ring = &s->rings[index];

    *ok = true;
    switch (reg) {
    case VMGPU_RING_BASE_LO:
        return ring->base;
    case VMGPU_RING_BASE_HI:
        return ring->base >> 32;
    case VMGPU_RING_SIZE_SHIFT:
        return ring->size_shift;
    case VMGPU_RING_HEAD:
        return ring->head;
    case VMGPU_RING_TAIL:
        return ring->tail;
    case VMGPU_RING_CTRL:
        return ring->enabled ? VMGPU_RING_CTRL_ENABLE : 0;
    case VMGPU_RING_STATUS:
        return (ring->enabled ? VMGPU_RING_STATUS_ENABLED : 0) |
               (ring->head != ring->tail && !ring->halted ?
                VMGPU_RING_STATUS_BUSY : 0) |
               (ring->halted ? VMGPU_RING_STATUS_HALTED : 0) |
               (ring->waiting ? VMGPU_RING_STATUS_WAITING : 0);
    case VMGPU_RING_MODE:
        return ring->mode;
    case VMGPU_RING_FENCE_ADDR_LO:
        return ring->fence_addr;
    case VMGPU_RING_FENCE_ADDR_HI:
        return ring->fence_addr >> 32;
    }
    *ok = false;
    return 0;
}

const char *vmgpu_ring_reg_write(VmgpuState *s, unsigned index, hwaddr reg,
                                 uint32_t val)
{
    VmgpuRing *ring = &s->rings[index];

    if (reg != VMGPU_RING_TAIL && reg != VMGPU_RING_CTRL && ring->enabled) {
        return "ring registers are fixed while the ring is enabled";
    }
    switch (reg) {
    case VMGPU_RING_BASE_LO:
        ring->base = deposit64(ring->base, 0, 32, val);
        return NULL;
    case VMGPU_RING_BASE_HI:
        ring->base = deposit64(ring->base, 32, 32, val);
        return NULL;
    case VMGPU_RING_SIZE_SHIFT:
        if (val < VMGPU_RING_SIZE_SHIFT_MIN ||
            val > VMGPU_RING_SIZE_SHIFT_MAX) {
            return "ring size shift out of range";
        }
        ring->size_shift = val;
        return NULL;
    case VMGPU_RING_TAIL:
        if (!ring->enabled || val > vmgpu_ring_mask(ring)) {
            return "tail beyond the ring, or ring disabled";
        }
        ring->tail = val;
        trace_vmgpu_doorbell(index, ring->head, val);
        vmgpu_wait_kick(s);
        qemu_bh_schedule(s->engine_bh);
        return NULL;
    case VMGPU_RING_CTRL:
        if (val & ~(VMGPU_RING_CTRL_ENABLE | VMGPU_RING_CTRL_RESUME)) {
            return "unknown ring control bits";
        }
        if (val & VMGPU_RING_CTRL_RESUME) {
            if (!ring->halted) {
                return "resume of a ring that is not halted";
            }
            ring->halted = false;
            ring->head = (ring->head + 1) & vmgpu_ring_mask(ring);
            vmgpu_wait_kick(s);
            qemu_bh_schedule(s->engine_bh);
            return NULL;
        }
        vmgpu_ring_enable(s, ring, val & VMGPU_RING_CTRL_ENABLE);
        return NULL;
    case VMGPU_RING_MODE:
        if (val != VMGPU_RING_MODE_VIRTUAL && val != VMGPU_RING_MODE_PHYSICAL) {
            return "unknown ring mode";
        }
        ring->mode = val;
        return NULL;
    case VMGPU_RING_FENCE_ADDR_LO:
        ring->fence_addr = deposit64(ring->fence_addr, 0, 32, val);
        return NULL;
    case VMGPU_RING_FENCE_ADDR_HI:
        ring->fence_addr = deposit64(ring->fence_addr, 32, 32, val);
        return NULL;
    }
    return "read-only or unknown ring register";
}

/*
 * A stopped VM (the monitor's stop, a memory dump, a debugger) keeps its
 * memory as it was: the engine starts no slice while it is stopped, and
 * the stop waits for the batch the copy thread may be copying. Work
 * queued meanwhile runs on resume.
 */
static void vmgpu_engine_vm_state(void *opaque, bool running, RunState state)
{
    VmgpuState *s = opaque;

    trace_vmgpu_engine_vm_state(running);
    s->engine_vm_running = running;
    if (running) {
        qemu_bh_schedule(s->engine_bh);
    } else {
        vmgpu_offload_wait(s);
    }
}

void vmgpu_engine_init(VmgpuState *s)
{
    unsigned i;

    s->engine_bh = qemu_bh_new_guarded(vmgpu_engine_bh, s,
                                       &DEVICE(s)->mem_reentrancy_guard);
    /*
     * The handler's view, not the run state: a suspend (S3) changes that
     * without calling the handler, and nothing would resume the engine.
     */
    s->engine_vm_running = runstate_is_running();
    s->engine_vm_state = qemu_add_vm_change_state_handler(vmgpu_engine_vm_state,
                                                          s);
    vmgpu_offload_init(s);
    for (i = 0; i < VMGPU_MAX_RINGS; i++) {
        s->rings[i].owner = s;
        timer_init_ns(&s->rings[i].delay, QEMU_CLOCK_VIRTUAL,
                      vmgpu_ring_delay_done, &s->rings[i]);
        vmgpu_wait_init(&s->rings[i]);
    }
}

void vmgpu_engine_reset(VmgpuState *s)
{
    unsigned i;

    for (i = 0; i < VMGPU_MAX_RINGS; i++) {
        VmgpuRing *ring = &s->rings[i];

        timer_del(&ring->delay);
        vmgpu_ring_drop_cmd(s, ring);
        ring->enabled = ring->halted = false;
        ring->vm_bound = false;
        ring->base = 0;
        ring->size_shift = 0;
        ring->head = ring->tail = 0;
        ring->mode = VMGPU_RING_MODE_VIRTUAL;
        ring->fence_addr = 0;
    }
    s->next_ring = 0;
    s->gart_base = 0;
    s->gart_num_pages = 0;
}

void vmgpu_engine_exit(VmgpuState *s)
{
    unsigned i;

    qemu_del_vm_change_state_handler(s->engine_vm_state);
    vmgpu_offload_exit(s);
    for (i = 0; i < VMGPU_MAX_RINGS; i++) {
        timer_del(&s->rings[i].delay);
        vmgpu_wait_drop(&s->rings[i]);
    }
    qemu_bh_delete(s->engine_bh);
}
