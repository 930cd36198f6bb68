/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_RING_H_
#define _VMGPU_RING_H_

#include <linux/types.h>

struct dma_fence;
struct dma_resv;
struct vmgpu_device;
struct vmgpu_job;
union vmgpu_cmd;

int vmgpu_ring_init(struct vmgpu_device *vdev);
void vmgpu_ring_fini(struct vmgpu_device *vdev);
void vmgpu_ring_handle_error(struct vmgpu_device *vdev);

struct vmgpu_job *vmgpu_job_alloc(struct vmgpu_device *vdev, u32 max_cmds);
u32 vmgpu_job_max_cmds(struct vmgpu_device *vdev);
void vmgpu_job_add(struct vmgpu_job *job, const union vmgpu_cmd *cmd);
void vmgpu_job_free(struct vmgpu_job *job);
struct dma_fence *vmgpu_job_submit(struct vmgpu_job *job, struct dma_resv *resv);

#endif
