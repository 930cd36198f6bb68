/* SPDX-License-Identifier: MIT */
/*
 * libvmgpu internals shared by its files: the device, and the UMD layer's
 * queues, buffers and the storage behind them.
 */
#ifndef LIBVMGPU_INTERNAL_H
#define LIBVMGPU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "libvmgpu.h"

struct vmgpu_device {
	int refcount;
	int fd;
	/*
	 * The allocations with a handle on fd, so that importing a dma-buf
	 * whose handle we already hold returns that allocation (the kernel
	 * gives one handle per object and file).
	 */
	pthread_mutex_t bo_lock;
	vmgpu_bo *bos;
	uint64_t ioctls;		/* every ioctl issued, atomically counted */
	uint32_t va_windows;		/* GPU VA windows handed to queues */
};

/* Any ioctl on the device's fd, counted: 0 or -errno. */
int vmgpu_ioctl(vmgpu_device *dev, unsigned long request, void *arg);
/* Count an ioctl libdrm issued for us (syncobj calls). */
void vmgpu_count_ioctl(vmgpu_device *dev);

/* A byte range [start, end); empty when start >= end. */
struct vmgpu_range {
	uint64_t start;
	uint64_t end;
};

/* One kernel allocation of the queue: CPU-mapped and bound in the GPU VA. */
struct vmgpu_alloc {
	vmgpu_bo *bo;
	uint8_t *cpu;
	uint64_t va;
	uint64_t size;
};

struct vmgpu_slab;

/*
 * Storage: the bytes a buffer's commands and maps use now, a slice of a
 * slab or a whole allocation. Seqnos are the queue's context seqnos: the
 * last job that reads it, that writes it. The ranges are offsets in the
 * storage: valid (written by the CPU or by a recorded command since the
 * buffer got it), gpu_read (read by a recorded command), cpu_dirty (CPU
 * writes the device cache may not have seen) and gpu_dirty (device writes
 * the CPU may not see yet); the last two are kept on a non-coherent device
 * only.
 */
struct vmgpu_storage {
	struct vmgpu_alloc *alloc;
	struct vmgpu_slab *slab;	/* NULL: a whole allocation */
	uint64_t offset;		/* in alloc */
	uint64_t size;
	uint64_t last_read;
	uint64_t last_write;
	uint64_t batch;			/* batch_gen of the batch that listed it */
	uint64_t owner;			/* id of the buffer whose bytes it holds */
	uint64_t idle_since_ns;		/* in the recycle cache since */
	int lost;			/* -errno: a dropped batch wrote it */
	struct vmgpu_range valid;
	struct vmgpu_range gpu_read;
	struct vmgpu_range cpu_dirty;
	struct vmgpu_range gpu_dirty;
	struct vmgpu_storage *next;
};

/* A list of storage, kept in order by the caller. */
struct vmgpu_storage_list {
	struct vmgpu_storage *head;
	struct vmgpu_storage *tail;
};

/* GPU VA that can be handed out again once job seqno `after` completed. */
struct vmgpu_va_hole {
	uint64_t va;
	uint64_t size;
	uint64_t after;
	struct vmgpu_va_hole *next;
};

/* Slices of 2^VMGPU_SLICE_MIN_SHIFT to VMGPU_SUBALLOC_MAX bytes. */
#define VMGPU_SLICE_MIN_SHIFT	8
#define VMGPU_SLICE_MAX_SHIFT	16
#define VMGPU_SLICE_CLASSES	(VMGPU_SLICE_MAX_SHIFT - VMGPU_SLICE_MIN_SHIFT + 1)
_Static_assert(1u << VMGPU_SLICE_MAX_SHIFT == VMGPU_SUBALLOC_MAX, "largest slice");

struct vmgpu_queue {
	int refcount;
	pthread_mutex_t lock;		/* everything below */
	vmgpu_device *dev;
	vmgpu_context *ctx;
	uint32_t syncobj;		/* timeline: point n = job seqno n */
	uint32_t aperture;		/* the aperture segment's id */
	bool noncoherent;
	uint32_t debug;			/* VMGPU_QUEUE_DEBUG_* */
	uint32_t slice_min_shift;
	uint64_t submitted;		/* seqno of the last submitted job */
	uint64_t waited;		/* highest seqno a wait saw signalled */
	uint64_t next_buffer_id;

	/* The batch being recorded: job seqno submitted + 1. */
	union vmgpu_cmd *cmds;
	uint32_t num_cmds;
	uint64_t batch_gen;		/* counts batches, submitted or dropped */
	struct vmgpu_storage **listed;	/* storage the batch uses */
	uint32_t num_listed;
	/* Whole allocations to destroy once the batch is submitted. */
	struct vmgpu_storage **destroy_after_flush;
	uint32_t num_destroy_after_flush;
	uint32_t max_listed;		/* room in both arrays */
	uint64_t renamed_since_flush;

