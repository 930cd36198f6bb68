/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_MMAP_H_
#define _VMGPU_MMAP_H_

#include <linux/types.h>

struct dma_fence;
struct drm_gem_object;
struct iosys_map;
struct vm_area_struct;
struct vmgpu_bo;

int vmgpu_bo_cpu_reach(struct vmgpu_bo *vbo, bool may_move);
int vmgpu_bo_settle(struct vmgpu_bo *vbo, bool intr);
int vmgpu_bo_settle_queued(struct vmgpu_bo *vbo, struct dma_fence **last);
int vmgpu_bo_prepare_access(struct vmgpu_bo *vbo, bool intr);
int vmgpu_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma);
int vmgpu_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map);
void vmgpu_gem_vunmap(struct drm_gem_object *obj, struct iosys_map *map);

#endif
