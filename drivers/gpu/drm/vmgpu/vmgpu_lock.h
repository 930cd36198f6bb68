/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_LOCK_H_
#define _VMGPU_LOCK_H_

struct drm_device;
struct drm_file;
struct drm_gem_object;

int vmgpu_gem_lock_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vmgpu_gem_lock2_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vmgpu_gem_unlock_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
void vmgpu_lock_gem_close(struct drm_gem_object *obj, struct drm_file *file);

#endif
