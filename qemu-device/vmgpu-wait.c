/*
 * vmgpu: WAIT, a ring stalled on a value in memory.
 *
 * An unmet WAIT parks its ring with HEAD on it. Re-reading it on every
 * run of the engine would spin the main loop for as long as the wait
 * lasts, so the value is read again only when it may have changed: after
 * a command of any ring wrote memory, on a doorbell or RESUME
 * (vmgpu_wait_kick), and every VMGPU_WAIT_RECHECK_US of virtual time for
 * the writes the device cannot see, the CPU's. In between the ring is not
 * ready, and with nothing else to do the engine stays idle.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/main-loop.h"
#include "qemu/timer.h"
#include "vmgpu.h"
#include "trace.h"

static void vmgpu_wait_timer(void *opaque)
{
    VmgpuRing *ring = opaque;

    ring->wait_recheck = true;
    qemu_bh_schedule(ring->owner->engine_bh);
}

void vmgpu_wait_init(VmgpuRing *ring)
{
    timer_init_ns(&ring->wait_timer, QEMU_CLOCK_VIRTUAL, vmgpu_wait_timer,
                  ring);
}

/* The ring sits on an unmet WAIT and nothing has happened since it read it. */
bool vmgpu_wait_blocked(const VmgpuRing *ring)
{
    return ring->waiting && !ring->wait_recheck;
}

/* Something may have changed the value of any unmet WAIT. */
void vmgpu_wait_kick(VmgpuState *s)
{
    bool any = false;
    unsigned i;

    for (i = 0; i < VMGPU_MAX_RINGS; i++) {
        if (s->rings[i].waiting) {
            s->rings[i].wait_recheck = true;
            any = true;
        }
    }
    if (any) {
        qemu_bh_schedule(s->engine_bh);
    }
}

/* The WAIT is met, failed or dropped with its ring: stop re-reading it. */
void vmgpu_wait_drop(VmgpuRing *ring)
{
    ring->waiting = false;
    ring->wait_recheck = false;
    timer_del(&ring->wait_timer);
}

/*
 * Read the WAIT's value, on its first run or a re-check. The fields other
 * than the address were checked by the caller.
 */
VmgpuCmdStatus vmgpu_exec_wait(VmgpuState *s, VmgpuRing *ring,
                               const struct vmgpu_cmd_wait *c,
                               VmgpuMemError *err)
{
    unsigned index = ring - s->rings;
    uint64_t addr = le64_to_cpu(c->addr.addr);
    uint64_t target = le64_to_cpu(c->value);
    uint64_t value;

    if (!vmgpu_mem_check_addr(&c->addr, err)) {
        return VMGPU_CMD_FAILED;
    }
    if (addr % 8) {
        return vmgpu_cmd_fail(err, VMGPU_ERR_BAD_FIELD, addr);
    }
    if (!vmgpu_mem_rw(s, &c->addr, 0, &value, sizeof(value), false, err)) {
        return VMGPU_CMD_FAILED;
    }
    value = le64_to_cpu(value);
    if (value >= target) {
        trace_vmgpu_wait_done(index, ring->head, value, target);
        vmgpu_wait_drop(ring);
        return VMGPU_CMD_DONE;
    }
    if (ring->waiting) {
        trace_vmgpu_wait_recheck(index, ring->head, value, target);
    } else {
        trace_vmgpu_wait_start(index, ring->head, addr, value, target);
    }
    ring->waiting = true;
    ring->wait_recheck = false;
    /*
     * Re-checks caused by other rings leave the timer alone: it only has
     * to bound how long a CPU write goes unseen.
     */
    if (!timer_pending(&ring->wait_timer)) {
        timer_mod(&ring->wait_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)VMGPU_WAIT_RECHECK_US * SCALE_US);
    }
    return VMGPU_CMD_WAIT;
}
