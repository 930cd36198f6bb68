// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include <kunit/visibility.h>

#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_bo.h>

#include "vmgpu_cache.h"
#include "vmgpu_device.h"
#include "vmgpu_fence.h"
#include "vmgpu_inject.h"
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_paging_op.h"
#include "vmgpu_paging_vm.h"
#include "vmgpu_res_cursor.h"
#include "vmgpu_trace.h"

/**
 * DOC: paging job reserve
 *
 * Seed "GPU segments": evictions are what make room, so they must not
 * need memory themselves. Every paging operation (clears and moves,
 * NotifyEviction and NotifyIoMmuUnmap, the cache flushes that end an
 * allocation's stay in the device's reach) is queued with the jobs of a
 * reserve made at probe, each with its scheduler fence and its hardware
 * fence already: building and queueing an operation allocates nothing.
 * The reserve has two pools:
 *
 * - operation jobs, each with room for %VMGPU_RESERVE_JOB_CMDS commands
 *   and staging memory for the paging-VA entries of
 *   %VMGPU_RESERVE_JOB_ENTRIES pages (DOC: paging process GPU VA): twice
 *   what a move of the largest memory segment maps, at least
 *   %VMGPU_RESERVE_JOBS_MIN and at most %VMGPU_RESERVE_JOBS_MAX jobs;
 * - %VMGPU_RESERVE_GATES gates, empty jobs that each hold one fence.
 *
 * The fences an operation waits for (the reservation's, but those of the
 * paging ring's own earlier work, which the ring runs first anyway) are
 * spread one per job, since a scheduler job holds its first dependency
 * without allocating (the first entry of its dependency xarray lives in
 * the array's head): the operation's first job takes one, and each other
 * one gets a gate queued ahead of it. The ring's entity runs its jobs in
 * order, so the operation starts after every gate.
 *
 * Then the operation holds the paging ring's push lock from its first job
 * to its last: it fills a job, queues it once full (of commands or of
 * entries) and takes the next, so that each continues the one before
 * (&vmgpu_hw_fence.prev). Holding the lock makes the building of paging
 * operations one at a time, so that no two can each hold a job the other
 * waits for.
 *
 * A job the scheduler frees goes back to its pool, where a work item
 * gives it new fences, outside any operation, on a workqueue that makes
 * progress under memory pressure. An operation that finds no ready job
 * waits for one. Jobs come back as the ring runs what was queued before,
 * which waits for nothing the operation holds, so an operation of any
 * size goes through; but its progress then depends on the work item's
 * allocations, which the wait tells lockdep (might_alloc()). That wait is
 * uninterruptible, since jobs already queued cannot be taken back; a move
 * waits for a ready job and the gates it needs before it queues anything,
 * as its TTM context allows (vmgpu_job_reserve_wait()): a signal ends that
 * wait, and a context that must not wait for the GPU gets -EBUSY. A gate
 * comes back once the ring has run it, after the fence it holds: that
 * takes at least as long as a user job. A move waits for at most half the
 * gates to be ready, so as not to wait for the whole pool to be idle at
 * once. The second hop of a move through a temporary placement waits as
 * before: failing there would leave the allocation in the temporary
 * placement. Gates are taken before the push lock: an operation that
 * waits for more than %VMGPU_RESERVE_GATES other users of its allocation
 * waits on the CPU, uninterruptibly, for the oldest to finish, holding
 * the reservations its caller holds (no push lock).
 *
 * Not covered: TTM's own allocations around a move (the new resource, a
 * ghost object, a system backing's pages and page arrays) and a fence slot
 * of the reservation, which happen before or after vmgpu's part.
 */

/*
 * Operation jobs, at least and at most: small operations (a new
 * allocation's clear) take one each, and a shallower reserve made them
 * wait for jobs to come back (make bench's alloc_memory1).
 */
#define VMGPU_RESERVE_JOBS_MIN		32
#define VMGPU_RESERVE_JOBS_MAX		64
/* Gates. */
#define VMGPU_RESERVE_GATES		64

/* A job's fences, made outside any operation: a new job, or one back. */
static int vmgpu_job_reserve_ready(struct vmgpu_job *job)
{
	int ret = drm_sched_job_init(&job->base, job->entity, 1, NULL, 0);

	if (ret)
		return ret;
	if (!job->hw_fence)
		job->hw_fence = vmgpu_fence_alloc();
	if (!job->hw_fence) {
		drm_sched_job_cleanup(&job->base);
		return -ENOMEM;
	}
	return 0;
}

