/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_EXEC_H_
#define _VMGPU_EXEC_H_

struct drm_device;
struct drm_file;

int vmgpu_exec_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif
