/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_DEVICE_TYPES_H_
#define _VMGPU_DEVICE_TYPES_H_

#include <linux/types.h>

#include <drm/drm_device.h>

#include "hw/vmgpu_hw.h"

/**
 * struct vmgpu_segment - a memory segment: a range of VRAM the device
 * describes, managed as a pool of pages of one size
 */
struct vmgpu_segment {
	/** @id: driver segment id; memory segments are numbered from 1. */
	u32 id;
	/** @page_size: allocation granule, 4 KiB or 64 KiB. */
	u32 page_size;
	/** @vram_base: offset of the segment in VRAM. */
	u64 vram_base;
	/** @size: bytes in the segment. */
	u64 size;
};

/**
 * struct vmgpu_device - one vmgpu PCI function
 */
struct vmgpu_device {
	/** @drm: the DRM device, first so that drmm can free us. */
	struct drm_device drm;
	/** @mmio: BAR0 registers. */
	void __iomem *mmio;
	/** @hw_version: VMGPU_REG_VERSION. */
	u32 hw_version;
	/** @caps: VMGPU_CAP_* bits the device reports. */
	u32 caps;

	/** @vram: VRAM and the BAR the CPU reaches it through. */
	struct {
		/** @vram.size: total bytes over all memory segments. */
		u64 size;
		/** @vram.bar_probe_size: BAR2 length before any resize. */
		u64 bar_probe_size;
		/** @vram.bar_size: BAR2 length now. */
		u64 bar_size;
		/** @vram.host_aperture_size: BAR4 length, 0 if none. */
		u64 host_aperture_size;
	} vram;

	/** @segments: memory segments, in device order. */
	struct vmgpu_segment segments[VMGPU_MAX_SEGMENTS];
	/** @num_segments: valid entries of @segments. */
	u32 num_segments;
	/** @gart_pages: pages in the aperture segment. */
	u32 gart_pages;
	/** @paging_va_size: bytes of the paging process GPU VA space. */
	u64 paging_va_size;
};

#endif
