/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_CACHE_H_
#define _VMGPU_CACHE_H_

#include "hw/vmgpu_hw.h"

struct drm_device;
struct drm_file;
struct ttm_buffer_object;
struct vmgpu_bo;
struct vmgpu_device;

union vmgpu_cmd vmgpu_cache_flush_cmd(void);
int vmgpu_cache_flush_wait(struct vmgpu_device *vdev, bool intr);
void vmgpu_cache_release_pages(struct ttm_buffer_object *tbo);
bool vmgpu_cache_leave_device_needed(struct vmgpu_bo *vbo);
int vmgpu_cache_leave_device(struct vmgpu_bo *vbo);
int vmgpu_gem_cache_sync_ioctl(struct drm_device *drm, void *data, struct drm_file *file);

#endif
