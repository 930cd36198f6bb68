/* SPDX-License-Identifier: MIT */
/*
 * libvmgpu: the user-mode side of vmgpu.
 *
 * Handles are opaque and reference counted. Functions return 0 or a
 * negative errno.
 */
#ifndef LIBVMGPU_H
#define LIBVMGPU_H

#include <stdint.h>

#include "hw/vmgpu_hw.h"
#include "vmgpu_drm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vmgpu_device vmgpu_device;

/* Open the render node of the first vmgpu device. */
int vmgpu_device_open(vmgpu_device **out);
/* Wrap an already open vmgpu DRM fd; the handle keeps its own dup. */
int vmgpu_device_create(int fd, vmgpu_device **out);
vmgpu_device *vmgpu_device_ref(vmgpu_device *dev);
void vmgpu_device_unref(vmgpu_device *dev);
int vmgpu_device_fd(const vmgpu_device *dev);

/* Issue DRM_IOCTL_VMGPU_QUERY as is; for tests and new queries. */
int vmgpu_query_raw(vmgpu_device *dev, struct drm_vmgpu_query *query);
int vmgpu_query_device(vmgpu_device *dev, struct drm_vmgpu_query_device *out);
/* On success *out is malloc()ed; release it with free(). */
int vmgpu_query_segments(vmgpu_device *dev,
			 struct drm_vmgpu_query_segments **out);

const char *vmgpu_segment_kind_name(uint32_t kind);
/* Id of the aperture segment listed in s, 0 if there is none. */
uint32_t vmgpu_aperture_segment_id(const struct drm_vmgpu_query_segments *s);

/*
 * An allocation (GEM object). It keeps a reference on its device; the last
 * vmgpu_bo_unref() unmaps it and closes the GEM handle.
 */
typedef struct vmgpu_bo vmgpu_bo;

struct vmgpu_bo_create_info {
	uint64_t size;
	uint32_t flags;			/* DRM_VMGPU_ALLOC_* */
	uint32_t segments;		/* bit n = segment id n */
	uint32_t preferred_segment;
};

int vmgpu_bo_create(vmgpu_device *dev, const struct vmgpu_bo_create_info *info,
		    vmgpu_bo **out);
vmgpu_bo *vmgpu_bo_ref(vmgpu_bo *bo);
void vmgpu_bo_unref(vmgpu_bo *bo);
uint32_t vmgpu_bo_handle(const vmgpu_bo *bo);
/* Size as rounded by the kernel (GEM_INFO right after creation). */
uint64_t vmgpu_bo_size(const vmgpu_bo *bo);
/* GEM_INFO: where the allocation lives now. */
int vmgpu_bo_info(vmgpu_bo *bo, struct drm_vmgpu_gem_info *out);
/*
 * GEM_INFO with DRM_VMGPU_GEM_INFO_* flags: with DRM_VMGPU_GEM_INFO_WAIT,
 * after its clears and moves, outcome included.
 */
int vmgpu_bo_info_flags(vmgpu_bo *bo, uint32_t flags, struct drm_vmgpu_gem_info *out);
/*
 * Map the whole allocation shared, read-write. The mapping is made once and
 * stays valid while the allocation moves between segments; later calls
 * return the same pointer. Needs DRM_VMGPU_ALLOC_CPU_ACCESS.
 */
int vmgpu_bo_map(vmgpu_bo *bo, void **cpu);
/* MakeResident: queue the paging operations that bring it into a segment. */
int vmgpu_bo_make_resident(vmgpu_bo *bo);
/* WDDM Evict: move out of VRAM as memory pressure would. */
int vmgpu_bo_evict(vmgpu_bo *bo);
/*
 * Evict with DRM_VMGPU_EVICT_* flags: DRM_VMGPU_EVICT_NONRESIDENT takes it
 * out of the device's reach from any segment, the aperture included.
 */
int vmgpu_bo_evict_flags(vmgpu_bo *bo, uint32_t flags);

