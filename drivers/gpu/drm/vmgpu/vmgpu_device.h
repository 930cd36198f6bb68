/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_DEVICE_H_
#define _VMGPU_DEVICE_H_

#include <linux/io.h>
#include <linux/pci.h>

#include <drm/ttm/ttm_bo.h>

#include "vmgpu_device_types.h"

void vmgpu_queue_release(struct work_struct *work);

static inline struct vmgpu_device *to_vmgpu_device(struct drm_device *drm)
{
	return container_of(drm, struct vmgpu_device, drm);
}

/*
 * The device of any TTM object, ghosts included: TTM's ghosts of pipelined
 * moves and delayed deletes have no GEM device (base.dev is NULL).
 */
static inline struct vmgpu_device *vmgpu_tbo_device(struct ttm_buffer_object *tbo)
{
	return container_of(tbo->bdev, struct vmgpu_device, ttm);
}

/* The device a memory segment's manager belongs to. */
static inline struct vmgpu_device *vmgpu_vram_mgr_device(struct vmgpu_vram_mgr *mgr)
{
	return container_of(mgr->manager.bdev, struct vmgpu_device, ttm);
}

static inline struct pci_dev *vmgpu_pdev(struct vmgpu_device *vdev)
{
	return to_pci_dev(vdev->drm.dev);
}

static inline struct vmgpu_ring *vmgpu_paging_ring(struct vmgpu_device *vdev)
{
	return &vdev->rings[VMGPU_RING_PAGING];
}

/* The aperture segment's id: the one after the memory segments. */
static inline u32 vmgpu_aperture_segment(struct vmgpu_device *vdev)
{
	return vdev->num_segments + 1;
}

static inline u32 vmgpu_read32(struct vmgpu_device *vdev, u32 reg)
{
	return readl(vdev->mmio + reg);
}

static inline u64 vmgpu_read64(struct vmgpu_device *vdev, u32 reg_lo)
{
	return vmgpu_read32(vdev, reg_lo) |
	       (u64)vmgpu_read32(vdev, reg_lo + 4) << 32;
}

static inline void vmgpu_write32(struct vmgpu_device *vdev, u32 reg, u32 val)
{
	writel(val, vdev->mmio + reg);
}

#endif
