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
/*
 * PRIME import of a dma-buf (another device's, or one of ours): a new
 * reference to the allocation, the same one each time for the same object.
 * Another device's buffer is an import: it lives in the system segment,
 * and the CPU reaches it through its exporter (vmgpu_bo_map() maps that).
 * flags: 0, or DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY for an import the
 * physical engine uses (DRM_IOCTL_VMGPU_GEM_IMPORT).
 */
int vmgpu_bo_import(vmgpu_device *dev, int dmabuf_fd, uint32_t flags, vmgpu_bo **out);
/* PRIME export: a new dma-buf fd (close-on-exec, read-write) in *dmabuf_fd. */
int vmgpu_bo_export(vmgpu_bo *bo, int *dmabuf_fd);
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

/*
 * The UMD layer: queues and renameable buffers, usage tracking done in user
 * space as the seed "Allocation usage tracking" asks.
 *
 * A queue is an immediate context: it records GPU commands on buffers and
 * submits them, in order, as one job per flush on its own device context.
 * Every submission signals the queue's timeline syncobj at the job's seqno,
 * so "done" means the context's seqno page (read without an ioctl) or that
 * syncobj point (a non-polling kernel wait) has reached it.
 *
 * A buffer is a handle on its current storage: a range of a kernel
 * allocation in the aperture segment (CPU-cached, mapped once, bound once
 * in the file's GPU VA space). Commands recorded on a buffer use the
 * storage it has when they are recorded; WRITE_DISCARD swaps the storage
 * (renaming) instead of waiting for the GPU. Buffers of at most
 * VMGPU_SUBALLOC_MAX bytes share allocations (a per-queue sub-allocator);
 * larger ones each have their own, reused (from the queue's recycle
 * cache) once their last job completed. A buffer is used by one queue
 * only, and by one thread at a time; a queue's calls are serialised by its
 * lock, which a wait drops while it sleeps. Each queue has a flusher
 * thread, which submits for DO_NOT_WAIT maps (a forked child has none: it
 * must not use its parent's queues). One vmgpu_device per DRM file:
 * each hands its queues their own GPU VA windows (960 in its lifetime).
 */
typedef struct vmgpu_queue vmgpu_queue;
typedef struct vmgpu_buffer vmgpu_buffer;

/* Largest buffer whose storage comes from the sub-allocator. */
#define VMGPU_SUBALLOC_MAX		(64u << 10)

struct vmgpu_queue_info {
	uint32_t engine;		/* DRM_VMGPU_ENGINE_GPU_VA0 or _VA1 */
	uint32_t flags;			/* must be 0 */
	/*
	 * Renaming budget: flush the recorded commands once this many bytes
	 * were renamed since the last submission (0: a sixteenth of the
	 * aperture segment) ...
	 */
	uint64_t rename_flush_bytes;
	/*
	 * ... and before a rename that would leave more than this many bytes
	 * of renamed-away storage waiting for the GPU, wait for the oldest
	 * (0: a quarter of the aperture segment). At least
	 * rename_flush_bytes (-EINVAL otherwise).
	 */
	uint64_t rename_wait_bytes;
	/*
	 * Idle allocations stay in the queue's recycle cache this long
	 * before they are destroyed (0: one second).
	 */
	uint64_t recycle_expiry_ns;
};

int vmgpu_queue_create(vmgpu_device *dev, const struct vmgpu_queue_info *info,
		       vmgpu_queue **out);
vmgpu_queue *vmgpu_queue_ref(vmgpu_queue *q);
/*
 * The last unref submits what is recorded and releases everything without
 * waiting: allocations still in use are destroyed with deferred
 * destruction.
 */
void vmgpu_queue_unref(vmgpu_queue *q);
/* Submit the recorded commands as one job; 0 if there are none. */
int vmgpu_queue_flush(vmgpu_queue *q);
/*
 * Flush, then wait (without polling) until every submitted job completed;
 * the flush's error, else the wait's.
 */
int vmgpu_queue_finish(vmgpu_queue *q, uint64_t timeout_ns);

/* What a queue did so far; counters only grow, except the *_now ones. */
struct vmgpu_queue_stats {
	uint64_t submissions;		/* jobs submitted */
	uint64_t renames;		/* WRITE_DISCARD maps that swapped storage */
	/* Storage renamed away, or released, that the GPU still uses. */
	uint64_t renamed_bytes_now;
	uint64_t renamed_bytes_peak;	/* the most renamed_bytes_now has been */
	uint64_t budget_flushes;	/* flushes rename_flush_bytes caused */
	uint64_t budget_waits;		/* waits rename_wait_bytes caused */
	uint64_t kernel_waits;		/* syncobj waits (non-polling) */
	uint64_t cache_syncs;		/* GEM_CACHE_SYNC calls */
	uint64_t cache_sync_ranges;	/* ranges those calls named */
	uint64_t allocations;		/* kernel allocations created */
	uint64_t recycled;		/* storage reused from the pools */
	uint64_t destroyed_deferred;	/* allocations GEM_DESTROYed while busy */
	uint64_t destroyed_idle;	/* ... idle, with AssumeNotInUse */
	uint64_t async_submissions;	/* of submissions, the flusher's */
};

