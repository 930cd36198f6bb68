/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VRAM_MGR_H_
#define _VMGPU_VRAM_MGR_H_

#include <linux/types.h>

struct dma_fence;
struct drm_printer;
struct list_head;
struct ttm_place;
struct ttm_resource;
struct vmgpu_device;
struct vmgpu_res_cursor;
struct vmgpu_vram_mgr;

int vmgpu_vram_mgr_init(struct vmgpu_device *vdev);
int vmgpu_vram_mgr_alloc_blocks(struct vmgpu_vram_mgr *mgr,
				const struct ttm_place *place, u64 size,
				struct list_head *blocks, struct dma_fence **clear_fence);
void vmgpu_vram_mgr_fini(struct vmgpu_device *vdev, u32 count);
struct dma_fence *vmgpu_vram_res_clear_fence(struct ttm_resource *res);
void vmgpu_vram_res_cursor_init(struct vmgpu_device *vdev, struct ttm_resource *res,
				struct vmgpu_res_cursor *cur);
bool vmgpu_vram_res_is_contiguous(struct vmgpu_device *vdev,
				  struct ttm_resource *res);
u64 vmgpu_vram_res_page_offset(struct vmgpu_device *vdev,
			       struct ttm_resource *res, unsigned long page);

int vmgpu_vram_scrub_init(struct vmgpu_device *vdev);
void vmgpu_vram_scrub_fini(struct vmgpu_device *vdev, u32 count);
void vmgpu_vram_scrub_queue(struct vmgpu_device *vdev);
void vmgpu_vram_scrub_postpone(struct vmgpu_device *vdev);
bool vmgpu_vram_scrub_check(struct vmgpu_device *vdev, struct vmgpu_vram_mgr *mgr);
void vmgpu_vram_scrub_debugfs_init(struct vmgpu_device *vdev);
void vmgpu_vram_scrub_print(struct vmgpu_vram_mgr *mgr, struct drm_printer *p);

#endif
