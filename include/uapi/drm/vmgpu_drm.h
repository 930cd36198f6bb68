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
#define DRM_VMGPU_GEM_CREATE		0x01
#define DRM_VMGPU_GEM_INFO		0x02
#define DRM_VMGPU_GEM_MMAP_OFFSET	0x03
#define DRM_VMGPU_GEM_MAKE_RESIDENT	0x04
#define DRM_VMGPU_GEM_EVICT		0x05
#define DRM_VMGPU_VM_BIND		0x06
#define DRM_VMGPU_CTX_CREATE		0x07
#define DRM_VMGPU_CTX_DESTROY		0x08
#define DRM_VMGPU_EXEC			0x09
#define DRM_VMGPU_GEM_WAIT		0x0a
#define DRM_VMGPU_GEM_DESTROY		0x0b
#define DRM_VMGPU_GEM_LOCK		0x0c
#define DRM_VMGPU_GEM_LOCK2		0x0d
#define DRM_VMGPU_GEM_UNLOCK		0x0e
#define DRM_VMGPU_GEM_CACHE_SYNC	0x0f
#define DRM_VMGPU_GEM_IMPORT		0x10

#define DRM_IOCTL_VMGPU_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_QUERY, struct drm_vmgpu_query)
#define DRM_IOCTL_VMGPU_GEM_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_GEM_CREATE, struct drm_vmgpu_gem_create)
#define DRM_IOCTL_VMGPU_GEM_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_GEM_INFO, struct drm_vmgpu_gem_info)
#define DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_GEM_MMAP_OFFSET, struct drm_vmgpu_gem_mmap_offset)
#define DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_GEM_MAKE_RESIDENT, struct drm_vmgpu_gem_make_resident)
#define DRM_IOCTL_VMGPU_GEM_EVICT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_GEM_EVICT, struct drm_vmgpu_gem_make_resident)
#define DRM_IOCTL_VMGPU_VM_BIND \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_VM_BIND, struct drm_vmgpu_vm_bind)
#define DRM_IOCTL_VMGPU_CTX_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_CTX_CREATE, struct drm_vmgpu_ctx_create)
#define DRM_IOCTL_VMGPU_CTX_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_CTX_DESTROY, struct drm_vmgpu_ctx_destroy)
#define DRM_IOCTL_VMGPU_EXEC \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_EXEC, struct drm_vmgpu_exec)
#define DRM_IOCTL_VMGPU_GEM_WAIT \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_GEM_WAIT, struct drm_vmgpu_gem_wait)
#define DRM_IOCTL_VMGPU_GEM_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_GEM_DESTROY, struct drm_vmgpu_gem_destroy)
#define DRM_IOCTL_VMGPU_GEM_LOCK \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_GEM_LOCK, struct drm_vmgpu_gem_lock)
#define DRM_IOCTL_VMGPU_GEM_LOCK2 \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_GEM_LOCK2, struct drm_vmgpu_gem_lock)
#define DRM_IOCTL_VMGPU_GEM_UNLOCK \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_GEM_UNLOCK, struct drm_vmgpu_gem_unlock)
#define DRM_IOCTL_VMGPU_GEM_CACHE_SYNC \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VMGPU_GEM_CACHE_SYNC, struct drm_vmgpu_gem_cache_sync)
#define DRM_IOCTL_VMGPU_GEM_IMPORT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VMGPU_GEM_IMPORT, struct drm_vmgpu_gem_import)

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
/*
 * The CPU reaches the rest of the segment through the CPU host aperture,
 * as much of it at a time as the host aperture holds.
 */
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
	/**
	 * @used: bytes allocated in the segment now. For the system segment,
	 * allocations in system memory that are not mapped into the aperture.
	 */
	__u64 used;
	/** @reserved: written as zero. */
	__u64 reserved[3];
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
/*
 * The driver maps VRAM beyond the VRAM BAR through the CPU host aperture
 * (see host_aperture_size).
 */
#define DRM_VMGPU_DEVICE_HOST_APERTURE		(1 << 1)
/*
 * The device is not I/O coherent: the UMD must call
 * %DRM_IOCTL_VMGPU_GEM_CACHE_SYNC after CPU writes before the GPU reads,
 * and after GPU writes before the CPU reads (seed "I/O coherency").
 */
#define DRM_VMGPU_DEVICE_NONCOHERENT		(1 << 2)
/*
 * The device reaches system memory by IOMMU address (the seed's
 * GpuVaIoMmu addressing model): allocations with
 * %DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP get NotifyIoMmuUnmap. Without it,
 * they get none.
 */
