/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VRAM_MGR_H_
#define _VMGPU_VRAM_MGR_H_

#include <linux/types.h>

struct ttm_resource;
struct vmgpu_device;

int vmgpu_vram_mgr_init(struct vmgpu_device *vdev);
void vmgpu_vram_mgr_fini(struct vmgpu_device *vdev, u32 count);
int vmgpu_vram_res_for_each_range(struct vmgpu_device *vdev,
				  struct ttm_resource *res,
				  int (*fn)(void *arg, u64 vram, u64 len),
				  void *arg);
bool vmgpu_vram_res_is_contiguous(struct vmgpu_device *vdev,
				  struct ttm_resource *res);
u64 vmgpu_vram_res_page_offset(struct vmgpu_device *vdev,
			       struct ttm_resource *res, unsigned long page);

#endif
