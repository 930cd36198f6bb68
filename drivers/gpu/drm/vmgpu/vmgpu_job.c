// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-resv.h>
#include <linux/slab.h>

#include "vmgpu_context.h"
#include "vmgpu_device.h"
#include "vmgpu_fence.h"
#include "vmgpu_job.h"
#include "vmgpu_job_types.h"
#include "vmgpu_paging_op.h"
#include "vmgpu_trace.h"

/**
 * DOC: jobs
 *
 * A job is a list of commands for one ring, run as one unit by the ring's
 * DRM scheduler. Building one has two steps so that work spread over
 * several jobs is queued all or nothing:
 *
 * - vmgpu_job_alloc(), vmgpu_job_add() and vmgpu_job_prepare() may fail;
 *   they allocate everything the job will ever need, its hardware fence
 *   and its dependencies included;
 * - vmgpu_job_push() cannot fail.
 *
 * A caller splitting work over several jobs prepares them all before it
 * pushes the first, and throws them all away with vmgpu_job_discard() if
 * one cannot be prepared: nothing then runs.
 *
 * The kernel's paging operations take jobs that are prepared already
 * (DOC: paging job reserve); since nothing can fail after the first is
 * taken, they queue each one as soon as it is full.
 */

/**
 * vmgpu_job_max_cmds() - commands one job can hold
 * @ring: the ring it will run on
 *
 * Return: the ring's slots, less one (a full ring is never written) and
 * less the job's own commands: its FENCE, on a GPU-VA engine its SET_VM,
 * and on a user ring of a non-coherent device its cache flushes
 * (&vmgpu_job.cache_bracket).
 */
u32 vmgpu_job_max_cmds(const struct vmgpu_ring *ring)
{
	bool user_vm = ring->index != VMGPU_RING_PAGING &&
		       ring->mode == VMGPU_RING_MODE_VIRTUAL;

	return ring->num_slots - 2 - user_vm - 2 * vmgpu_job_may_bracket(ring);
}

/**
 * vmgpu_job_may_bracket() - whether a ring's jobs may be cache-bracketed
 * @ring: a ring
 *
 * Return: true for the user rings of a device in non-coherent mode.
 */
bool vmgpu_job_may_bracket(const struct vmgpu_ring *ring)
{
	return ring->index != VMGPU_RING_PAGING && ring->vdev->noncoherent;
}

/**
 * vmgpu_job_credits() - the ring slots a job takes
 * @job: a job with its commands
 *
 * Return: its commands and its FENCE, its SET_VM on a GPU-VA engine, and
 * room for cache flushes on a ring that may bracket jobs.
 */
u32 vmgpu_job_credits(const struct vmgpu_job *job)
{
	return job->num_cmds + 1 + (job->hw_vm >= 0) + 2 * vmgpu_job_may_bracket(job->ring);
}

/**
 * vmgpu_job_alloc() - a job with room for commands
 * @ring: the ring it will run on
 * @max_cmds: how many commands the caller will add, at most
 *
 * Return: the job, or an ERR_PTR: -E2BIG if it could never fit the ring.
 */
struct vmgpu_job *vmgpu_job_alloc(struct vmgpu_ring *ring, u32 max_cmds)
{
	struct vmgpu_job *job;

	if (!max_cmds || max_cmds > vmgpu_job_max_cmds(ring))
		return ERR_PTR(-E2BIG);
	job = kvzalloc(struct_size(job, cmds, max_cmds), GFP_KERNEL);
	if (!job)
		return ERR_PTR(-ENOMEM);
	job->hw_fence = vmgpu_fence_alloc();
	if (!job->hw_fence) {
		kvfree(job);
		return ERR_PTR(-ENOMEM);
	}
	job->ring = ring;
	job->entity = &ring->entity;
	job->hw_vm = -1;
	job->max_cmds = max_cmds;
	return job;
}

/**
 * vmgpu_job_add() - append a command
 * @job: a job not yet prepared
 * @cmd: the command, copied
 *
 * Return: 0, or -ENOSPC if the job is full (a caller's counting bug).
 */
int vmgpu_job_add(struct vmgpu_job *job, const union vmgpu_cmd *cmd)
{
	if (job->num_cmds == job->max_cmds)
		return -ENOSPC;
	job->cmds[job->num_cmds++] = *cmd;
	return 0;
}

