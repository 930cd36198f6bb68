/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_JOB_H_
#define _VMGPU_JOB_H_

#include <linux/types.h>

struct dma_fence;
struct dma_resv;
struct vmgpu_job;
struct vmgpu_ring;
union vmgpu_cmd;

u32 vmgpu_job_max_cmds(const struct vmgpu_ring *ring);
bool vmgpu_job_may_bracket(const struct vmgpu_ring *ring);
u32 vmgpu_job_credits(const struct vmgpu_job *job);
struct vmgpu_job *vmgpu_job_alloc(struct vmgpu_ring *ring, u32 max_cmds);
int vmgpu_job_add(struct vmgpu_job *job, const union vmgpu_cmd *cmd);
void vmgpu_job_continues(struct vmgpu_job *job, struct dma_fence *prev);
int vmgpu_job_prepare(struct vmgpu_job *job, struct dma_resv *resv);
struct dma_fence *vmgpu_job_push(struct vmgpu_job *job);
void vmgpu_job_discard(struct vmgpu_job *job);
void vmgpu_job_free(struct vmgpu_job *job);
struct dma_fence *vmgpu_job_submit(struct vmgpu_job *job, struct dma_resv *resv);
struct dma_fence *vmgpu_job_submit_cmd(struct vmgpu_ring *ring, const union vmgpu_cmd *cmd,
				       struct dma_resv *resv);

#endif
