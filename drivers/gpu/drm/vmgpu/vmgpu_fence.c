// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/interrupt.h>
#include <linux/slab.h>

#include "vmgpu_device.h"
#include "vmgpu_fence.h"

/**
 * DOC: hardware fences
 *
 * Every paging job ends with a FENCE command that writes the job's seqno to
 * a 64-bit word in system memory and raises the fence interrupt. The seqno
 * word is the truth: the interrupt only says "look again", so a missed or
 * merged interrupt costs latency, never correctness. Fences of a ring
 * complete in seqno order because the ring executes in order.
 */

struct vmgpu_fence {
	struct dma_fence base;
	struct list_head link;
	struct vmgpu_ring *ring;
};

static struct vmgpu_fence *to_vmgpu_fence(struct dma_fence *f)
{
	return container_of(f, struct vmgpu_fence, base);
}

static const char *vmgpu_fence_driver_name(struct dma_fence *f)
{
	return "vmgpu";
}

static const char *vmgpu_fence_timeline_name(struct dma_fence *f)
{
	return "paging";
}

static bool vmgpu_fence_signaled(struct dma_fence *f)
{
	struct vmgpu_ring *ring = to_vmgpu_fence(f)->ring;

	return READ_ONCE(*ring->seqno_cpu) >= f->seqno;
}

static const struct dma_fence_ops vmgpu_fence_ops = {
	.get_driver_name = vmgpu_fence_driver_name,
	.get_timeline_name = vmgpu_fence_timeline_name,
	.signaled = vmgpu_fence_signaled,
};

/**
 * vmgpu_fence_emit() - create the fence of the next FENCE command
 * @ring: the ring the command goes to
 * @seqno: out, the value the command must write
 *
 * Called from the scheduler's run_job, one at a time per ring.
 *
 * Return: a fence with one reference for the caller, or NULL without memory.
 */
struct dma_fence *vmgpu_fence_emit(struct vmgpu_ring *ring, u64 *seqno)
{
	struct vmgpu_fence *fence = kzalloc(sizeof(*fence), GFP_KERNEL);
	unsigned long flags;

	if (!fence)
		return NULL;
	fence->ring = ring;
	*seqno = ++ring->next_seqno;
	dma_fence_init(&fence->base, &vmgpu_fence_ops, &ring->fence_lock,
		       ring->fence_context, *seqno);

	spin_lock_irqsave(&ring->fence_lock, flags);
	list_add_tail(&fence->link, &ring->pending);
	dma_fence_get(&fence->base);	/* the pending list's reference */
	spin_unlock_irqrestore(&ring->fence_lock, flags);
	return &fence->base;
}

/* Signal, with @error if non-zero, every pending fence up to @seqno. */
static void vmgpu_fence_signal_upto(struct vmgpu_ring *ring, u64 seqno,
				    int error)
{
	struct vmgpu_fence *fence, *next;
	unsigned long flags;

	spin_lock_irqsave(&ring->fence_lock, flags);
	list_for_each_entry_safe(fence, next, &ring->pending, link) {
		if (fence->base.seqno > seqno)
			break;
		if (error)
			dma_fence_set_error(&fence->base, error);
		list_del(&fence->link);
		dma_fence_signal_locked(&fence->base);
		dma_fence_put(&fence->base);
	}
	spin_unlock_irqrestore(&ring->fence_lock, flags);
}

/**
 * vmgpu_fence_process() - signal the fences the device has completed
 * @ring: the ring
 */
void vmgpu_fence_process(struct vmgpu_ring *ring)
{
	vmgpu_fence_signal_upto(ring, READ_ONCE(*ring->seqno_cpu), 0);
}

/**
 * vmgpu_fence_fail_oldest() - mark the oldest pending fence as failed
 * @ring: the ring
 * @error: negative errno for the fence
 *
 * The ring halts on the first failing command, which belongs to the oldest
 * job not yet completed. Its fence still signals when the job's FENCE
 * command runs after the driver resumes the ring, now carrying @error.
 */
void vmgpu_fence_fail_oldest(struct vmgpu_ring *ring, int error)
{
	struct vmgpu_fence *fence;
	unsigned long flags;

	spin_lock_irqsave(&ring->fence_lock, flags);
	fence = list_first_entry_or_null(&ring->pending, struct vmgpu_fence, link);
	if (fence)
		dma_fence_set_error(&fence->base, error);
	spin_unlock_irqrestore(&ring->fence_lock, flags);
}

/**
 * vmgpu_fence_fail_all() - signal every pending fence with an error
 * @ring: the ring, stopped: the device will not write its seqno again
 * @error: negative errno for the fences
 */
void vmgpu_fence_fail_all(struct vmgpu_ring *ring, int error)
{
	vmgpu_fence_signal_upto(ring, U64_MAX, error);
}

/**
 * vmgpu_fence_init() - set up a ring's fence timeline
 * @ring: the ring, with @seqno_cpu allocated
 */
void vmgpu_fence_init(struct vmgpu_ring *ring)
{
	spin_lock_init(&ring->fence_lock);
	INIT_LIST_HEAD(&ring->pending);
	ring->fence_context = dma_fence_context_alloc(1);
	ring->next_seqno = 0;
	WRITE_ONCE(*ring->seqno_cpu, 0);
}
