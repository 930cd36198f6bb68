/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VRAM_MGR_H_
#define _VMGPU_VRAM_MGR_H_

#include <linux/types.h>

struct ttm_resource;
struct vmgpu_device;

/* Called per VRAM range of a resource; a non-zero return stops the walk. */
typedef int (*vmgpu_vram_range_fn)(void *arg, u64 vram, u64 len);

int vmgpu_vram_mgr_init(struct vmgpu_device *vdev);
void vmgpu_vram_mgr_fini(struct vmgpu_device *vdev, u32 count);
int vmgpu_vram_res_walk(struct vmgpu_device *vdev, struct ttm_resource *res,
			vmgpu_vram_range_fn fn, void *arg);
bool vmgpu_vram_res_is_contiguous(struct vmgpu_device *vdev,
				  struct ttm_resource *res);
u64 vmgpu_vram_res_page_offset(struct vmgpu_device *vdev,
			       struct ttm_resource *res, unsigned long page);

#endif
