/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_PAGING_OP_H_
#define _VMGPU_PAGING_OP_H_

#include <linux/sizes.h>
#include <linux/types.h>

#include "hw/vmgpu_hw.h"

/* Commands of an operation job of the paging job reserve, at most. */
#define VMGPU_RESERVE_JOB_CMDS		256
/* Paging-VA entries an operation job stages: 64 MiB mapped. */
#define VMGPU_RESERVE_JOB_ENTRIES	(SZ_128K / sizeof(__le64))

struct dma_fence;
struct dma_resv;
struct drm_printer;
struct ttm_operation_ctx;
struct vmgpu_device;
struct vmgpu_job;
struct vmgpu_res_cursor;

/**
 * struct vmgpu_paging_op - a paging operation being queued
 *
 * Built between vmgpu_paging_op_begin() and vmgpu_paging_op_end(), with
 * the paging ring's push lock held: its jobs come from the reserve and go
 * to the ring one after another as they fill up.
 */
struct vmgpu_paging_op {
	/** @vdev: the device. */
	struct vmgpu_device *vdev;
	/** @job: the job being filled. */
	struct vmgpu_job *job;
	/**
	 * @fence: the last job queued, or the work the first job continues;
	 * a reference.
	 */
	struct dma_fence *fence;
	/** @emit: queues @job; KUnit replaces it. */
	void (*emit)(struct vmgpu_paging_op *op);
	/** @jobs: jobs queued so far, gates included. */
	u32 jobs;
	/**
	 * @injected: fault injection: the operation's work is one rejected
	 * command (vmgpu_paging_op_inject()).
	 */
	bool injected;
	/** @fault_added: the rejected command is in. */
	bool fault_added;
	/** @fault: the rejected command. */
	union vmgpu_cmd fault;
};

int vmgpu_job_reserve_init(struct vmgpu_device *vdev);
void vmgpu_job_reserve_put(struct vmgpu_job *job);
int vmgpu_job_reserve_wait(struct vmgpu_device *vdev, struct ttm_operation_ctx *ctx,
			   struct dma_resv *resv);
void vmgpu_job_reserve_print(struct vmgpu_device *vdev, struct drm_printer *p);

void vmgpu_paging_op_begin(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
			   struct dma_resv *resv, struct dma_fence *prev);
int vmgpu_paging_op_try_begin(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
			      struct dma_fence *prev);
void vmgpu_paging_op_make_room(struct vmgpu_paging_op *op, u32 cmds);
void vmgpu_paging_op_inject(struct vmgpu_paging_op *op);
void vmgpu_paging_op_add(struct vmgpu_paging_op *op, const union vmgpu_cmd *cmd);
void vmgpu_paging_op_work(struct vmgpu_paging_op *op, const union vmgpu_cmd *cmd);
void vmgpu_paging_op_map(struct vmgpu_paging_op *op, u64 va, struct vmgpu_res_cursor *cur,
			 u64 size, bool writable);
void vmgpu_paging_op_unmap(struct vmgpu_paging_op *op, u64 va, u64 size);
void vmgpu_paging_op_flush(struct vmgpu_paging_op *op);
struct dma_fence *vmgpu_paging_op_end(struct vmgpu_paging_op *op);

#if IS_ENABLED(CONFIG_KUNIT)
void vmgpu_paging_op_start(struct vmgpu_paging_op *op, struct vmgpu_device *vdev,
			   struct dma_fence *prev, void (*emit)(struct vmgpu_paging_op *op));
#endif

#endif