static void vmgpu_job_reserve_add_ready(struct vmgpu_job_reserve *res, struct vmgpu_job *job)
{
	spin_lock(&res->lock);
	list_add_tail(&job->reserve_link, &job->pool->ready);
	job->pool->num_ready++;
	spin_unlock(&res->lock);
	wake_up_all(&res->ready_wq);
}

/* A spent job of either pool, taken off its list; NULL if none. */
static struct vmgpu_job *vmgpu_job_reserve_next_spent(struct vmgpu_job_reserve *res)
{
	struct vmgpu_job *job;

	spin_lock(&res->lock);
	job = list_first_entry_or_null(&res->ops.spent, struct vmgpu_job, reserve_link);
	if (!job)
		job = list_first_entry_or_null(&res->gates.spent, struct vmgpu_job,
					       reserve_link);
	if (job)
		list_del(&job->reserve_link);
	spin_unlock(&res->lock);
	return job;
}

static void vmgpu_job_reserve_refill(struct work_struct *work)
{
	struct vmgpu_job_reserve *res = container_of(to_delayed_work(work),
						     struct vmgpu_job_reserve, refill);
	struct vmgpu_job *job;

	while ((job = vmgpu_job_reserve_next_spent(res))) {
		if (vmgpu_job_reserve_ready(job)) {
			spin_lock(&res->lock);
			list_add(&job->reserve_link, &job->pool->spent);
			/* Memory is short: try again a little later. */
			mod_delayed_work(res->wq, &res->refill, HZ / 50);
			spin_unlock(&res->lock);
			return;
		}
		spin_lock(&res->lock);
		res->refills++;
		spin_unlock(&res->lock);
		vmgpu_job_reserve_add_ready(res, job);
	}
}

static void vmgpu_job_pool_free(struct vmgpu_job_pool *pool)
{
	struct vmgpu_job *job, *next;

	list_for_each_entry_safe(job, next, &pool->ready, reserve_link) {
		drm_sched_job_cleanup(&job->base);
		vmgpu_fence_free(job->hw_fence);
		kvfree(job);
	}
	list_for_each_entry_safe(job, next, &pool->spent, reserve_link)
		kvfree(job);
}

/*
 * drmm: with the DRM device. Jobs the scheduler still holds free
 * themselves when it lets them go (@gone).
 */
static void vmgpu_job_reserve_release(struct drm_device *drm, void *arg)
{
	struct vmgpu_job_reserve *res = arg;

	spin_lock(&res->lock);
	res->gone = true;
	spin_unlock(&res->lock);
	cancel_delayed_work_sync(&res->refill);
	destroy_workqueue(res->wq);
	vmgpu_job_pool_free(&res->ops);
	vmgpu_job_pool_free(&res->gates);
}

static int vmgpu_job_pool_fill(struct vmgpu_device *vdev, struct vmgpu_job_pool *pool,
			       u32 jobs, u32 cmds, u32 entries)
{
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);
	u32 i;

	for (i = 0; i < jobs; i++) {
		struct vmgpu_job *job = vmgpu_job_alloc(ring, cmds);
		struct vmgpu_pte_staging *st;
		int ret = 0;

		if (IS_ERR(job))
			return PTR_ERR(job);
		st = &job->staging;
		if (entries) {
			st->size = entries;
			st->cpu = dmam_alloc_coherent(vdev->drm.dev, entries * sizeof(__le64),
						      &st->bus, GFP_KERNEL);
			if (!st->cpu)
				ret = -ENOMEM;
		}
		if (!ret)
			ret = vmgpu_job_reserve_ready(job);
		if (ret) {
			vmgpu_job_free(job);
			return ret;
		}
		job->pool = pool;
		pool->jobs++;
		vmgpu_job_reserve_add_ready(&vdev->job_reserve, job);
	}
	return 0;
}

/*
 * Twice the jobs a move of the largest memory segment fills with entries
 * (both sides), so that two such moves are queued without waiting.
 */
