/* SPDX-License-Identifier: MIT */
/*
 * vmgpu userspace API.
 *
 * Every struct has fixed-width fields and explicit padding. Fields named
 * pad or reserved, and unused extension chains, must be zero on input or
 * the ioctl fails with -EINVAL, so that they can be given meaning later.
 */
#ifndef _UAPI_VMGPU_DRM_H_
#define _UAPI_VMGPU_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_VMGPU_QUERY			0x00

#define DRM_IOCTL_VMGPU_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_QUERY, struct drm_vmgpu_query)

/**
 * DOC: segments
 *
 * vmgpu presents memory as WDDM's video memory manager does: segment id 0 is
 * the implicit system segment (guest memory, reached by the device through
 * the IOMMU), ids 1..n are the memory segments carved from VRAM in device
 * order, and id n + 1 is the single aperture segment, through which the
 * device sees scattered system pages as one contiguous range.
 */

/**
 * enum drm_vmgpu_segment_kind - what backs a segment
 * @DRM_VMGPU_SEGMENT_SYSTEM: the implicit system segment, always id 0.
 * @DRM_VMGPU_SEGMENT_MEMORY: a range of device VRAM.
 * @DRM_VMGPU_SEGMENT_APERTURE: the aperture (GART) segment.
 */
enum drm_vmgpu_segment_kind {
	DRM_VMGPU_SEGMENT_SYSTEM = 0,
	DRM_VMGPU_SEGMENT_MEMORY = 1,
	DRM_VMGPU_SEGMENT_APERTURE = 2,
};

/* The CPU reaches all of the segment directly (VRAM BAR or system memory). */
#define DRM_VMGPU_SEGMENT_CPU_VISIBLE		(1 << 0)
/* The CPU can reach the rest of the segment through the CPU host aperture. */
#define DRM_VMGPU_SEGMENT_HOST_APERTURE		(1 << 1)

/**
 * struct drm_vmgpu_segment - one segment, as listed by
 * %DRM_VMGPU_QUERY_SEGMENTS
 */
struct drm_vmgpu_segment {
	/** @id: segment id; 0 is the system segment. */
	__u32 id;
	/** @kind: an &enum drm_vmgpu_segment_kind. */
	__u32 kind;
	/** @size: bytes in the segment. */
	__u64 size;
	/**
	 * @cpu_visible_size: bytes, from the start of the segment, that the CPU
	 * reaches directly. For a memory segment this follows the VRAM BAR.
	 */
	__u64 cpu_visible_size;
	/** @page_size: allocation granule, 4 KiB or 64 KiB. */
	__u32 page_size;
	/** @flags: DRM_VMGPU_SEGMENT_* flags. */
	__u32 flags;
	/** @reserved: written as zero. */
	__u64 reserved[4];
};

/**
 * struct drm_vmgpu_query_segments - answer to %DRM_VMGPU_QUERY_SEGMENTS
 */
struct drm_vmgpu_query_segments {
	/** @num_segments: entries in @segments. */
	__u32 num_segments;
	/** @pad: written as zero. */
	__u32 pad;
	/** @reserved: written as zero. */
	__u64 reserved[2];
	/** @segments: system segment first, then by id. */
	struct drm_vmgpu_segment segments[];
};

/* The VRAM BAR has a Resizable BAR capability. */
#define DRM_VMGPU_DEVICE_REBAR			(1 << 0)
/* The device has a CPU host aperture (BAR 4). */
#define DRM_VMGPU_DEVICE_HOST_APERTURE		(1 << 1)

/**
 * struct drm_vmgpu_query_device - answer to %DRM_VMGPU_QUERY_DEVICE
 */
struct drm_vmgpu_query_device {
	/** @pci_vendor: PCI vendor id. */
	__u16 pci_vendor;
	/** @pci_device: PCI device id. */
	__u16 pci_device;
	/** @hw_version: hardware contract version, major << 16 | minor. */
	__u32 hw_version;
	/** @flags: DRM_VMGPU_DEVICE_* flags. */
	__u32 flags;
	/** @num_segments: segments listed by %DRM_VMGPU_QUERY_SEGMENTS. */
	__u32 num_segments;
	/** @vram_size: total VRAM bytes over all memory segments. */
	__u64 vram_size;
	/** @vram_bar_size: bytes the VRAM BAR decodes now. */
	__u64 vram_bar_size;
	/**
	 * @vram_bar_probe_size: bytes the VRAM BAR decoded when the driver
	 * probed, before it tried to grow the BAR to cover all VRAM.
	 */
	__u64 vram_bar_probe_size;
	/** @host_aperture_size: bytes in the CPU host aperture, 0 if none. */
	__u64 host_aperture_size;
	/**
	 * @paging_va_size: bytes of GPU virtual address space the paging
	 * process maps allocations through; larger paging operations are done
	 * in chunks of this size.
	 */
	__u64 paging_va_size;
	/** @reserved: written as zero. */
	__u64 reserved[8];
};

/**
 * enum drm_vmgpu_query_id - what %DRM_IOCTL_VMGPU_QUERY reports
 * @DRM_VMGPU_QUERY_DEVICE: a &struct drm_vmgpu_query_device.
 * @DRM_VMGPU_QUERY_SEGMENTS: a &struct drm_vmgpu_query_segments.
 */
enum drm_vmgpu_query_id {
	DRM_VMGPU_QUERY_DEVICE = 0,
	DRM_VMGPU_QUERY_SEGMENTS = 1,
};

/**
 * struct drm_vmgpu_query - argument of %DRM_IOCTL_VMGPU_QUERY
 *
 * Call once with @size 0 to learn the size of the answer, then again with a
 * buffer of exactly that size.
 */
struct drm_vmgpu_query {
	/** @extensions: must be zero. */
	__u64 extensions;
	/** @query: an &enum drm_vmgpu_query_id. */
	__u32 query;
	/**
	 * @size: in, bytes at @data, or 0 to ask; out, the size of the answer.
	 * A non-zero size other than the answer's fails with -EINVAL.
	 */
	__u32 size;
	/** @data: user pointer the answer is written to. */
	__u64 data;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_VMGPU_DRM_H_ */
