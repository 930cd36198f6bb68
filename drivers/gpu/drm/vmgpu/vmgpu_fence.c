// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/slab.h>

#include "vmgpu_context.h"
#include "vmgpu_device.h"
#include "vmgpu_fence.h"
#include "vmgpu_job_types.h"

/**
 * DOC: hardware fences
 *
 * Every job ends with a FENCE command that writes the job's seqno to a
 * 64-bit word in system memory and raises the fence interrupt. The seqno
 * word is the truth: the interrupt only says "look again", so a missed or
 * merged interrupt costs latency, never correctness. Fences of a ring
 * complete in seqno order because the ring executes in order. Fences
 * signal only from vmgpu_fence_process() and the error paths, never from a
 * .signaled callback, so that an inherited error (below) is never skipped.
 *
 * A fence is allocated with its job and initialised when the job is
 * written to the ring, so nothing on the way to signalling it allocates.
 * Each fence knows the ring slots of its job, which is how a command the
 * device rejected is blamed on the job it belongs to.
 *
 * Never report success for work that did not run: a job that continues
 * earlier work (the next part of a paging operation, or an operation on
 * memory the previous one wrote) carries that work's hardware fence in
 * @prev, and inherits its error when it signals. Both are on the ring in
 * order, so @prev has signalled by then, also during hang recovery, when
 * the scheduler's own fences are detached from ours.
 *
 * A user job's fence also publishes its completion to the job's context
 * (vmgpu_context_job_done()) as it signals, before its signalled bit is
 * set, not from a callback: dma_fence_add_callback() reads that bit
 * without the lock, so the scheduler may complete and free the job while
 * the callbacks still run.
 */

static struct vmgpu_hw_fence *to_hw_fence(struct dma_fence *f)
{
	return container_of(f, struct vmgpu_hw_fence, base);
}

static const char *vmgpu_fence_driver_name(struct dma_fence *f)
{
	return "vmgpu";
}

static const char *vmgpu_fence_timeline_name(struct dma_fence *f)
{
	return to_hw_fence(f)->ring->name;
}

static void vmgpu_fence_release(struct dma_fence *f)
{
	struct vmgpu_hw_fence *fence = to_hw_fence(f);

	dma_fence_put(fence->prev);
	dma_fence_free(f);
}

static const struct dma_fence_ops vmgpu_fence_ops = {
	.get_driver_name = vmgpu_fence_driver_name,
	.get_timeline_name = vmgpu_fence_timeline_name,
	.release = vmgpu_fence_release,
};

/**
 * vmgpu_fence_alloc() - allocate the fence of a job being built
 *
 * Return: the fence, not yet initialised, or NULL without memory.
 */
struct vmgpu_hw_fence *vmgpu_fence_alloc(void)
{
	return kzalloc(sizeof(struct vmgpu_hw_fence), GFP_KERNEL);
}

/**
 * vmgpu_fence_free() - free a fence that was never initialised
 * @fence: the fence
 */
void vmgpu_fence_free(struct vmgpu_hw_fence *fence)
{
	kfree(fence);
}

/**
 * vmgpu_fence_init() - start the fence of a job just written to the ring
 * @fence: from vmgpu_fence_alloc()
 * @ring: the ring
 * @prev: fence whose error the job inherits, or NULL; the reference is
 *	  the fence's now
 * @seqno: what the job's FENCE command writes
 * @first_slot: slot of the job's first command
 * @end_slot: slot after the job's FENCE command
 *
 * Called from run_job, one job at a time per ring: allocates nothing.
 */
void vmgpu_fence_init(struct vmgpu_hw_fence *fence, struct vmgpu_ring *ring,
		      struct dma_fence *prev, u64 seqno, u32 first_slot,
		      u32 end_slot)
{
	unsigned long flags;

	fence->ring = ring;
	fence->prev = prev;
	fence->ran_ns = ktime_get_ns();
	fence->first_slot = first_slot;
	fence->end_slot = end_slot;
	dma_fence_init(&fence->base, &vmgpu_fence_ops, &ring->fence_lock,
		       ring->fence_context, seqno);

	spin_lock_irqsave(&ring->fence_lock, flags);
	list_add_tail(&fence->link, &ring->pending);
	dma_fence_get(&fence->base);	/* the pending list's reference */
	spin_unlock_irqrestore(&ring->fence_lock, flags);
}