static u32 vmgpu_job_reserve_size(struct vmgpu_device *vdev)
{
	u64 per_job = (u64)VMGPU_RESERVE_JOB_ENTRIES << VMGPU_PAGE_SHIFT, largest = 0;
	u32 i;

	for (i = 0; i < vdev->num_segments; i++)
		largest = max(largest, vdev->segments[i].size);
	return clamp_t(u64, 2 * DIV_ROUND_UP_ULL(2 * largest, per_job),
		       VMGPU_RESERVE_JOBS_MIN, VMGPU_RESERVE_JOBS_MAX);
}

/**
 * vmgpu_job_reserve_init() - make the paging job reserve
 * @vdev: the device, its paging ring and memory segments set up
 *
 * The jobs' staging memory is device-managed, like the rings: operations
 * are only built while the device is there (drm_dev_enter()).
 *
 * Return: 0 or -ENOMEM.
 */
int vmgpu_job_reserve_init(struct vmgpu_device *vdev)
{
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);
	struct vmgpu_job_reserve *res = &vdev->job_reserve;
	int ret;

	/* A map command copies one table's entries: a job holds them whole. */
	BUILD_BUG_ON(VMGPU_RESERVE_JOB_ENTRIES < VMGPU_PT_ENTRIES);
	spin_lock_init(&res->lock);
	INIT_LIST_HEAD(&res->ops.ready);
	INIT_LIST_HEAD(&res->ops.spent);
	INIT_LIST_HEAD(&res->gates.ready);
	INIT_LIST_HEAD(&res->gates.spent);
	INIT_DELAYED_WORK(&res->refill, vmgpu_job_reserve_refill);
	init_waitqueue_head(&res->ready_wq);
	res->wq = alloc_ordered_workqueue("vmgpu-reserve", WQ_MEM_RECLAIM);
	if (!res->wq)
		return -ENOMEM;
	ret = drmm_add_action_or_reset(&vdev->drm, vmgpu_job_reserve_release, res);
	if (ret)
		return ret;
	ret = vmgpu_job_pool_fill(vdev, &res->ops, vmgpu_job_reserve_size(vdev),
				  min_t(u32, VMGPU_RESERVE_JOB_CMDS, vmgpu_job_max_cmds(ring)),
				  VMGPU_RESERVE_JOB_ENTRIES);
	if (!ret)
		ret = vmgpu_job_pool_fill(vdev, &res->gates, VMGPU_RESERVE_GATES, 1, 0);
	return ret;
}

/**
 * vmgpu_job_reserve_put() - a reserved job is back from the scheduler
 * @job: the job, its scheduler fences cleaned up, its other references
 *	 dropped (vmgpu_job_free())
 *
 * Context: any context the scheduler frees jobs in; does not sleep.
 */
void vmgpu_job_reserve_put(struct vmgpu_job *job)
{
	struct vmgpu_job_reserve *res = &job->ring->vdev->job_reserve;
	bool gone;

	job->hw_fence = NULL;
	job->hw_fence_live = false;
	job->num_cmds = 0;
	job->staging.used = 0;
	spin_lock(&res->lock);
	gone = res->gone;
	if (!gone) {
		list_add_tail(&job->reserve_link, &job->pool->spent);
		mod_delayed_work(res->wq, &res->refill, 0);
	}
	spin_unlock(&res->lock);
	if (gone)
		kvfree(job);
}

/**
 * vmgpu_job_reserve_print() - the reserve's state, for debugfs
 * @vdev: the device
 * @p: where to
 */
void vmgpu_job_reserve_print(struct vmgpu_device *vdev, struct drm_printer *p)
{
	struct vmgpu_job_reserve *res = &vdev->job_reserve;

	spin_lock(&res->lock);
	drm_printf(p, "jobs %u ready %u waits %llu\n", res->ops.jobs, res->ops.num_ready,
		   res->ops.waits);
	drm_printf(p, "gates %u ready %u waits %llu\n", res->gates.jobs,
		   res->gates.num_ready, res->gates.waits);
	drm_printf(p, "refills %llu\n", res->refills);
	drm_printf(p, "move_waits %llu\n", res->move_waits);
	spin_unlock(&res->lock);
}

static struct vmgpu_job *vmgpu_job_reserve_pop(struct vmgpu_job_reserve *res,
					       struct vmgpu_job_pool *pool)
{
	struct vmgpu_job *job;

