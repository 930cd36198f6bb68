/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_DEBUGFS_H_
#define _VMGPU_DEBUGFS_H_

struct vmgpu_device;

void vmgpu_debugfs_init(struct vmgpu_device *vdev);

#endif
