/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_JOB_TYPES_H_
#define _VMGPU_JOB_TYPES_H_

#include <linux/dma-fence.h>
#include <linux/list.h>
#include <linux/types.h>

#include <drm/gpu_scheduler.h>

#include "hw/vmgpu_hw.h"

struct vmgpu_context;
struct vmgpu_job_pool;
struct vmgpu_ring;

/**
 * struct vmgpu_pte_staging - paging-VA entries a job's commands copy into
 * the tables (DOC: paging process GPU VA)
 */
struct vmgpu_pte_staging {
	/** @cpu: CPU view of coherent memory the device reads. */
	__le64 *cpu;
	/** @bus: its bus address. */
	dma_addr_t bus;
	/** @size: entries it holds. */
	u32 size;
	/** @used: entries written for the job's commands so far. */
	u32 used;
};

/**
 * struct vmgpu_hw_fence - completion of one job on its ring, as the device
 * reports it: the FENCE command that ends the job writes @base.seqno
 */
struct vmgpu_hw_fence {
	/** @base: the fence; its lock is the ring's @fence_lock. */
	struct dma_fence base;
	/** @link: in &vmgpu_ring.pending while not signalled. */
	struct list_head link;
	/** @ring: the ring the job runs on. */
	struct vmgpu_ring *ring;
	/**
	 * @prev: the fence of the job whose work this job continues (an
	 * earlier part of the same paging operation, or the operation that
	 * last wrote the same memory), or NULL: its hardware fence on this
	 * ring, or its finished fence if that had signalled when this job
	 * ran. Its error becomes this fence's error: work built on data that
	 * was never written failed too.
	 */
	struct dma_fence *prev;
	/** @first_slot: the ring slot of the job's first command. */
	u32 first_slot;
	/** @end_slot: the slot after the job's FENCE command. */
	u32 end_slot;
	/**
	 * @ctx: the user context whose job this is, or NULL. The fence
	 * publishes the job's completion to it (seqno page, busy time, guilt)
	 * as it signals, before it sets its signalled bit: from that bit on,
	 * the scheduler may see the fence signalled (dma_fence_add_callback()
	 * tests it without the lock) and free the job, and the job's
	 * reference to @ctx, while the fence's callbacks still run. Borrowed
	 * from the job; cleared when the fence signals.
	 */
	struct vmgpu_context *ctx;
	/** @ctx_seqno: the job's point on @ctx's timeline. */
	u64 ctx_seqno;
	/** @ran_ns: when run_job wrote the job to the ring. */
	u64 ran_ns;
};

/**
 * struct vmgpu_job - commands for one ring, scheduled as one unit
 *
 * Everything run_job() needs is allocated with the job, so that running it
 * never allocates (dma-fence signalling rules).
 */
struct vmgpu_job {
	/** @base: the scheduler's job. */
	struct drm_sched_job base;
	/** @ring: where it runs. */
	struct vmgpu_ring *ring;
	/** @entity: whose queue it joins: the ring's, or a context's. */
	struct drm_sched_entity *entity;
	/**
	 * @ctx: the user context that submitted it, holding a reference;
	 * NULL for the kernel's jobs.
	 */
	struct vmgpu_context *ctx;
	/**
	 * @hw_fence: preallocated; run_job() initialises it, from then on
	 * it is reference counted and the job holds one reference.
	 */
	struct vmgpu_hw_fence *hw_fence;
	/** @hw_fence_live: run_job() has initialised @hw_fence. */
	bool hw_fence_live;
	/** @prev: see &vmgpu_hw_fence.prev; the job holds a reference. */
	struct dma_fence *prev;
	/**
	 * @reserve_link: in &vmgpu_job_reserve.ready or .spent while the job
	 * is not in use.
	 */
	struct list_head reserve_link;
	/**
	 * @pool: the pool of the paging job reserve the job belongs to, or
	 * NULL: the scheduler's free gives it back instead of freeing it.
	 */
	struct vmgpu_job_pool *pool;
	/** @staging: a reserved job's paging-VA entries; empty otherwise. */
	struct vmgpu_pte_staging staging;
	/**
	 * @hw_vm: the device VM a GPU-VA job runs in, or -1: run_job()
	 * starts the job with SET_VM(@hw_vm, @vm_generation).
	 */
	int hw_vm;
	/** @vm_generation: @hw_vm's generation when the job took it. */
	u32 vm_generation;
	/**
	 * @cache_bracket: a user job that uses an import on a non-coherent
	 * device: run_job() writes back and drops the device's cache before
	 * its commands (it reads what the exporter wrote) and after them (the
	 * exporter reads what it wrote once its fence signals). Room for both
	 * is kept on every user ring of a non-coherent device. Set at push.
	 */
	bool cache_bracket;
	/** @num_cmds: commands in @cmds. */
	u32 num_cmds;
	/** @max_cmds: room in @cmds. */
	u32 max_cmds;
	/** @cmds: the commands, the job's FENCE not included. */
	union vmgpu_cmd cmds[];
};

#endif
