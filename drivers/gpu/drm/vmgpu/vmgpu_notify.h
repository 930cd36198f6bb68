/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_NOTIFY_H_
#define _VMGPU_NOTIFY_H_

#include <linux/types.h>

#include "hw/vmgpu_hw.h"

struct ttm_buffer_object;
struct ttm_tt;
struct vmgpu_bo;
struct vmgpu_device;

union vmgpu_cmd vmgpu_notify_cmd(u64 va, u64 n, u16 flags);
bool vmgpu_notify_eviction_needed(struct ttm_buffer_object *tbo);
int vmgpu_notify_eviction(struct vmgpu_bo *vbo);
bool vmgpu_notify_iommu_model(struct vmgpu_device *vdev);
int vmgpu_notify_iommu_unmap(struct vmgpu_device *vdev, struct ttm_tt *tt);

#endif