	uint64_t flush_bytes;
	uint64_t wait_bytes;
	uint64_t expiry_ns;

	/* Storage: see vmgpu_storage.c. */
	struct vmgpu_slab *slabs[VMGPU_SLICE_CLASSES];
	struct vmgpu_storage_list retired;	/* by last use, oldest first */
	struct vmgpu_storage_list recycle;	/* idle, oldest first */
	uint64_t recycle_bytes;
	struct vmgpu_va_hole *va_holes;
	uint64_t va_next;
	uint64_t va_end;

	/*
	 * The flusher thread: DO_NOT_WAIT asks it to submit through a seqno,
	 * so that the caller itself never makes an ioctl that can block.
	 */
	pthread_t flusher;
	pthread_cond_t flush_wake;
	uint64_t flush_through;		/* 0: nothing asked */
	bool flusher_stop;
	/* The flusher has reached its wait once (under lock). */
	bool flusher_parked;
	int async_error;		/* its failed submission, see vmgpu_queue.c */

	struct vmgpu_queue_stats stats;
};

struct vmgpu_buffer {
	int refcount;
	vmgpu_queue *q;
	uint64_t id;
	uint64_t size;
	struct vmgpu_storage *storage;
	uint32_t map_mode;		/* 0 while not mapped */
	struct vmgpu_range map_range;
};

static inline uint64_t vmgpu_storage_last_use(const struct vmgpu_storage *s)
{
	return s->last_read > s->last_write ? s->last_read : s->last_write;
}

static inline uint64_t vmgpu_storage_va(const struct vmgpu_storage *s)
{
	return s->alloc->va + s->offset;
}

/* [offset, offset + size) is a non-empty range of the buffer. */
static inline bool vmgpu_buffer_range_ok(const vmgpu_buffer *buf, uint64_t offset,
					 uint64_t size)
{
	return size && offset <= buf->size && size <= buf->size - offset;
}

/* vmgpu_range helpers. */
static inline bool vmgpu_range_empty(const struct vmgpu_range *r)
{
	return r->start >= r->end;
}

static inline bool vmgpu_range_overlaps(const struct vmgpu_range *r, uint64_t start,
					uint64_t end)
{
	return !vmgpu_range_empty(r) && start < r->end && r->start < end;
}

/* Grow r to cover [start, end) too (one hull: conservative). */
static inline void vmgpu_range_add(struct vmgpu_range *r, uint64_t start, uint64_t end)
{
	if (vmgpu_range_empty(r)) {
		r->start = start;
		r->end = end;
		return;
	}
	if (start < r->start)
		r->start = start;
	if (end > r->end)
		r->end = end;
}

static inline void vmgpu_range_clear(struct vmgpu_range *r)
{
	r->start = r->end = 0;
}

/* vmgpu_queue.c, with q->lock held. */
uint64_t vmgpu_queue_completed(vmgpu_queue *q);
bool vmgpu_storage_idle(vmgpu_queue *q, const struct vmgpu_storage *s);
int vmgpu_queue_flush_locked(vmgpu_queue *q);
int vmgpu_queue_submit_through(vmgpu_queue *q, uint64_t seqno);
int vmgpu_queue_submit_async(vmgpu_queue *q, uint64_t seqno);
int vmgpu_queue_wait_locked(vmgpu_queue *q, uint64_t seqno, uint64_t timeout_ns);
int vmgpu_queue_sync_to_cpu(vmgpu_queue *q, struct vmgpu_storage *s);
void vmgpu_queue_destroy_after_flush(vmgpu_queue *q, struct vmgpu_storage *s);
uint64_t vmgpu_now_ns(void);

/* vmgpu_storage.c, with q->lock held. */
int vmgpu_storage_get(vmgpu_queue *q, uint64_t size, uint64_t owner,
		      struct vmgpu_storage **out);
void vmgpu_storage_retire(vmgpu_queue *q, struct vmgpu_storage *s);
void vmgpu_storage_release(vmgpu_queue *q, struct vmgpu_storage *s);
void vmgpu_storage_reap(vmgpu_queue *q);
void vmgpu_storage_trim(vmgpu_queue *q, bool all);
void vmgpu_storage_teardown(vmgpu_queue *q);
void vmgpu_alloc_destroy(vmgpu_queue *q, struct vmgpu_alloc *alloc, uint64_t last_use);

#endif