	spin_lock(&res->lock);
	job = list_first_entry_or_null(&pool->ready, struct vmgpu_job, reserve_link);
	if (job) {
		list_del(&job->reserve_link);
		pool->num_ready--;
	}
	spin_unlock(&res->lock);
	return job;
}

/*
 * An operation job and @gates gates ready; half the pool's gates if @gates
 * is more, so that a move with many users does not wait for the whole
 * pool to be idle at once: its operation waits for the rest as they come
 * back.
 */
static bool vmgpu_job_reserve_has_ready(struct vmgpu_job_reserve *res, u32 gates)
{
	bool ready;

	spin_lock(&res->lock);
	ready = res->ops.num_ready && res->gates.num_ready >= min(gates, res->gates.jobs / 2);
	spin_unlock(&res->lock);
	return ready;
}

/* Fences of the ring's own entity: the ring runs them first anyway. */
static bool vmgpu_paging_op_runs_before(struct vmgpu_ring *ring, struct dma_fence *fence)
{
	u64 context = ring->entity.fence_context;

	return fence->context == context || fence->context == context + 1;
}

/* Whether an operation on the paging ring must wait for @fence. */
static bool vmgpu_paging_op_waits_for(struct vmgpu_ring *ring, struct dma_fence *fence)
{
	return !dma_fence_is_signaled(fence) && !vmgpu_paging_op_runs_before(ring, fence);
}

/*
 * The gates an operation on @resv queues: one per fence it waits for but
 * the first. *@last is the last of those fences, or NULL: a gate that
 * waits for no fence comes back at once.
 */
static u32 vmgpu_paging_op_gates(struct vmgpu_device *vdev, struct dma_resv *resv,
				 struct dma_fence **last)
{
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	u32 fences = 0;

	dma_resv_assert_held(resv);
	*last = NULL;
	dma_resv_for_each_fence(&cursor, resv, DMA_RESV_USAGE_BOOKKEEP, fence) {
		if (vmgpu_paging_op_waits_for(ring, fence)) {
			fences++;
			*last = fence;
		}
	}
	return fences ? fences - 1 : 0;
}

/* Wakes a move's wait for the reserve when a user of its allocation ends. */
struct vmgpu_reserve_watch {
	struct dma_fence_cb cb;
	struct dma_fence *fence;
	struct vmgpu_job_reserve *res;
};

static void vmgpu_reserve_watch_wake(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct vmgpu_reserve_watch *watch = container_of(cb, struct vmgpu_reserve_watch, cb);

	wake_up_all(&watch->res->ready_wq);
}

/**
 * vmgpu_job_reserve_wait() - wait for ready jobs as a move's context allows
 * @vdev: the device
 * @ctx: the TTM context of the move about to queue a paging operation
 * @resv: the reservation the operation waits for, held
 *
 * An operation that finds the reserve drained waits, uninterruptibly, for
 * jobs to come back from the paging ring, which may be busy for as long as
 * the jobs queued ahead take, and so may its gates, which come back once
 * the ring has run them, after the fences they hold. A move calls this
 * first, where nothing is queued yet, for an operation job and the gates
 * @resv needs (counted again as users finish): with @ctx->no_wait_gpu it
 * does not wait, and with @ctx->interruptible a signal ends the wait. Jobs
 * taken by another operation between this and the move's own, and gates
 * beyond half the pool, are still waited for, without interruption, as
 * before.
 *
 * Return: 0 once the jobs are ready (or @ctx lets the operation wait for
 * them), -EBUSY if they are not and @ctx->no_wait_gpu is set,
 * -ERESTARTSYS if a signal came first.
 */
int vmgpu_job_reserve_wait(struct vmgpu_device *vdev, struct ttm_operation_ctx *ctx,
			   struct dma_resv *resv)
{
	struct vmgpu_job_reserve *res = &vdev->job_reserve;
	struct vmgpu_reserve_watch watch = { .res = res };
	struct dma_fence *last;
	bool counted = false;
	u32 gates;
	int ret;

