/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_NOTIFY_H_
#define _VMGPU_NOTIFY_H_

struct ttm_tt;
struct vmgpu_bo;
struct vmgpu_device;

int vmgpu_notify_eviction(struct vmgpu_bo *vbo);
void vmgpu_notify_iommu_unmap(struct vmgpu_device *vdev, struct ttm_tt *tt);

#endif