#define DRM_VMGPU_DEVICE_IOMMU_DMA		(1 << 3)

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
	/**
	 * @host_aperture_size: bytes in the device's CPU host aperture (BAR
	 * 4), 0 if none. Whether the driver uses it is
	 * %DRM_VMGPU_DEVICE_HOST_APERTURE.
	 */
	__u64 host_aperture_size;
	/**
	 * @paging_va_size: bytes of GPU virtual address space the paging
	 * process maps allocations through (seed "Allocation notification");
	 * notifications for larger allocations are sent in chunks of this
	 * size. At most 4 GiB, whatever the seed's rule gives: its page
	 * tables stay resident.
	 */
	__u64 paging_va_size;
	/**
	 * @contents_lost: allocations whose contents a failed paging
	 * operation lost since the device was probed (see
	 * %DRM_VMGPU_RESIDENCY_CONTENTS_LOST). Like amdgpu's VRAM-lost
	 * counter: a change tells userspace to check its allocations.
	 */
	__u64 contents_lost;
	/**
	 * @resident_system_size: the most system memory the device reaches
	 * at once, in bytes: the system segment's resident allocations, the
	 * aperture segment's and moves under way. Such memory is pinned, so
	 * it is limited like amdgpu's GTT: to half of RAM, or the module
	 * parameter system_mb. Past it, making an allocation resident there
	 * evicts the least recently used ones (once idle) out of the
	 * device's reach (%DRM_VMGPU_RESIDENCY_RESIDENT clear), where the
	 * kernel may swap them out; an allocation larger than the limit
	 * cannot be created in a set of system and aperture segments only
	 * (-E2BIG), nor be placed in system memory otherwise.
	 */
	__u64 resident_system_size;
	/** @resident_system_used: of @resident_system_size, bytes in use. */
	__u64 resident_system_used;
	/**
	 * @host_aperture_used: bytes of the host aperture lent to allocations
	 * now (driver 1.6; zero before). The driver may use less than
	 * @host_aperture_size.
	 */
	__u64 host_aperture_used;
	/**
	 * @paging_busy_ns: time the paging engine was busy with the kernel's
	 * paging operations since probe, from when it got to a job to its
	 * completion (driver 1.6).
	 */
	__u64 paging_busy_ns;
	/**
	 * @paging_jobs: paging jobs whose fence signalled since probe, failed
	 * ones included (driver 1.6).
	 */
	__u64 paging_jobs;
	/** @reserved: written as zero. */
	__u64 reserved[2];
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
 * buffer at least that large. Answers can grow in later versions: a larger
 * buffer is accepted and the bytes past the answer are zeroed.
 */
