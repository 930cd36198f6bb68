/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VM_H_
#define _VMGPU_VM_H_

#include <linux/types.h>

#include "vmgpu_vm_types.h"

struct drm_file;
struct drm_gem_object;
struct seq_file;
struct ttm_buffer_object;
union vmgpu_cmd;
struct drm_vmgpu_vm_bind;
struct vmgpu_bo;
struct vmgpu_device;

/* drm_gpuva.flags: the GPU may not write through the mapping. */
#define VMGPU_VA_READ_ONLY	DRM_GPUVA_USERBITS

int vmgpu_vm_init(struct vmgpu_device *vdev);
void vmgpu_vm_unplug(struct vmgpu_device *vdev);
struct vmgpu_vm *vmgpu_vm_create(struct vmgpu_device *vdev);
struct vmgpu_vm *vmgpu_vm_get(struct vmgpu_vm *vm);
void vmgpu_vm_put(struct vmgpu_vm *vm);
void vmgpu_vm_close(struct vmgpu_vm *vm);
void vmgpu_vm_remove_bo_locked(struct vmgpu_vm *vm, struct drm_gem_object *obj);
int vmgpu_vm_bind(struct vmgpu_vm *vm, struct drm_file *file,
		  const struct drm_vmgpu_vm_bind *args);
int vmgpu_vm_destroy_bo(struct vmgpu_vm *vm, struct drm_gem_object *obj,
			bool assume_not_in_use);
void vmgpu_vm_wait_deferred(struct vmgpu_device *vdev);
int vmgpu_vm_add_fence_context(struct vmgpu_vm *vm, u64 context);
void vmgpu_vm_debugfs_show(struct vmgpu_vm *vm, struct seq_file *m);
bool vmgpu_vm_bo_reachable(struct vmgpu_bo *vbo);
void vmgpu_vm_bo_invalidate(struct vmgpu_bo *vbo);
void vmgpu_vm_compresses(struct vmgpu_vm *vm);
bool vmgpu_vm_compression_state(struct vmgpu_device *vdev);
int vmgpu_vm_bo_invalidate_cmds(struct ttm_buffer_object *tbo,
				int (*add)(void *arg, const union vmgpu_cmd *cmd),
				void *arg, u32 *count);
int vmgpu_vm_bo_revalidate(struct vmgpu_bo *vbo, bool intr);

#endif