/* Signal one pending fence; @error, or the error of the work it continues. */
static void vmgpu_fence_signal_locked(struct vmgpu_hw_fence *fence, int error)
{
	struct vmgpu_ring *ring = fence->ring;
	struct dma_fence *prev = fence->prev;
	u64 now = ktime_get_ns(), busy;

	lockdep_assert_held(&ring->fence_lock);
	/* Busy from when the ring got to it; queueing behind others is not. */
	busy = now - max(fence->ran_ns, ring->last_done_ns);
	ring->last_done_ns = now;
	atomic64_add(busy, &ring->busy_ns);
	atomic64_inc(&ring->jobs_done);
	/* The bit, not dma_fence_is_signaled(): no locks taken in here. */
	if (!error && !fence->base.error && prev &&
	    test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &prev->flags))
		error = prev->error;
	if (error && !fence->base.error)
		dma_fence_set_error(&fence->base, error);
	/* Consumed: do not keep a chain of every earlier paging fence alive. */
	fence->prev = NULL;
	dma_fence_put(prev);
	if (fence->ctx)
		vmgpu_context_job_done(fence, busy);

	list_del(&fence->link);
	dma_fence_signal_locked(&fence->base);
	dma_fence_put(&fence->base);
}

/**
 * vmgpu_fence_process() - signal the fences the device has completed
 * @ring: the ring
 *
 * Return: how many fences it signalled.
 */
unsigned int vmgpu_fence_process(struct vmgpu_ring *ring)
{
	u64 done = READ_ONCE(*ring->seqno_cpu);
	struct vmgpu_hw_fence *fence, *next;
	unsigned int count = 0;
	unsigned long flags;

	spin_lock_irqsave(&ring->fence_lock, flags);
	list_for_each_entry_safe(fence, next, &ring->pending, link) {
		if (fence->base.seqno > done)
			break;
		vmgpu_fence_signal_locked(fence, 0);
		count++;
	}
	spin_unlock_irqrestore(&ring->fence_lock, flags);
	return count;
}

static bool vmgpu_fence_owns_slot(const struct vmgpu_hw_fence *fence, u32 slot,
				  u32 mask)
{
	return ((slot - fence->first_slot) & mask) <
	       ((fence->end_slot - fence->first_slot) & mask);
}

/**
 * vmgpu_fence_blame_slot() - give an error to the job of a ring slot
 * @ring: the ring
 * @slot: slot of the command the device rejected
 * @error: negative errno
 *
 * Call vmgpu_fence_process() first: the fence and error interrupts are
 * separate vectors, so jobs the device finished before the failure may
 * not be signalled yet, and they did succeed. The blamed job's fence still
 * signals when its own FENCE command runs, carrying @error.
 *
 * Return: the blamed fence's seqno, or 0 if no pending job owns @slot.
 */
u64 vmgpu_fence_blame_slot(struct vmgpu_ring *ring, u32 slot, int error)
{
	struct vmgpu_hw_fence *fence;
	unsigned long flags;
	u64 seqno = 0;

	spin_lock_irqsave(&ring->fence_lock, flags);
	list_for_each_entry(fence, &ring->pending, link) {
		if (vmgpu_fence_owns_slot(fence, slot, ring->num_slots - 1)) {
			if (!fence->base.error)
				dma_fence_set_error(&fence->base, error);
			seqno = fence->base.seqno;
			break;
		}
	}
	spin_unlock_irqrestore(&ring->fence_lock, flags);
	return seqno;
}

/**
 * vmgpu_fence_fail() - signal one fence with an error
 * @fence: a fence whose job the device will not complete
 * @error: negative errno
 *
 * Does nothing if the fence has signalled already.
 */
void vmgpu_fence_fail(struct vmgpu_hw_fence *fence, int error)
{
	struct vmgpu_ring *ring = fence->ring;
	unsigned long flags;

	spin_lock_irqsave(&ring->fence_lock, flags);
	if (!test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &fence->base.flags))
		vmgpu_fence_signal_locked(fence, error);
	spin_unlock_irqrestore(&ring->fence_lock, flags);
}

/**
 * vmgpu_fence_fail_all() - signal every pending fence with an error
 * @ring: the ring, stopped: the device will not write its seqno again
 * @error: negative errno for the fences
 */
void vmgpu_fence_fail_all(struct vmgpu_ring *ring, int error)
{
	struct vmgpu_hw_fence *fence, *next;
	unsigned long flags;

	spin_lock_irqsave(&ring->fence_lock, flags);
	list_for_each_entry_safe(fence, next, &ring->pending, link)
		vmgpu_fence_signal_locked(fence, error);
	spin_unlock_irqrestore(&ring->fence_lock, flags);
}

/**
 * vmgpu_fence_ring_init() - set up a ring's fence timeline
 * @ring: the ring, with @seqno_cpu allocated
 */
void vmgpu_fence_ring_init(struct vmgpu_ring *ring)
{
	spin_lock_init(&ring->fence_lock);
	INIT_LIST_HEAD(&ring->pending);
	ring->fence_context = dma_fence_context_alloc(1);
	ring->next_seqno = 0;
	WRITE_ONCE(*ring->seqno_cpu, 0);
}

#if IS_ENABLED(CONFIG_KUNIT)
#include "tests/vmgpu_fence_test.c"
#endif
