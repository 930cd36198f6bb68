/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_PRIME_H_
#define _VMGPU_PRIME_H_

struct dma_buf;
struct drm_device;
struct drm_file;
struct drm_gem_object;
struct vm_area_struct;
struct vmgpu_bo;
struct vmgpu_device;

struct dma_buf *vmgpu_gem_prime_export(struct drm_gem_object *obj, int flags);
struct drm_gem_object *vmgpu_gem_prime_import(struct drm_device *drm,
					      struct dma_buf *dma_buf);
int vmgpu_gem_import_ioctl(struct drm_device *drm, void *data, struct drm_file *file);
int vmgpu_prime_map(struct vmgpu_bo *vbo);
int vmgpu_prime_settle(struct vmgpu_bo *vbo);
void vmgpu_prime_release(struct vmgpu_bo *vbo);
void vmgpu_prime_unmap(struct vmgpu_bo *vbo);
int vmgpu_prime_pin(struct vmgpu_bo *vbo);
void vmgpu_prime_unpin(struct vmgpu_bo *vbo);
int vmgpu_prime_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma);
void vmgpu_prime_unplug(struct vmgpu_device *vdev);

#endif
