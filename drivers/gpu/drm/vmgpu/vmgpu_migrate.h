/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_MIGRATE_H_
#define _VMGPU_MIGRATE_H_

struct dma_fence;
struct ttm_buffer_object;
struct ttm_resource;
struct vmgpu_device;

struct dma_fence *vmgpu_migrate_copy(struct vmgpu_device *vdev,
				     struct ttm_buffer_object *tbo,
				     struct ttm_resource *from,
				     struct ttm_resource *to, u16 flags,
				     struct dma_fence *prev, bool notify);
struct dma_fence *vmgpu_migrate_clear(struct vmgpu_device *vdev,
				      struct ttm_buffer_object *tbo,
				      struct ttm_resource *res,
				      struct dma_fence *prev);

#endif
