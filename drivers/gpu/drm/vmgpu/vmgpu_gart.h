/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_GART_H_
#define _VMGPU_GART_H_

#include <linux/types.h>

struct ttm_resource;
struct ttm_tt;
struct vmgpu_device;

int vmgpu_gart_init(struct vmgpu_device *vdev);
void vmgpu_gart_fini(struct vmgpu_device *vdev);
void vmgpu_gart_bind(struct vmgpu_device *vdev, struct ttm_resource *res,
		     struct ttm_tt *tt);
bool vmgpu_gart_res_offset(struct ttm_resource *res, u64 *offset);
u64 vmgpu_gart_mapped_bytes(struct vmgpu_device *vdev);
u64 vmgpu_gart_system_limit(struct vmgpu_device *vdev);
u64 vmgpu_gart_system_used(struct vmgpu_device *vdev);

#endif
