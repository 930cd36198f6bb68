/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_RING_H_
#define _VMGPU_RING_H_

#include <linux/types.h>

struct vmgpu_device;
struct vmgpu_ring;

int vmgpu_rings_init(struct vmgpu_device *vdev);
void vmgpu_rings_unplug(struct vmgpu_device *vdev);
void vmgpu_ring_handle_error(struct vmgpu_device *vdev);
long vmgpu_ring_timeout(const struct vmgpu_ring *ring);
struct vmgpu_ring *vmgpu_ring_user_engine(struct vmgpu_device *vdev, u32 engine);

#endif
