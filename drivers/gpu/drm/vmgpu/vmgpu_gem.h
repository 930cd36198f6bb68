/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_GEM_H_
#define _VMGPU_GEM_H_

struct drm_device;
struct drm_file;
struct drm_printer;

int vmgpu_gem_create_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vmgpu_gem_info_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vmgpu_gem_mmap_offset_ioctl(struct drm_device *drm, void *data,
				struct drm_file *file);
int vmgpu_gem_make_resident_ioctl(struct drm_device *drm, void *data,
				  struct drm_file *file);
int vmgpu_gem_evict_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vmgpu_gem_destroy_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vmgpu_gem_wait_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
void vmgpu_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file);

#endif
