/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_HAP_H_
#define _VMGPU_HAP_H_

#include <linux/types.h>

struct drm_printer;
struct ttm_resource;
struct vmgpu_bo;
struct vmgpu_device;

/* A page of an allocation the VRAM BAR reaches: no host-aperture page. */
#define VMGPU_HAP_NO_SLOT	U32_MAX

int vmgpu_hap_init(struct vmgpu_device *vdev);
bool vmgpu_hap_res_invisible(struct vmgpu_device *vdev, struct ttm_resource *res);
int vmgpu_hap_map(struct vmgpu_bo *vbo);
void vmgpu_hap_unmap(struct vmgpu_bo *vbo);
void vmgpu_hap_set_locked(struct vmgpu_bo *vbo, bool locked);
unsigned long vmgpu_hap_pfn(struct vmgpu_bo *vbo, unsigned long page);
u32 vmgpu_hap_used_pages(struct vmgpu_device *vdev);
void vmgpu_hap_print(struct vmgpu_device *vdev, struct drm_printer *p);

#endif