	/* Jobs and gates come back by the refill's allocations. */
	might_alloc(GFP_KERNEL);
	for (;;) {
		gates = vmgpu_paging_op_gates(vdev, resv, &last);
		if (vmgpu_job_reserve_has_ready(res, gates))
			return 0;
		if (ctx->no_wait_gpu)
			return -EBUSY;
		if (!ctx->interruptible)
			return 0;
		if (!counted) {
			spin_lock(&res->lock);
			res->move_waits++;
			spin_unlock(&res->lock);
			counted = true;
		}
		/*
		 * A user that finishes may leave the operation fewer gates to
		 * queue: look again then, too. The reservation is held, so
		 * @last stays in it until the callback is gone.
		 */
		watch.fence = NULL;
		if (gates) {
			if (dma_fence_add_callback(last, &watch.cb, vmgpu_reserve_watch_wake))
				continue;	/* it has just finished */
			watch.fence = last;
		}
		ret = wait_event_interruptible(res->ready_wq,
					       vmgpu_job_reserve_has_ready(res, gates) ||
					       (watch.fence && dma_fence_is_signaled(watch.fence)));
		if (watch.fence)
			dma_fence_remove_callback(watch.fence, &watch.cb);
		if (ret)
			return ret;
	}
}

/* A ready job of @pool; waits for one to come back if none is. */
static struct vmgpu_job *vmgpu_job_reserve_take(struct vmgpu_device *vdev,
						struct vmgpu_job_pool *pool)
{
	struct vmgpu_job_reserve *res = &vdev->job_reserve;
	struct vmgpu_job *job;

	/* Whether or not it waits now: a job comes back by the refill's allocations. */
	might_alloc(GFP_KERNEL);
	job = vmgpu_job_reserve_pop(res, pool);
	if (job)
		return job;
	spin_lock(&res->lock);
	pool->waits++;
	spin_unlock(&res->lock);
	wait_event(res->ready_wq, (job = vmgpu_job_reserve_pop(res, pool)));
	return job;
}

/* Queue the job being filled; it continues what came before. */
static void vmgpu_paging_op_push_job(struct vmgpu_paging_op *op)
{
	struct dma_fence *fence;

	vmgpu_job_continues(op->job, op->fence);
	fence = vmgpu_job_push(op->job);
	dma_fence_put(op->fence);
	op->fence = fence;
}

/* Queue the job being filled and take the next. */
static void vmgpu_paging_op_next(struct vmgpu_paging_op *op)
{
	op->emit(op);
	op->jobs++;
	op->job = vmgpu_job_reserve_take(op->vdev, &op->vdev->job_reserve.ops);
}

/* Room in the job being filled for @cmds commands and @entries entries. */
static void vmgpu_paging_op_room(struct vmgpu_paging_op *op, u32 cmds, u32 entries)
{
	struct vmgpu_job *job = op->job;

	if (job->num_cmds + cmds > job->max_cmds ||
	    job->staging.used + entries > job->staging.size)
		vmgpu_paging_op_next(op);
}

/*
 * A job's first dependency, which the scheduler holds without allocating
 * (the first entry of its dependency array). Were that ever to fail, the
 * wait happens here, which keeps the order.
 */
static void vmgpu_paging_op_depend(struct vmgpu_job *job, struct dma_fence *fence)
{
	if (drm_sched_job_add_dependency(&job->base, dma_fence_get(fence)))
		dma_fence_wait(fence, false);
}

/* A gate waiting for @fence, queued ahead of the operation's jobs. */
static void vmgpu_paging_op_gate(struct vmgpu_device *vdev, struct dma_fence *fence)
{
	struct vmgpu_job *gate = vmgpu_job_reserve_take(vdev, &vdev->job_reserve.gates);
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);

	vmgpu_paging_op_depend(gate, fence);
	mutex_lock(&ring->push_lock);
	dma_fence_put(vmgpu_job_push(gate));
	mutex_unlock(&ring->push_lock);
}

/* Everything but the lock and the dependencies: KUnit starts here. */
VISIBLE_IF_KUNIT void
vmgpu_paging_op_start(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
		      struct dma_fence *prev, void (*emit)(struct vmgpu_paging_op *op))
{
	op->vdev = vdev;
	op->emit = emit;
	op->fence = dma_fence_get(prev);
	op->jobs = 0;
	op->injected = false;
	op->fault_added = false;
	op->job = vmgpu_job_reserve_take(vdev, &vdev->job_reserve.ops);
}

