/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_DISPLAY_H_
#define _VMGPU_DISPLAY_H_

struct vmgpu_device;

int vmgpu_display_init(struct vmgpu_device *vdev);
void vmgpu_display_unplug(struct vmgpu_device *vdev);

#endif
