/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VRAM_H_
#define _VMGPU_VRAM_H_

#include <linux/types.h>

struct vmgpu_device;
struct vmgpu_segment;

int vmgpu_vram_init(struct vmgpu_device *vdev);
u64 vmgpu_segment_cpu_visible_size(struct vmgpu_device *vdev,
				   const struct vmgpu_segment *seg);

#endif