void vmgpu_queue_stats(vmgpu_queue *q, struct vmgpu_queue_stats *out);

/*
 * Testing only: VMGPU_QUEUE_DEBUG_* bits switch off one of the cache
 * maintenance calls the seed requires on a non-coherent device, so that a
 * test can show the data is wrong without it, or make the flusher slow or
 * a submission fail.
 */
#define VMGPU_QUEUE_DEBUG_NO_SYNC_TO_DEVICE	(1u << 0)
#define VMGPU_QUEUE_DEBUG_NO_SYNC_TO_CPU	(1u << 1)
/* The flusher holds the queue for 100 ms before each submission. */
#define VMGPU_QUEUE_DEBUG_SLOW_FLUSHER		(1u << 2)
/* The next submission fails (-EIO) without reaching the kernel; once. */
#define VMGPU_QUEUE_DEBUG_FAIL_SUBMIT		(1u << 3)
void vmgpu_queue_set_debug(vmgpu_queue *q, uint32_t flags);

/*
 * A buffer of size bytes (flags must be 0). New buffers read as zero.
 * Releasing the last reference never waits for the GPU (it ends a map).
 */
int vmgpu_buffer_create(vmgpu_queue *q, uint64_t size, uint32_t flags,
			vmgpu_buffer **out);
vmgpu_buffer *vmgpu_buffer_ref(vmgpu_buffer *buf);
void vmgpu_buffer_unref(vmgpu_buffer *buf);
uint64_t vmgpu_buffer_size(const vmgpu_buffer *buf);
/* GPU VA of the current storage: commands recorded now use this. */
uint64_t vmgpu_buffer_gpu_va(const vmgpu_buffer *buf);

/* D3D11's map types. */
enum vmgpu_map_mode {
	VMGPU_MAP_READ = 1,
	VMGPU_MAP_WRITE = 2,
	VMGPU_MAP_READ_WRITE = 3,
	/* Old contents are not needed: rename instead of waiting. */
	VMGPU_MAP_WRITE_DISCARD = 4,
	/* The caller writes only what recorded commands do not use: no wait. */
	VMGPU_MAP_WRITE_NO_OVERWRITE = 5,
};

/*
 * With READ, WRITE or READ_WRITE: -EBUSY (WasStillDrawing) instead of
 * waiting for the GPU, with no ioctl. Busy because the recorded commands
 * use it: the queue's flusher thread submits them, so that a caller
 * retrying until 0 sees progress; a submission of the flusher's that
 * failed is returned by the next DO_NOT_WAIT map that would ask it again
 * and by vmgpu_queue_finish(). -EBUSY too while another thread (the
 * flusher) holds the queue. -EINVAL with the other modes.
 */
#define VMGPU_MAP_DO_NOT_WAIT		(1u << 0)

/*
 * CPU access to [offset, offset + size) of the buffer until
 * vmgpu_buffer_unmap(); *cpu points at offset. Storage the GPU is done
 * with is mapped at once, and so is a range no command or map wrote (for
 * READ), or none wrote nor reads (for the writes). Otherwise READ,
 * WRITE and READ_WRITE submit the recorded commands if they use the
 * buffer and wait without polling, for the last GPU write (READ) or for
 * every use; WRITE_DISCARD renames busy storage. One map at a time:
 * -EBUSY while mapped. -ETIME if the GPU does not finish in 10 s. If a
 * batch that was to write the buffer failed to submit, its contents are
 * lost: every map but WRITE_DISCARD returns that batch's -errno, until a
 * WRITE_DISCARD map.
 */
int vmgpu_buffer_map(vmgpu_buffer *buf, uint32_t mode, uint32_t flags,
		     uint64_t offset, uint64_t size, void **cpu);
int vmgpu_buffer_unmap(vmgpu_buffer *buf);

/*
 * Record commands (executed in recording order, on the storage each
 * buffer has now). Sizes and offsets of FILL are multiples of 4; a
 * buffer that is mapped cannot be used (-EBUSY). A full job is flushed.
 */
int vmgpu_queue_fill(vmgpu_queue *q, vmgpu_buffer *dst, uint64_t offset,
		     uint64_t size, uint32_t pattern);
int vmgpu_queue_copy(vmgpu_queue *q, vmgpu_buffer *dst, uint64_t dst_offset,
		     vmgpu_buffer *src, uint64_t src_offset, uint64_t size);
/*
 * The GPU waits until the 64-bit value at offset (8-byte aligned) of buf
 * is at least value; later commands wait behind it. The device reads it
 * coherently, so the CPU may write it with WRITE_NO_OVERWRITE meanwhile.
 */
int vmgpu_queue_wait_value(vmgpu_queue *q, vmgpu_buffer *buf, uint64_t offset,
			   uint64_t value);
/* Keep the engine busy for delay_us (at most 1 s). */
int vmgpu_queue_delay(vmgpu_queue *q, uint32_t delay_us);

/* Every ioctl libvmgpu issued on the device so far (for benchmarks). */
uint64_t vmgpu_device_ioctl_count(const vmgpu_device *dev);

#ifdef __cplusplus
}
#endif

#endif