struct drm_vmgpu_query {
	/** @extensions: must be zero. */
	__u64 extensions;
	/** @query: an &enum drm_vmgpu_query_id. */
	__u32 query;
	/**
	 * @size: in, bytes at @data, or 0 to ask; out, the size of the answer.
	 * A non-zero size smaller than the answer's fails with -EINVAL.
	 */
	__u32 size;
	/** @data: user pointer the answer is written to. */
	__u64 data;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/**
 * DOC: allocations
 *
 * An allocation is a GEM object that lives in one segment at a time and
 * moves between segments by paging operations the device executes. Its
 * creation flags are those of WDDM's allocation info:
 *
 * %DRM_VMGPU_ALLOC_CPU_ACCESS: the CPU maps the allocation. In a memory
 * segment it is placed where the VRAM BAR reaches if there is room, else,
 * if the CPU host aperture could hold all of it, beyond, where the CPU
 * reaches it through the host aperture. A memory
 * segment the BAR does not wholly cover is only allowed together with the
 * aperture segment, so that the allocation can always be placed in system
 * memory when the host aperture is full or missing (Lock2 rules).
 *
 * %DRM_VMGPU_ALLOC_CACHED: CPU-cached mapping. The CPU cannot be coherent
 * with a memory segment, so the supported set must be the aperture segment
 * alone.
 *
 * %DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY: engines reach the allocation by
 * physical address: contiguous in a memory segment, mapped into the
 * aperture whenever it is resident in system memory.
 *
 * %DRM_VMGPU_ALLOC_PRIMARY: a primary surface: contiguous in a memory
 * segment. Only primaries can be KMS framebuffers (dumb buffers are
 * primaries), and not swizzled ones: the display controller reads lines
 * linear. While a plane shows one it is pinned where the display
 * controller reaches it: in system memory (the aperture segment in its
 * set) it is mapped into the aperture segment, else contiguous in a memory
 * segment of its set. Without %DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY a
 * primary in system memory is mapped into the aperture only while shown:
 * undisplayed ones take no aperture space.
 *
 * %DRM_VMGPU_ALLOC_SWIZZLED: in a memory segment the allocation's bytes
 * are in the device's swizzled layout (SWIZZLE_X, see the hardware
 * contract); the CPU always sees them linear (see &drm_vmgpu_gem_lock).
 * The set must have a memory segment.
 *
 * %DRM_VMGPU_ALLOC_NOTIFY_EVICTION: seed "Allocation notification".
 * Before the allocation leaves the aperture segment or system memory under
 * device access (made non-resident, moved into a memory segment), the
 * device is told, so that it resolves state only it holds for the pages:
 * it decompresses what user jobs compressed (COMPRESS) and writes back
 * its cached lines. Never sent for an eviction from a memory segment. An
 * allocation compressed without it loses its data when it leaves.
 *
 * %DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP: on a device with
 * %DRM_VMGPU_DEVICE_IOMMU_DMA, the device is told before the allocation's
 * system pages are unmapped from the IOMMU, and every paging operation
 * before it is waited for.
 *
 * New allocations never show earlier contents: they are cleared before
 * userspace can see them (VRAM by the device; system pages come zeroed).
 * A paging operation that fails (a device
 * error, a hang, hot-unplug) never hands out stale memory either: a clear
 * that did not happen is redone, and an allocation whose move did not
 * happen is cleared and marked %DRM_VMGPU_RESIDENCY_CONTENTS_LOST.
 */
#define DRM_VMGPU_ALLOC_CPU_ACCESS		(1 << 0)
#define DRM_VMGPU_ALLOC_CACHED			(1 << 1)
#define DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY	(1 << 2)
#define DRM_VMGPU_ALLOC_PRIMARY			(1 << 3)
#define DRM_VMGPU_ALLOC_SWIZZLED		(1 << 4)
#define DRM_VMGPU_ALLOC_NOTIFY_EVICTION		(1 << 5)
#define DRM_VMGPU_ALLOC_NOTIFY_IOMMU_UNMAP	(1 << 6)

/**
 * struct drm_vmgpu_gem_create - argument of %DRM_IOCTL_VMGPU_GEM_CREATE
 *
 * Fails with -EINVAL for unknown flags, non-zero extensions or reserved
 * words, an empty or unknown segment set, the system segment (id 0) in the
 * set (system memory is reached through the aperture segment's id), a
 * preferred segment outside the set, or a flag combination the rules above
 * forbid; with -E2BIG for a size no segment of the set can ever hold.
 */
struct drm_vmgpu_gem_create {
	/** @extensions: must be zero. */
	__u64 extensions;
	/** @size: bytes; rounded up to the largest page size of the set. */
	__u64 size;
	/** @flags: DRM_VMGPU_ALLOC_* flags. */
	__u32 flags;
	/** @segments: supported segment set, bit n for segment id n. */
	__u32 segments;
	/** @preferred_segment: the segment id tried first, in @segments. */
	__u32 preferred_segment;
	/** @handle: out, the GEM handle. */
	__u32 handle;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/*
 * The allocation has a physical reference: contiguous at @offset. Only
 * AccessedPhysically and primary allocations have one.
 */
#define DRM_VMGPU_RESIDENCY_PHYSICAL		(1 << 0)
/*
 * The device can reach the allocation: in a memory segment, or in system
 * memory it reaches (segment id 0 or the aperture segment). Without it,
 * segment id 0 means evicted out of the device's reach (not resident).
 */
#define DRM_VMGPU_RESIDENCY_RESIDENT		(1 << 1)
/*
 * A paging operation moving the allocation failed: its data is gone, the
 * memory was cleared instead. Sticky: mapping it fails with -EIO, faults
 * through an existing mapping raise SIGBUS. Counted in
 * &drm_vmgpu_query_device.contents_lost.
 */
#define DRM_VMGPU_RESIDENCY_CONTENTS_LOST	(1 << 2)
/*
 * In a memory segment, with pages beyond the VRAM BAR. For a CPU-accessible
 * allocation: the CPU reaches those through the CPU host aperture.
 */
#define DRM_VMGPU_RESIDENCY_CPU_INVISIBLE	(1 << 3)
/*
 * Host-aperture pages map the allocation's pages beyond the VRAM BAR now,
 * until it moves. While it is not locked, another allocation's CPU access
 * may take them back, least recently used first.
 */
#define DRM_VMGPU_RESIDENCY_HOST_APERTURE	(1 << 4)
/*
 * A swizzled allocation out of a memory segment whose pages hold it
 * unswizzled (linear), moved there for the CPU; the GPU's next use pages
 * it into a memory segment, swizzling it.
 */
#define DRM_VMGPU_RESIDENCY_UNSWIZZLED		(1 << 5)
/*
 * A dma-buf of another device imported through PRIME (driver 1.7): its
 * pages are the exporter's, in the implicit system segment, never cleared,
 * copied or moved by vmgpu. Jobs that use it synchronise implicitly with
 * the exporter's (they wait for its fences, and are writers to it). Its
 * flags are
 * %DRM_VMGPU_ALLOC_PRIMARY, its set the aperture segment; the CPU maps it
 * through its exporter (mmap of the DRM fd forwards there), and
 * &drm_vmgpu_gem_lock refuses it (-EINVAL).
 */
#define DRM_VMGPU_RESIDENCY_IMPORTED		(1 << 6)

/*
 * Wait for the allocation's clears and moves before reporting, so that
 * the report includes their outcome (%DRM_VMGPU_RESIDENCY_CONTENTS_LOST).
 * Interruptible.
 */
#define DRM_VMGPU_GEM_INFO_WAIT			(1 << 0)

/**
 * struct drm_vmgpu_gem_info - argument of %DRM_IOCTL_VMGPU_GEM_INFO
 *
 * Reports an allocation and where it lives now. Moves are pipelined: the
 * report names the backing the allocation has been given, whose paging
 * operations may still be queued, unless %DRM_VMGPU_GEM_INFO_WAIT is set.
 */
struct drm_vmgpu_gem_info {
	/** @handle: in, the GEM handle. */
	__u32 handle;
	/** @info_flags: in, DRM_VMGPU_GEM_INFO_* flags; others must be 0. */
	__u32 info_flags;
	/** @size: out, bytes. */
	__u64 size;
	/** @flags: out, the creation flags. */
	__u32 flags;
	/** @segments: out, the supported segment set. */
	__u32 segments;
	/**
	 * @segment_id: out, the segment it is in: a memory segment, the
	 * aperture segment (system memory mapped into the aperture) or 0
	 * (system memory, not mapped; %DRM_VMGPU_RESIDENCY_RESIDENT tells
	 * whether the device reaches it).
	 */
	__u32 segment_id;
	/** @residency: out, DRM_VMGPU_RESIDENCY_* flags. */
	__u32 residency;
	/**
	 * @offset: out, with %DRM_VMGPU_RESIDENCY_PHYSICAL the physical
	 * reference (@segment_id, @offset): the allocation's offset in that
	 * segment. 0 otherwise.
	 */
	__u64 offset;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/**
 * struct drm_vmgpu_gem_mmap_offset - argument of
 * %DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET
 *
 * The fake offset to mmap() an allocation at on the DRM fd. Only
 * allocations created with %DRM_VMGPU_ALLOC_CPU_ACCESS, and imports
 * (%DRM_VMGPU_RESIDENCY_IMPORTED, mapped by their exporter), can be mapped
 * (-EINVAL here, and -EACCES from mmap() on the DRM fd or on a dma-buf
 * the allocation was exported to). -EIO for an allocation whose contents
 * were lost. CPU accesses through the mapping wait for the allocation's
 * clears and moves.
 */
struct drm_vmgpu_gem_mmap_offset {
	/** @handle: in, the GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @offset: out, the offset to pass to mmap(). */
	__u64 offset;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/**
 * struct drm_vmgpu_gem_make_resident - argument of
 * %DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT and %DRM_IOCTL_VMGPU_GEM_EVICT
 *
 * MakeResident is WDDM's: bring an allocation into the best segment of its
 * supported set that has room, preferred segment first, evicting others if
 * needed; -ENOSPC if no segment of the set can take it. A locked
 * allocation without CPU access only goes to the aperture segment (-EBUSY
 * if that is not in its set: see &drm_vmgpu_gem_lock).
 *
 * Evict is WDDM's too: move an allocation out of its memory segment the way
 * memory pressure would, to system memory if the aperture segment is in its
 * set, else out of the GPU's reach. Nothing happens to an allocation already
 * in system memory, unless %DRM_VMGPU_EVICT_NONRESIDENT asks to make it
 * non-resident: then it also leaves the aperture segment or the system
 * memory the device reaches, out of the GPU's reach (NotifyEviction first,
 * see %DRM_VMGPU_ALLOC_NOTIFY_EVICTION).
 *
 * Both return once the paging operations are queued; CPU access through a
 * mapping waits for them. Leaving the aperture or system segment for the
 * GPU's unreachable system memory waits for the allocation's users; its
 * NotifyEviction, if it has one, is queued like a move, into a memory
 * segment or out of the GPU's reach: if it fails on the device, the
 * allocation's contents are lost, as with any failed move. If it cannot
 * be queued (-ENOMEM), Evict fails and the allocation stays.
 * Evict of a primary a display shows (a KMS framebuffer on a plane) fails
 * with -EBUSY: it stays pinned where the display controller reads it.
 */
struct drm_vmgpu_gem_make_resident {
	/** @handle: the GEM handle. */
	__u32 handle;
	/**
	 * @flags: MakeResident: must be zero. Evict: zero or
	 * %DRM_VMGPU_EVICT_NONRESIDENT.
	 */
	__u32 flags;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/* Evict: out of the GPU's reach, from whatever segment. */
#define DRM_VMGPU_EVICT_NONRESIDENT		(1 << 0)

/* DRM_VMGPU_VM_BIND_OP_MAP: map a range of an allocation. */
#define DRM_VMGPU_VM_BIND_OP_MAP		0
/* DRM_VMGPU_VM_BIND_OP_UNMAP: remove one mapping, whole. */
#define DRM_VMGPU_VM_BIND_OP_UNMAP		1

/* The GPU may only read through the mapping; a write faults. */
#define DRM_VMGPU_VM_BIND_READ_ONLY		(1 << 0)

/* DRM_VMGPU_VA_BITS: GPU virtual addresses are below 1 << 48. */
#define DRM_VMGPU_VA_BITS			48

/**
 * struct drm_vmgpu_vm_bind - argument of %DRM_IOCTL_VMGPU_VM_BIND
 *
 * Every DRM file has one GPU virtual address space (seed: GPU virtual
 * addressing; the UMD chooses the addresses). MAP maps @range bytes of the
 * allocation @handle from @offset at @addr; the range must be free
 * (-EEXIST). UNMAP removes the mapping at @addr, which must be exactly
 * one earlier MAP (-ENOENT otherwise); splitting mappings is not
 * supported. Addresses, offsets and sizes are 4 KiB multiples.
 *
 * Binds take effect at once and are not ordered with queued work: a job
 * that uses a range unmapped meanwhile faults (its own context is marked
 * guilty), it never reaches memory that is no longer the allocation's.
 * MAP waits for the allocation's clears and moves first (-EIO if its
 * contents were lost). The kernel keeps the page tables right when the
 * allocation moves; while a move is in progress its range faults.
 * A VM has a bounded amount of page tables at once (-ENOSPC beyond:
 * memory-management.rst says how much); a table is freed when no mapping
 * needs it any more.
 */
struct drm_vmgpu_vm_bind {
	/** @op: DRM_VMGPU_VM_BIND_OP_*. */
	__u32 op;
	/** @flags: MAP: DRM_VMGPU_VM_BIND_READ_ONLY; UNMAP: must be 0. */
	__u32 flags;
	/** @handle: MAP: the allocation; UNMAP: must be 0. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @addr: GPU virtual address. */
	__u64 addr;
	/** @range: bytes. */
	__u64 range;
	/** @offset: MAP: offset in the allocation; UNMAP: must be 0. */
	__u64 offset;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/*
 * DRM_VMGPU_ENGINE_GPU_VA0: the first GPU-virtual-address engine. Its
 * commands address memory through the file's GPU VA space only.
 */
#define DRM_VMGPU_ENGINE_GPU_VA0		0
/* DRM_VMGPU_ENGINE_GPU_VA1: the second one, an independent queue. */
#define DRM_VMGPU_ENGINE_GPU_VA1		1
/*
 * DRM_VMGPU_ENGINE_PHYSICAL: the engine in physical addressing mode. Its
 * commands reach allocations through the allocation list only.
 */
#define DRM_VMGPU_ENGINE_PHYSICAL		2

/**
 * struct drm_vmgpu_ctx_create - argument of %DRM_IOCTL_VMGPU_CTX_CREATE
 *
 * A context is an in-order queue of jobs on one engine. Its monitored
 * fence is a page the UMD maps read-only at @seqno_offset on the DRM fd:
 * a __u64 at offset 0 holds the seqno (&drm_vmgpu_exec.seqno) of the last
 * job of the context that completed, written before the job's fence
 * signals, so a busy check needs no ioctl.
 */
struct drm_vmgpu_ctx_create {
	/** @engine: in, DRM_VMGPU_ENGINE_*. */
	__u32 engine;
	/** @flags: in, must be zero. */
	__u32 flags;
	/** @ctx_id: out, the context, non-zero. */
	__u32 ctx_id;
	/** @pad: must be zero. */
	__u32 pad;
	/** @seqno_offset: out, mmap() offset of the seqno page, read-only. */
	__u64 seqno_offset;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/**
 * struct drm_vmgpu_ctx_destroy - argument of %DRM_IOCTL_VMGPU_CTX_DESTROY
 *
 * Jobs already submitted still run; their fences still signal.
 */
struct drm_vmgpu_ctx_destroy {
	/** @ctx_id: the context. */
	__u32 ctx_id;
	/** @pad: must be zero. */
	__u32 pad;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/**
 * struct drm_vmgpu_sync - one drm_syncobj point
 */
struct drm_vmgpu_sync {
	/** @handle: the syncobj. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @point: timeline point, 0 for a binary syncobj. */
	__u64 point;
};

/**
 * struct drm_vmgpu_alloc_ref - one entry of an allocation list
 */
struct drm_vmgpu_alloc_ref {
	/** @handle: an AccessedPhysically allocation. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
};

/* DRM_VMGPU_PATCH_FIRST: the command's first address (TRANSFER: src). */
#define DRM_VMGPU_PATCH_FIRST			0
/* DRM_VMGPU_PATCH_SECOND: TRANSFER's dst. */
#define DRM_VMGPU_PATCH_SECOND			1

/**
 * struct drm_vmgpu_patch - a patch location: an address of a command that
 * the kernel fills in with a physical reference
 */
struct drm_vmgpu_patch {
	/** @cmd: index of the command in &drm_vmgpu_exec.cmds. */
	__u32 cmd;
	/** @which: DRM_VMGPU_PATCH_*. */
	__u32 which;
	/** @alloc: index in &drm_vmgpu_exec.allocs. */
	__u32 alloc;
	/** @pad: must be zero. */
	__u32 pad;
	/** @offset: byte offset in the allocation. */
	__u64 offset;
};

/* DRM_VMGPU_EXEC_MAX_ALLOCS: allocation list entries one job may have. */
#define DRM_VMGPU_EXEC_MAX_ALLOCS		64

/* DRM_VMGPU_EXEC_MAX_CMDS: commands one job may have. */
#define DRM_VMGPU_EXEC_MAX_CMDS			512
/* DRM_VMGPU_EXEC_MAX_SYNCS: in- or out-syncs one job may have. */
#define DRM_VMGPU_EXEC_MAX_SYNCS		64

/**
 * struct drm_vmgpu_exec - argument of %DRM_IOCTL_VMGPU_EXEC
 *
 * Submit one job to a context. @cmds is an array of 64-byte commands in
 * the device's format (include/hw/vmgpu_hw.h, union vmgpu_cmd). The
 * kernel checks and copies them; only NOP, FENCE (flags 0), FILL,
 * TRANSFER, WAIT, COMPRESS and DECOMPRESS (flags 0) are allowed and
 * reserved fields are zero. On a GPU-VA
 * engine every address is %VMGPU_SPACE_VIRTUAL with vm 0 (the kernel puts
 * in the file's VM), and @num_allocs and @num_patches are 0. On the
 * physical engine every address is all zero and named by exactly one
 * patch location, which the kernel fills in with the physical reference
 * of an allocation of the list plus the patch's offset; the bytes the
 * command touches there must lie inside the allocation. Only
 * AccessedPhysically allocations may be on the list, and COMPRESS and
 * DECOMPRESS are refused: compression state belongs to a GPU VA space
 * (each gets half of the device's set at most; pages past that, or
 * past what other spaces leave of the set, stay uncompressed, which is
 * not an error: the space reads the same data, though the CPU may see
 * each page encoded or plain). The kernel makes
 * them resident and keeps that memory theirs until the job's fence
 * signals (a move waits for the job on the GPU). Anything else is -EINVAL
 * (-ENOSPC if an allocation cannot be made resident with a physical
 * reference) and nothing runs.
 * Errors the device finds while running (a VM fault, a misaligned
 * address) fail the job's fence with -EIO and mark the context guilty:
 * its later submissions fail with -ECANCELED. EXEC itself may wait for
 * a device VM (other files' jobs in flight hold them), for the kernel to
 * bring back allocations of the VM that were evicted, and
 * fails with -EIO if one of them lost its contents, -EBUSY if a lock
 * keeps one out of the device's reach (see &drm_vmgpu_gem_lock). If copying @seqno
 * back fails (-EFAULT), the job was queued nonetheless. A job running longer than
 * the job timeout fails with -ETIMEDOUT, also guilty. A job that the reset
 * of its engine may have cut short (the timed-out job ended just before
 * the reset) fails with -ECANCELED rather than run twice, and its context
 * is lost the same way. These errors are the job's fence's (its out-syncs),
 * and the context's later EXECs return -ECANCELED.
 *
 * The job runs after every @in_syncs point has signalled (each must have
 * a fence already: -EINVAL otherwise) and after the kernel's moves of the
 * file's allocations; it does not wait for other jobs that use them (the
 * UMD synchronises, as the seed says). Its fence is installed in every
 * @out_syncs point. Submission is all or nothing.
 */
struct drm_vmgpu_exec {
	/** @ctx_id: the context. */
	__u32 ctx_id;
	/** @num_cmds: commands at @cmds, 1 to %DRM_VMGPU_EXEC_MAX_CMDS. */
	__u32 num_cmds;
	/** @cmds: user pointer to the commands. */
	__u64 cmds;
	/** @num_in_syncs: entries at @in_syncs. */
	__u32 num_in_syncs;
	/** @num_out_syncs: entries at @out_syncs. */
	__u32 num_out_syncs;
	/** @in_syncs: user pointer to &struct drm_vmgpu_sync. */
	__u64 in_syncs;
	/** @out_syncs: user pointer to &struct drm_vmgpu_sync. */
	__u64 out_syncs;
	/** @flags: must be zero. */
	__u32 flags;
	/** @pad: must be zero. */
	__u32 pad;
	/**
	 * @seqno: out, the job's seqno in its context: the value the seqno
	 * page reaches when it completes. Increases by one per job.
	 */
	__u64 seqno;
	/** @allocs: physical engine: user pointer to the allocation list. */
	__u64 allocs;
	/** @patches: physical engine: user pointer to the patch locations. */
	__u64 patches;
	/** @num_allocs: entries at @allocs, at most %DRM_VMGPU_EXEC_MAX_ALLOCS. */
	__u32 num_allocs;
	/** @num_patches: entries at @patches, at most two per command. */
	__u32 num_patches;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/* Return -EBUSY at once instead of waiting: the UMD's WasStillDrawing. */
#define DRM_VMGPU_GEM_WAIT_NO_WAIT		(1 << 0)

/**
 * struct drm_vmgpu_gem_wait - argument of %DRM_IOCTL_VMGPU_GEM_WAIT
 *
 * Wait until no queued work uses the allocation: the kernel's, and the
 * jobs of any file that were submitted while it was mapped in that file's
 * VM or on their allocation list. Sleeps (interruptible) without polling.
 * 0 when idle, -ETIME after @timeout_ns (a timeout of 0 only checks),
 * -EBUSY at once with %DRM_VMGPU_GEM_WAIT_NO_WAIT. A wait interrupted by
 * a signal restarts with the whole timeout.
 */
struct drm_vmgpu_gem_wait {
	/** @handle: the GEM handle. */
	__u32 handle;
	/** @flags: DRM_VMGPU_GEM_WAIT_*; others must be 0. */
	__u32 flags;
	/** @timeout_ns: relative timeout, at most about 292 years. */
	__u64 timeout_ns;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/*
 * AssumeNotInUse: the file's queued jobs do not use the allocation; free
 * it at once. If they do, they fault (their context becomes guilty); they
 * never reach memory that has been handed out again.
 */
#define DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE	(1 << 0)

/**
 * struct drm_vmgpu_gem_destroy - argument of %DRM_IOCTL_VMGPU_GEM_DESTROY
 *
 * Seed "deferred destruction": closes @handle and removes every mapping
 * of the allocation in the file's GPU VA space, without waiting. By
 * default the mappings stay until every job the file queued in its VM
 * before this call has completed, mapped or not at submission (a queued
 * job may use an address bound after it), and the memory returns to its
 * segment only then (what other files and CPU mappings still hold stays
 * theirs). With %DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE the mappings go
 * at once and the file's jobs stop keeping the memory.
 */
struct drm_vmgpu_gem_destroy {
	/** @handle: the GEM handle. */
	__u32 handle;
	/** @flags: DRM_VMGPU_GEM_DESTROY_*; others must be 0. */
	__u32 flags;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/* Lock: -EBUSY at once if queued work still uses the allocation. */
#define DRM_VMGPU_LOCK_DO_NOT_WAIT		(1 << 0)
/* Lock: no wait for queued work at all (no-overwrite access). */
#define DRM_VMGPU_LOCK_IGNORE_SYNC		(1 << 1)
/*
 * Lock: the lock may not move the allocation to system memory; where it
 * would have to, the lock fails with -ENOSPC.
 */
#define DRM_VMGPU_LOCK_DO_NOT_EVICT		(1 << 2)
/* Lock: hints of the CPU access to come. */
#define DRM_VMGPU_LOCK_READ_ONLY		(1 << 3)
#define DRM_VMGPU_LOCK_WRITE_ONLY		(1 << 4)

/**
 * struct drm_vmgpu_gem_lock - argument of %DRM_IOCTL_VMGPU_GEM_LOCK and
 * %DRM_IOCTL_VMGPU_GEM_LOCK2
 *
 * Seed "Lock2" and LockCb: CPU access to an allocation, from the lock to
 * its unlock. The lock returns where to mmap() it on the DRM fd; the UMD
 * may keep that mapping for the allocation's lifetime. Without
 * %DRM_VMGPU_LOCK_DO_NOT_WAIT or %DRM_VMGPU_LOCK_IGNORE_SYNC, the lock
 * sleeps (interruptibly, without polling) until no queued work uses the
 * allocation: the kernel's and every job submitted while it was mapped in
 * a GPU VA space or on an allocation list. Lock2 takes no flags (every
 * bit of @flags must be 0) and waits only for the kernel's own work on
 * the allocation (clears, moves); as the seed says, synchronizing with
 * user jobs is then the UMD's (%DRM_IOCTL_VMGPU_GEM_WAIT, syncobjs).
 *
 * One lock at a time per allocation: locking one that is locked is
 * -EINVAL from the file that holds the lock, -EBUSY from another. Closing
 * the handle ends the lock; a lock whose handle is closed while it waits
 * fails with -ENOENT.
 *
 * Where a locked allocation is (seed "Lock2"):
 *
 * - CPU-accessible, in VRAM the BAR reaches, or in system memory: where
 *   it is.
 * - CPU-accessible, with pages beyond the VRAM BAR: those are mapped
 *   through the CPU host aperture, whose pages stay the allocation's until
 *   the unlock or until it moves; if the host aperture has no room, the
 *   allocation is moved to system memory, or with
 *   %DRM_VMGPU_LOCK_DO_NOT_EVICT the lock fails with -ENOSPC.
 * - Cached (the aperture segment alone): always in system memory.
 * - Not CPU-accessible: in system memory only. One in a memory segment is
 *   moved there if the aperture segment is in its set (-ENOSPC with
 *   %DRM_VMGPU_LOCK_DO_NOT_EVICT), else the lock fails with -EINVAL. While
 *   the lock is held it stays in system memory: making it resident, or
 *   submitting work that needs it resident, places it in the aperture
 *   segment, or fails with -EBUSY if that is not in its set. Its mmap()
 *   works only while it is locked, by any file (-EACCES otherwise), and so
 *   does the mapping: the unlock revokes it, and accesses raise SIGBUS
 *   until the next lock.
 *
 * Swizzled (%DRM_VMGPU_ALLOC_SWIZZLED) and CPU-accessible: the CPU sees it
 * linear. In a memory segment every page is mapped through the CPU host
 * aperture, which detiles; with no room there it is moved to system
 * memory unswizzled (-ENOSPC with %DRM_VMGPU_LOCK_DO_NOT_EVICT). Evicted
 * swizzled, or in the aperture segment, it is paged into a memory segment
 * first; evicted unswizzled, it is mapped as it is. An eviction during the
 * lock unswizzles it, so the mapping shows the same bytes.
 * %DRM_VMGPU_LOCK_IGNORE_SYNC is -EINVAL for it, and while it is locked
 * EXEC (of any job whose GPU VA space maps it, or whose allocation list
 * has it) fails with -EBUSY: the CPU or the GPU, never both.
 *
 * A lock that moves the allocation waits for the move, which follows the
 * work queued on it, even with %DRM_VMGPU_LOCK_IGNORE_SYNC. A lock does not
 * pin: eviction, Evict and MakeResident may still move a locked
 * allocation; its mapping follows it and shows the same bytes (a fault
 * maps the new backing, through the host aperture or after a move to
 * system memory, whatever the lock's flags were).
 */
struct drm_vmgpu_gem_lock {
	/** @handle: the GEM handle. */
	__u32 handle;
	/** @flags: Lock: DRM_VMGPU_LOCK_*; Lock2: must be 0. */
	__u32 flags;
	/** @offset: out, the offset to pass to mmap(). */
	__u64 offset;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/**
 * struct drm_vmgpu_gem_unlock - argument of %DRM_IOCTL_VMGPU_GEM_UNLOCK
 *
 * Ends a lock this file holds: -EINVAL if the allocation is not locked,
 * or locked by another file.
 */
struct drm_vmgpu_gem_unlock {
	/** @handle: the GEM handle. */
	__u32 handle;
	/** @flags: must be zero. */
	__u32 flags;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/* After CPU writes, before the GPU reads: write back (panthor's FLUSH). */
#define DRM_VMGPU_CACHE_SYNC_TO_DEVICE		(1 << 0)
/*
 * After GPU writes, before the CPU reads: write back and invalidate
 * (panthor's FLUSH_AND_INVALIDATE), so that the CPU re-reads memory.
 */
#define DRM_VMGPU_CACHE_SYNC_TO_CPU		(1 << 1)

/**
 * struct drm_vmgpu_cache_op - one range of %DRM_IOCTL_VMGPU_GEM_CACHE_SYNC
 */
struct drm_vmgpu_cache_op {
	/** @handle: the GEM handle. */
	__u32 handle;
	/** @flags: exactly one of DRM_VMGPU_CACHE_SYNC_*. */
	__u32 flags;
	/** @offset: first byte of the range in the allocation. */
	__u64 offset;
	/** @size: bytes, not 0; the range must lie inside the allocation. */
	__u64 size;
	/** @reserved: must be zero. */
	__u64 reserved;
};

#define DRM_VMGPU_CACHE_SYNC_MAX_OPS		256

/**
 * struct drm_vmgpu_gem_cache_sync - argument of
 * %DRM_IOCTL_VMGPU_GEM_CACHE_SYNC
 *
 * The seed's Invalidate Cache: cache maintenance of allocation ranges for
 * a device without I/O coherency (%DRM_VMGPU_DEVICE_NONCOHERENT). The CPU
 * caches of the ranges are written back (for the device) or invalidated
 * (for the CPU), as the DMA API does, and the device's cache is written
 * back and dropped; the call returns when all of it is done. Ranges in
 * VRAM or out of the device's reach need nothing. The UMD calls it once
 * the GPU work on the ranges is complete. On a coherent device it only
 * checks its arguments. A bad operation fails the call (-EINVAL,
 * -ENOENT) before anything is done.
 */
struct drm_vmgpu_gem_cache_sync {
	/** @ops: user pointer to @num_ops &struct drm_vmgpu_cache_op. */
	__u64 ops;
	/** @num_ops: 1 to %DRM_VMGPU_CACHE_SYNC_MAX_OPS. */
	__u32 num_ops;
	/** @flags: must be zero. */
	__u32 flags;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

/**
 * struct drm_vmgpu_gem_import - argument of %DRM_IOCTL_VMGPU_GEM_IMPORT
 *
 * PRIME import with what the importer needs of the allocation (driver
 * 1.7): DRM_IOCTL_PRIME_FD_TO_HANDLE, then @flags. An import of another
 * device's dma-buf (%DRM_VMGPU_RESIDENCY_IMPORTED) gains them, for every
 * handle of it in this file; one of this device's must have them already
 * (-EINVAL). %DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY makes the import
 * physically referenced by being mapped into the aperture segment while
 * resident, so that the physical engine can use it (-E2BIG if it is
 * larger than the aperture). If the aperture has no room now, the call
 * still succeeds: the allocation list of a physical job maps it then, or
 * fails with -ENOSPC. An interrupted call leaves the handle, and can be
 * made again.
 */
struct drm_vmgpu_gem_import {
	/** @fd: in, the dma-buf's file descriptor. */
	__s32 fd;
	/** @flags: in, 0 or %DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY. */
	__u32 flags;
	/** @handle: out, the GEM handle, as PRIME would give it. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @reserved: must be zero. */
	__u64 reserved[2];
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_VMGPU_DRM_H_ */
