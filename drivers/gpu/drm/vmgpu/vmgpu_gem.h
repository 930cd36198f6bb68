/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_GEM_H_
#define _VMGPU_GEM_H_

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct drm_mode_create_dumb;
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
int vmgpu_gem_dumb_create(struct drm_file *file, struct drm_device *drm,
			  struct drm_mode_create_dumb *args);
int vmgpu_gem_dumb_map_offset(struct drm_file *file, struct drm_device *drm, u32 handle,
			      u64 *offset);
void vmgpu_gem_show_fdinfo(struct drm_printer *p, struct drm_file *file);

#endif