/**
 * vmgpu_paging_op_begin() - start a paging operation
 * @op: the operation
 * @vdev: the device, entered (drm_dev_enter()) until vmgpu_paging_op_end()
 * @resv: a reservation object, held, whose fences the operation waits for
 *	  on the GPU side (all usages), or NULL
 * @prev: the work the operation continues, or NULL: if it fails, so does
 *	  the operation (&vmgpu_hw_fence.prev)
 *
 * Queues a gate for each fence of @resv it waits for but the first (not
 * those signalled or of the paging ring's own work), then takes the
 * paging ring's push lock until vmgpu_paging_op_end().
 *
 * Context: process context; may wait for paging jobs to complete.
 */
void vmgpu_paging_op_begin(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
			   struct dma_resv *resv, struct dma_fence *prev)
{
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);
	struct dma_fence *fence, *first = NULL;
	struct dma_resv_iter cursor;
	u32 gates = 0;

	trace_vmgpu_paging_op_begin(vdev->drm.primary->index);
	if (resv) {
		dma_resv_assert_held(resv);
		dma_resv_for_each_fence(&cursor, resv, DMA_RESV_USAGE_BOOKKEEP, fence) {
			if (!vmgpu_paging_op_waits_for(ring, fence))
				continue;
			if (!first) {
				first = dma_fence_get(fence);
				continue;
			}
			vmgpu_paging_op_gate(vdev, fence);
			gates++;
		}
	}
	mutex_lock(&ring->push_lock);
	vmgpu_paging_op_start(op, vdev, prev, vmgpu_paging_op_push_job);
	op->jobs = gates;
	if (first) {
		vmgpu_paging_op_depend(op->job, first);
		dma_fence_put(first);
	}
}

/**
 * vmgpu_paging_op_try_begin() - start a paging operation if nothing waits
 * @op: the operation
 * @vdev: the device, entered (drm_dev_enter()) until vmgpu_paging_op_end()
 * @prev: the work the operation continues, or NULL (as for
 *	  vmgpu_paging_op_begin())
 *
 * For work nobody waits for, done under a lock that allocations take: the
 * operation waits for no fence, and starts only if the paging ring's push
 * lock is free and an operation job is ready. Only the holder of the push
 * lock takes operation jobs, so commands that fit in that job (at most
 * %VMGPU_RESERVE_JOB_CMDS commands and %VMGPU_RESERVE_JOB_ENTRIES entries)
 * are then added without waiting either.
 *
 * Context: process context; waits for no job, fence or lock.
 *
 * Return: 0 with the push lock held, or -EBUSY.
 */
int vmgpu_paging_op_try_begin(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
			      struct dma_fence *prev)
{
	struct vmgpu_ring *ring = vmgpu_paging_ring(vdev);

	if (!mutex_trylock(&ring->push_lock))
		return -EBUSY;
	if (!vmgpu_job_reserve_has_ready(&vdev->job_reserve, 0)) {
		mutex_unlock(&ring->push_lock);
		return -EBUSY;
	}
	trace_vmgpu_paging_op_begin(vdev->drm.primary->index);
	vmgpu_paging_op_start(op, vdev, prev, vmgpu_paging_op_push_job);
	return 0;
}

/**
 * vmgpu_paging_op_make_room() - let the next commands go into one job
 * @op: the operation
 * @cmds: how many
 *
 * If they fit in one job, no job is taken, and so no job waited for,
 * while they are added: for a caller that adds them under a lock.
 */
void vmgpu_paging_op_make_room(struct vmgpu_paging_op *op, u32 cmds)
{
	vmgpu_paging_op_room(op, min(cmds, op->job->max_cmds), 0);
}

/**
 * vmgpu_paging_op_inject() - let a test's injected fault hit this operation
 * @op: an operation just begun
 *
 * If a test asked for it (see vmgpu_inject.c), the operation's work
 * (vmgpu_paging_op_work(), maps and unmaps) becomes one command the device
 * rejects, so that it does not happen, as when a real command faults.
 */
void vmgpu_paging_op_inject(struct vmgpu_paging_op *op)
{
	op->injected = vmgpu_inject_paging_fault(op->vdev, &op->fault);
}

/**
 * vmgpu_paging_op_add() - append a command that is not the operation's work
 * @op: the operation
 * @cmd: the command, copied
 */
