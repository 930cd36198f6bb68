/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_TTM_H_
#define _VMGPU_TTM_H_

#include <linux/types.h>

struct vmgpu_device;

int vmgpu_ttm_init(struct vmgpu_device *vdev);
void vmgpu_ttm_unplug(struct vmgpu_device *vdev);
u64 vmgpu_ttm_segment_used(struct vmgpu_device *vdev, u32 id);

#endif