/**
 * vmgpu_job_continues() - make a job inherit the failure of earlier work
 * @job: a job not yet pushed
 * @prev: the fence of the work it continues, or NULL
 *
 * If @prev signals with an error, so does the job: its commands read or
 * complete memory that @prev was to write. See &vmgpu_hw_fence.prev.
 */
void vmgpu_job_continues(struct vmgpu_job *job, struct dma_fence *prev)
{
	dma_fence_put(job->prev);
	job->prev = dma_fence_get(prev);
}

/**
 * vmgpu_job_prepare() - initialise the scheduler job and its dependencies
 * @job: a job with its commands
 * @resv: run after every fence of this reservation object, or NULL
 *
 * Return: 0 or a negative errno; on error the job is unchanged but for
 * what vmgpu_job_discard() undoes.
 */
int vmgpu_job_prepare(struct vmgpu_job *job, struct dma_resv *resv)
{
	int ret;

	ret = drm_sched_job_init(&job->base, job->entity, vmgpu_job_credits(job), NULL, 0);
	if (ret)
		return ret;
	if (!resv)
		return 0;
	return drm_sched_job_add_resv_dependencies(&job->base, resv,
						   DMA_RESV_USAGE_BOOKKEEP);
}

/**
 * vmgpu_job_push() - queue a prepared job
 * @job: the job; the scheduler owns it from now on
 *
 * For the ring's own entity (the kernel's jobs) the caller holds
 * &vmgpu_ring.push_lock; a context's jobs are pushed under its lock.
 *
 * Return: the job's finished fence, a reference for the caller.
 */
struct dma_fence *vmgpu_job_push(struct vmgpu_job *job)
{
	struct dma_fence *fence;

	if (job->entity == &job->ring->entity)
		lockdep_assert_held(&job->ring->push_lock);
	drm_sched_job_arm(&job->base);
	fence = dma_fence_get(&job->base.s_fence->finished);
	trace_vmgpu_job_submit(fence, job->num_cmds);
	drm_sched_entity_push_job(&job->base);
	return fence;
}

/**
 * vmgpu_job_free() - free a job's memory
 * @job: a job the scheduler is done with, or one never pushed
 *
 * A job of the paging job reserve goes back to it instead.
 */
void vmgpu_job_free(struct vmgpu_job *job)
{
	if (job->hw_fence_live)
		dma_fence_put(&job->hw_fence->base);
	else
		vmgpu_fence_free(job->hw_fence);
	dma_fence_put(job->prev);
	job->prev = NULL;
	if (job->ctx)
		vmgpu_context_put(job->ctx);
	if (job->pool)
		vmgpu_job_reserve_put(job);
	else
		kvfree(job);
}

/**
 * vmgpu_job_discard() - drop a job that was never pushed
 * @job: the job, prepared or not
 */
void vmgpu_job_discard(struct vmgpu_job *job)
{
	/* drm_sched_job_init() succeeded: it gave the job its fences. */
	if (job->base.s_fence)
		drm_sched_job_cleanup(&job->base);
	vmgpu_job_free(job);
}

/**
 * vmgpu_job_submit() - prepare and push a single job
 * @job: the job; consumed
 * @resv: its dependencies, or NULL
 *
 * Return: the finished fence (a reference for the caller) or an ERR_PTR.
 */
struct dma_fence *vmgpu_job_submit(struct vmgpu_job *job, struct dma_resv *resv)
{
	struct vmgpu_ring *ring = job->ring;
	struct dma_fence *fence;
	int ret = vmgpu_job_prepare(job, resv);

	if (ret) {
		vmgpu_job_discard(job);
		return ERR_PTR(ret);
	}
	mutex_lock(&ring->push_lock);
	fence = vmgpu_job_push(job);
	mutex_unlock(&ring->push_lock);
	return fence;
}

/**
 * vmgpu_job_submit_cmd() - submit a job of one command
 * @ring: its ring
 * @cmd: the command
 * @resv: its dependencies, or NULL
 *
 * Return: the finished fence (a reference for the caller) or an ERR_PTR.
 */
struct dma_fence *vmgpu_job_submit_cmd(struct vmgpu_ring *ring, const union vmgpu_cmd *cmd,
				       struct dma_resv *resv)
{
	struct vmgpu_job *job = vmgpu_job_alloc(ring, 1);
	int ret;

	if (IS_ERR(job))
		return ERR_CAST(job);
	ret = vmgpu_job_add(job, cmd);
	if (ret) {
		vmgpu_job_discard(job);
		return ERR_PTR(ret);
	}
	return vmgpu_job_submit(job, resv);
}
