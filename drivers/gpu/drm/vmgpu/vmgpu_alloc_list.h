/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_ALLOC_LIST_H_
#define _VMGPU_ALLOC_LIST_H_

struct dma_fence;
struct drm_file;
struct drm_vmgpu_exec;
struct vmgpu_job;

int vmgpu_alloc_list_push(struct vmgpu_job *job, struct drm_file *file,
			  const struct drm_vmgpu_exec *args, struct dma_fence **fence);

#endif