void vmgpu_paging_op_add(struct vmgpu_paging_op *op, const union vmgpu_cmd *cmd)
{
	vmgpu_paging_op_room(op, 1, 0);
	op->job->cmds[op->job->num_cmds++] = *cmd;
}

/**
 * vmgpu_paging_op_work() - append a command of the operation's work
 * @op: the operation
 * @cmd: the command, copied; an injected fault replaces the whole work
 */
void vmgpu_paging_op_work(struct vmgpu_paging_op *op, const union vmgpu_cmd *cmd)
{
	if (!op->injected) {
		vmgpu_paging_op_add(op, cmd);
	} else if (!op->fault_added) {
		op->fault_added = true;
		vmgpu_paging_op_add(op, &op->fault);
	}
}

/**
 * vmgpu_paging_op_map() - map backing into the paging process GPU VA
 * @op: the operation
 * @va: where, page aligned, inside the space
 * @cur: the backing, walked for @size bytes and left after them
 * @size: bytes, a page multiple
 * @writable: whether the device may write through the entries
 *
 * One command per last-level table; the entries go into the staging
 * memory of the job that copies them.
 */
void vmgpu_paging_op_map(struct vmgpu_paging_op *op, u64 va, struct vmgpu_res_cursor *cur,
			 u64 size, bool writable)
{
	while (size) {
		u64 n = vmgpu_paging_vm_run(va, size);
		u32 entries = n >> VMGPU_PAGE_SHIFT;
		struct vmgpu_pte_staging *st;
		union vmgpu_cmd cmd;

		vmgpu_paging_op_room(op, 1, entries);
		st = &op->job->staging;
		vmgpu_paging_vm_entries(st->cpu + st->used, cur, n, writable);
		cmd = vmgpu_paging_vm_map_cmd(op->vdev, va, st->bus + st->used * sizeof(__le64), n);
		st->used += entries;
		vmgpu_paging_op_work(op, &cmd);
		va += n;
		size -= n;
	}
}

/**
 * vmgpu_paging_op_unmap() - clear entries of the paging process GPU VA
 * @op: the operation
 * @va: the range's start, page aligned
 * @size: its bytes, a page multiple
 *
 * A chunk's entries are cleared after its work: if a later chunk's entry
 * writes fail (the ring skips a failed command and goes on), its work
 * faults on the paging VA instead of reaching pages an earlier operation
 * mapped, which may have another owner by then.
 */
void vmgpu_paging_op_unmap(struct vmgpu_paging_op *op, u64 va, u64 size)
{
	while (size) {
		u64 n = vmgpu_paging_vm_run(va, size);
		union vmgpu_cmd cmd = vmgpu_paging_vm_unmap_cmd(op->vdev, va, n);

		vmgpu_paging_op_work(op, &cmd);
		va += n;
		size -= n;
	}
}

/**
 * vmgpu_paging_op_flush() - in non-coherent mode, a whole-cache flush
 * @op: the operation
 *
 * At the start of an operation, so that it reads what the CPU wrote;
 * after a chunk's entries are written, so that they reach the tables the
 * device walks; at the end, so that the CPU reads what the operation
 * wrote (DOC: I/O coherency). Staging memory, which the CPU rewrites for
 * every use of a job, is read through the cache: every map is followed by
 * a flush before anything reads through the tables, and every operation
 * ends with one, so no line of a job's staging stays cached into its
 * next use.
 */
void vmgpu_paging_op_flush(struct vmgpu_paging_op *op)
{
	union vmgpu_cmd flush = vmgpu_cache_flush_cmd();

	if (op->vdev->noncoherent)
		vmgpu_paging_op_add(op, &flush);
}

/**
 * vmgpu_paging_op_end() - queue the rest of the operation
 * @op: the operation
 *
 * Drops the push lock.
 *
 * Return: the fence of the operation's last job, a reference for the
 * caller.
 */
struct dma_fence *vmgpu_paging_op_end(struct vmgpu_paging_op *op)
{
	struct vmgpu_device *vdev = op->vdev;
	struct dma_fence *fence;

	op->emit(op);
	op->jobs++;
	mutex_unlock(&vmgpu_paging_ring(vdev)->push_lock);
	fence = op->fence;
	op->fence = NULL;
	trace_vmgpu_paging_op_end(vdev->drm.primary->index, op->jobs, fence->seqno);
	return fence;
}
