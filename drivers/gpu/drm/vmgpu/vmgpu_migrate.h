/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_MIGRATE_H_
#define _VMGPU_MIGRATE_H_

#include <linux/types.h>

struct dma_fence;
struct ttm_buffer_object;
struct ttm_resource;
struct vmgpu_device;
struct vmgpu_paging_op;
struct vmgpu_res_cursor;

struct dma_fence *vmgpu_migrate_copy(struct vmgpu_device *vdev,
				     struct ttm_buffer_object *tbo,
				     struct ttm_resource *from,
				     struct ttm_resource *to, u16 flags,
				     struct dma_fence *prev, bool notify);
struct dma_fence *vmgpu_migrate_clear(struct vmgpu_device *vdev,
				      struct ttm_buffer_object *tbo,
				      struct ttm_resource *res,
				      struct dma_fence *prev);
void vmgpu_migrate_fill_chunk(struct vmgpu_paging_op *op, struct vmgpu_res_cursor *cur,
			      u64 size);

#endif