/*
 * Lock (DRM_VMGPU_LOCK_* flags) and Lock2 (no flags): CPU access until
 * vmgpu_bo_unlock(); *cpu (may be NULL) is the allocation's mapping,
 * made once and kept. Lock waits for the GPU unless told not to
 * (DO_NOT_WAIT: -EBUSY at once; IGNORE_SYNC: no wait).
 */
int vmgpu_bo_lock(vmgpu_bo *bo, uint32_t flags, void **cpu);
int vmgpu_bo_lock2(vmgpu_bo *bo, void **cpu);
int vmgpu_bo_unlock(vmgpu_bo *bo);
/*
 * Cache maintenance of [offset, offset + size) of the allocation, on a
 * device without I/O coherency: DRM_VMGPU_CACHE_SYNC_TO_DEVICE after CPU
 * writes before the GPU reads, _TO_CPU after GPU writes before the CPU
 * reads. 0 or -errno.
 */
int vmgpu_bo_cache_sync(vmgpu_bo *bo, uint32_t flags, uint64_t offset, uint64_t size);
/*
 * Deferred destruction: drop the last reference and destroy the allocation
 * with DRM_VMGPU_GEM_DESTROY_* flags, without waiting for the GPU. -EBUSY
 * (and nothing done) while other references are held; on error the
 * handle survives but its CPU mapping is gone.
 */
int vmgpu_bo_destroy(vmgpu_bo *bo, uint32_t flags);
/*
 * Waits until no queued work uses the allocation. With
 * DRM_VMGPU_GEM_WAIT_NO_WAIT: -EBUSY at once if some does (the UMD's
 * WasStillDrawing); otherwise sleeps, -ETIME after timeout_ns.
 */
int vmgpu_bo_wait(vmgpu_bo *bo, uint64_t timeout_ns, uint32_t flags);

/*
 * The file's GPU virtual address space. Map size bytes of bo from offset
 * at va (DRM_VMGPU_VM_BIND_* flags); unmap exactly one earlier mapping.
 */
int vmgpu_vm_map(vmgpu_bo *bo, uint64_t offset, uint64_t va, uint64_t size,
		 uint32_t flags);
int vmgpu_vm_unmap(vmgpu_device *dev, uint64_t va, uint64_t size);

/*
 * A context: an in-order queue of jobs on one engine
 * (DRM_VMGPU_ENGINE_*), with its monitored fence mapped read-only.
 */
typedef struct vmgpu_context vmgpu_context;

struct vmgpu_sync {
	uint32_t syncobj;
	uint64_t point;			/* 0 for a binary syncobj */
};

int vmgpu_context_create(vmgpu_device *dev, uint32_t engine,
			 vmgpu_context **out);
vmgpu_context *vmgpu_context_ref(vmgpu_context *ctx);
void vmgpu_context_unref(vmgpu_context *ctx);
uint32_t vmgpu_context_id(const vmgpu_context *ctx);
/*
 * Queue commands (include/hw/vmgpu_hw.h format, virtual addresses with vm
 * 0) after the in points, signal the out points; *seqno (may be NULL) is
 * the job's seqno in the context.
 */
int vmgpu_context_submit(vmgpu_context *ctx, const union vmgpu_cmd *cmds,
			 uint32_t num_cmds, const struct vmgpu_sync *in,
			 uint32_t num_in, const struct vmgpu_sync *out,
			 uint32_t num_out, uint64_t *seqno);
/*
 * The physical engine: every address of cmds is zero and named by one
 * patch location; allocs is the allocation list (AccessedPhysically only).
 */
int vmgpu_context_submit_physical(vmgpu_context *ctx, const union vmgpu_cmd *cmds,
				  uint32_t num_cmds, vmgpu_bo *const *allocs,
				  uint32_t num_allocs,
				  const struct drm_vmgpu_patch *patches,
				  uint32_t num_patches, const struct vmgpu_sync *out,
				  uint32_t num_out, uint64_t *seqno);
/* Seqno of the context's last completed job: a memory read, no ioctl. */
uint64_t vmgpu_context_completed(const vmgpu_context *ctx);
/* Whether the job with this seqno is still queued or running. */
int vmgpu_context_busy(const vmgpu_context *ctx, uint64_t seqno);

#ifdef __cplusplus
}
#endif

#endif
