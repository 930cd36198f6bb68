// SPDX-License-Identifier: MIT
/*
 * Storage for the UMD's buffers: where renaming gets its memory.
 *
 * Seed "Allocation usage tracking": the UMD renames, so it needs memory at
 * once for a WRITE_DISCARD of busy storage. Small storage is a slice of a
 * slab (one allocation cut into equal slices, one slab list per power of
 * two); larger storage is a whole allocation. Storage renamed away goes on
 * the retired list, ordered by its last job, and comes back (slices to
 * their slab, whole allocations to the recycle cache) once that job
 * completed, as the context's seqno page says. The recycle cache is the
 * fence-tagged pool: idle allocations wait there for a buffer of their
 * size, and are destroyed with AssumeNotInUse when they expire or the
 * cache is full. Storage that held another buffer's bytes is zeroed before
 * it is handed out, so a buffer never shows another's data.
 *
 * GPU VA: each allocation is bound once for its lifetime, in the queue's
 * own window. An allocation destroyed while busy keeps its mappings until
 * its jobs completed (deferred destruction), so its VA is reused only
 * after its last job completed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libvmgpu_internal.h"

struct vmgpu_slab {
	struct vmgpu_alloc alloc;
	uint32_t shift;
	uint32_t num_slices;
	uint32_t num_free;
	uint64_t idle_since_ns;		/* when its last slice came back */
	uint64_t last_use;		/* the latest last job of a slice */
	struct vmgpu_storage *free;	/* idle slices */
	struct vmgpu_slab *next;
	struct vmgpu_storage slices[];
};

/* Slabs hold 64 slices, within 64 KiB to 1 MiB: 16 to 256 slices. */
#define VMGPU_SLAB_SLICES	64
#define VMGPU_SLAB_MIN		(64u << 10)
#define VMGPU_SLAB_MAX		(1u << 20)

static void vmgpu_list_append(struct vmgpu_storage_list *l, struct vmgpu_storage *s)
{
	s->next = NULL;
	if (l->tail)
		l->tail->next = s;
	else
		l->head = s;
	l->tail = s;
}

static struct vmgpu_storage *vmgpu_list_pop(struct vmgpu_storage_list *l)
{
	struct vmgpu_storage *s = l->head;

	if (s) {
		l->head = s->next;
		if (!l->head)
			l->tail = NULL;
	}
	return s;
}

static void vmgpu_va_put(vmgpu_queue *q, uint64_t va, uint64_t size, uint64_t after)
{
	struct vmgpu_va_hole *hole = malloc(sizeof(*hole));

	if (!hole)
		return;		/* the range is lost to this queue, nothing worse */
	*hole = (struct vmgpu_va_hole){ .va = va, .size = size, .after = after,
					.next = q->va_holes };
	q->va_holes = hole;
}

/* First fit among holes whose last job completed, else fresh VA. */
static int vmgpu_va_get(vmgpu_queue *q, uint64_t size, bool holes, uint64_t *va)
{
	uint64_t completed = vmgpu_queue_completed(q);
	struct vmgpu_va_hole **link, *hole;

	for (link = &q->va_holes; holes && (hole = *link); link = &hole->next) {
		if (hole->after > completed || hole->size < size)
			continue;
		*va = hole->va;
		hole->va += size;
		hole->size -= size;
		if (!hole->size) {
			*link = hole->next;
			free(hole);
		}
		return 0;
	}
	if (size > q->va_end - q->va_next)
		return -ENOSPC;
	*va = q->va_next;
	q->va_next += size;
	return 0;
}

/*
 * Bind at reusable VA if there is some. The kernel removes a destroyed
 * allocation's mappings in a work item after its jobs completed, so a
 * hole can still be taken for a moment (-EEXIST): then use fresh VA.
 */
static int vmgpu_alloc_bind(vmgpu_queue *q, struct vmgpu_alloc *alloc)
{
	bool holes = true;
	int ret;

	for (;;) {
		ret = vmgpu_va_get(q, alloc->size, holes, &alloc->va);
		if (ret)
			return ret;
		ret = vmgpu_vm_map(alloc->bo, 0, alloc->va, alloc->size, 0);
		if (ret != -EEXIST || !holes)
			break;
		/* Try the hole again after the next job, not first thing. */
		vmgpu_va_put(q, alloc->va, alloc->size, q->submitted + 1);
		holes = false;
	}
	if (ret)
		vmgpu_va_put(q, alloc->va, alloc->size, 0);
	return ret;
}

static int vmgpu_alloc_init(vmgpu_queue *q, uint64_t size, struct vmgpu_alloc *alloc)
{
	struct vmgpu_bo_create_info info = {
		.size = size,
		.flags = DRM_VMGPU_ALLOC_CPU_ACCESS | DRM_VMGPU_ALLOC_CACHED,
		.segments = 1u << q->aperture,
		.preferred_segment = q->aperture,
	};
	void *cpu;
	int ret;

	ret = vmgpu_bo_create(q->dev, &info, &alloc->bo);
	if (ret)
		return ret;
	alloc->size = vmgpu_bo_size(alloc->bo);
	ret = vmgpu_bo_map(alloc->bo, &cpu);
	if (!ret)
		ret = vmgpu_alloc_bind(q, alloc);
	if (ret) {
		/* No job has used it: closing the handle frees it. */
		vmgpu_bo_unref(alloc->bo);
		return ret;
	}
	alloc->cpu = cpu;
	q->stats.allocations++;
	return 0;
}

/**
 * vmgpu_alloc_destroy() - destroy an allocation without waiting
 * @q: the queue
 * @alloc: the allocation; the caller frees the struct
 * @last_use: seqno of the last job that uses it
 *
 * AssumeNotInUse when that job completed, deferred destruction otherwise.
 * If GEM_DESTROY fails the handle is closed instead; its mapping then
 * keeps the memory and the VA until the file is closed.
 */
void vmgpu_alloc_destroy(vmgpu_queue *q, struct vmgpu_alloc *alloc, uint64_t last_use)
{
	bool idle = last_use <= vmgpu_queue_completed(q);
	uint32_t flags = idle ? DRM_VMGPU_GEM_DESTROY_ASSUME_NOT_IN_USE : 0;

	if (vmgpu_bo_destroy(alloc->bo, flags)) {
		vmgpu_bo_unref(alloc->bo);
		return;
	}
	vmgpu_va_put(q, alloc->va, alloc->size, idle ? 0 : last_use);
	if (idle)
		q->stats.destroyed_idle++;
	else
		q->stats.destroyed_deferred++;
}

static uint32_t vmgpu_slice_shift(vmgpu_queue *q, uint64_t size)
{
	uint32_t shift = q->slice_min_shift;

	while ((1ull << shift) < size)
		shift++;
	return shift;
}

static struct vmgpu_slab **vmgpu_slab_list(vmgpu_queue *q, uint32_t shift)
{
	return &q->slabs[shift - VMGPU_SLICE_MIN_SHIFT];
}

static int vmgpu_slab_create(vmgpu_queue *q, uint32_t shift, struct vmgpu_slab **out)
{
	uint64_t slice = 1ull << shift, bytes = slice * VMGPU_SLAB_SLICES;
	struct vmgpu_slab *slab;
	uint32_t i, n;
	int ret;

	if (bytes < VMGPU_SLAB_MIN)
		bytes = VMGPU_SLAB_MIN;
	if (bytes > VMGPU_SLAB_MAX)
		bytes = VMGPU_SLAB_MAX;
	n = bytes >> shift;
	slab = calloc(1, sizeof(*slab) + n * sizeof(slab->slices[0]));
	if (!slab)
		return -ENOMEM;
	ret = vmgpu_alloc_init(q, bytes, &slab->alloc);
	if (ret) {
		free(slab);
		return ret;
	}
	slab->shift = shift;
	slab->num_slices = slab->num_free = n;
	for (i = n; i--;) {
		struct vmgpu_storage *s = &slab->slices[i];

		s->alloc = &slab->alloc;
		s->slab = slab;
		s->offset = (uint64_t)i << shift;
		s->size = slice;
		s->next = slab->free;
		slab->free = s;
	}
	slab->next = *vmgpu_slab_list(q, shift);
	*vmgpu_slab_list(q, shift) = slab;
	*out = slab;
	return 0;
}

static int vmgpu_slice_get(vmgpu_queue *q, uint64_t size, struct vmgpu_storage **out)
{
	uint32_t shift = vmgpu_slice_shift(q, size);
	struct vmgpu_slab *slab;
	int ret;

	for (slab = *vmgpu_slab_list(q, shift); slab && !slab->free; slab = slab->next)
		;
	if (!slab) {
		ret = vmgpu_slab_create(q, shift, &slab);
		if (ret)
			return ret;
	}
	*out = slab->free;
	slab->free = (*out)->next;
	slab->num_free--;
	return 0;
}

static void vmgpu_slice_put(struct vmgpu_slab *slab, struct vmgpu_storage *s)
{
	if (vmgpu_storage_last_use(s) > slab->last_use)
		slab->last_use = vmgpu_storage_last_use(s);
	s->next = slab->free;
	slab->free = s;
	if (++slab->num_free == slab->num_slices)
		slab->idle_since_ns = vmgpu_now_ns();
}

/*
 * An idle allocation of exactly size bytes from the recycle cache, the
 * owner's own if it has one there (no zeroing then).
 */
static struct vmgpu_storage *vmgpu_recycle_take(vmgpu_queue *q, uint64_t size,
						uint64_t owner)
{
	struct vmgpu_storage *s, *prev = NULL, *pick = NULL, *pick_prev = NULL;

	for (s = q->recycle.head; s; prev = s, s = s->next) {
		if (s->size != size || (pick && s->owner != owner))
			continue;
		pick = s;
		pick_prev = prev;
		if (s->owner == owner)
			break;
	}
	s = pick;
	prev = pick_prev;
	if (s) {
		if (prev)
			prev->next = s->next;
		else
			q->recycle.head = s->next;
		if (q->recycle.tail == s)
			q->recycle.tail = prev;
		q->recycle_bytes -= s->size;
	}
	return s;
}

static int vmgpu_whole_get(vmgpu_queue *q, uint64_t size, uint64_t owner,
			   struct vmgpu_storage **out)
{
	uint64_t rounded = (size + VMGPU_PAGE_SIZE - 1) & ~(uint64_t)(VMGPU_PAGE_SIZE - 1);
	struct vmgpu_storage *s = vmgpu_recycle_take(q, rounded, owner);
	int ret;

	if (s) {
		*out = s;
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		s->alloc = calloc(1, sizeof(*s->alloc));
	if (!s || !s->alloc) {
		free(s);
		return -ENOMEM;
	}
	ret = vmgpu_alloc_init(q, rounded, s->alloc);
	if (ret) {
		free(s->alloc);
		free(s);
		return ret;
	}
	s->size = s->alloc->size;
	*out = s;
	return 0;
}

/**
 * vmgpu_storage_get() - idle storage for a buffer
 * @q: the queue
 * @size: bytes the buffer needs
 * @owner: the buffer's id
 * @out: the storage, its valid range empty
 *
 * Storage another buffer used is zeroed first (after its device-written
 * lines are synced for the CPU; if that fails it is not handed out):
 * recycled memory never shows another buffer's bytes.
 *
 * Return: 0 or -errno.
 */
int vmgpu_storage_get(vmgpu_queue *q, uint64_t size, uint64_t owner,
		      struct vmgpu_storage **out)
{
	struct vmgpu_storage *s;
	int ret;

	vmgpu_storage_reap(q);
	ret = size <= VMGPU_SUBALLOC_MAX ? vmgpu_slice_get(q, size, &s) :
					   vmgpu_whole_get(q, size, owner, &s);
	if (ret)
		return ret;
	if (s->owner)
		q->stats.recycled++;
	if (s->owner && s->owner != owner) {
		ret = vmgpu_queue_sync_to_cpu(q, s);
		if (ret) {
			vmgpu_storage_release(q, s);
			return ret;
		}
		memset(s->alloc->cpu + s->offset, 0, s->size);
		if (q->noncoherent)
			vmgpu_range_add(&s->cpu_dirty, 0, s->size);
	}
	s->owner = owner;
	s->lost = 0;
	vmgpu_range_clear(&s->valid);
	vmgpu_range_clear(&s->gpu_read);
	*out = s;
	return 0;
}

/**
 * vmgpu_storage_retire() - storage a buffer no longer has, the GPU may use
 * @q: the queue
 * @s: the storage
 *
 * It comes back for reuse once its last job completed.
 */
void vmgpu_storage_retire(vmgpu_queue *q, struct vmgpu_storage *s)
{
	uint64_t last = vmgpu_storage_last_use(s);
	struct vmgpu_storage **link = &q->retired.head;

	/* Nearly always the newest: walk only when it is not. */
	if (q->retired.tail && vmgpu_storage_last_use(q->retired.tail) <= last) {
		vmgpu_list_append(&q->retired, s);
	} else {
		while (*link && vmgpu_storage_last_use(*link) <= last)
			link = &(*link)->next;
		s->next = *link;
		*link = s;
		if (!s->next)
			q->retired.tail = s;
	}
	q->stats.renamed_bytes_now += s->size;
	if (q->stats.renamed_bytes_now > q->stats.renamed_bytes_peak)
		q->stats.renamed_bytes_peak = q->stats.renamed_bytes_now;
}

/**
 * vmgpu_storage_release() - storage whose buffer is gone, never blocking
 * @q: the queue
 * @s: the storage
 *
 * Idle: back to its slab, or into the recycle cache. Busy: a slice is
 * retired; a whole allocation is destroyed with deferred destruction,
 * after the recorded batch is submitted if that batch uses it.
 */
void vmgpu_storage_release(vmgpu_queue *q, struct vmgpu_storage *s)
{
	if (!vmgpu_storage_idle(q, s)) {
		if (s->slab) {
			vmgpu_storage_retire(q, s);
			return;
		}
		if (s->batch == q->batch_gen) {
			vmgpu_queue_destroy_after_flush(q, s);
			return;
		}
		vmgpu_alloc_destroy(q, s->alloc, vmgpu_storage_last_use(s));
		free(s->alloc);
		free(s);
		return;
	}
	if (s->slab) {
		vmgpu_slice_put(s->slab, s);
		return;
	}
	s->idle_since_ns = vmgpu_now_ns();
	vmgpu_list_append(&q->recycle, s);
	q->recycle_bytes += s->size;
	vmgpu_storage_trim(q, false);
}

/**
 * vmgpu_storage_reap() - take back retired storage whose jobs completed
 * @q: the queue
 */
void vmgpu_storage_reap(vmgpu_queue *q)
{
	uint64_t completed = vmgpu_queue_completed(q);
	struct vmgpu_storage *s;

	while (q->retired.head && vmgpu_storage_last_use(q->retired.head) <= completed) {
		s = vmgpu_list_pop(&q->retired);
		q->stats.renamed_bytes_now -= s->size;
		vmgpu_storage_release(q, s);
	}
}

static void vmgpu_slab_trim(vmgpu_queue *q, uint64_t now, bool all)
{
	struct vmgpu_slab **link, *slab;
	uint32_t i;

	for (i = 0; i < VMGPU_SLICE_CLASSES; i++) {
		link = &q->slabs[i];
		while ((slab = *link)) {
			if (slab->num_free != slab->num_slices ||
			    (!all && now - slab->idle_since_ns < q->expiry_ns)) {
				link = &slab->next;
				continue;
			}
			*link = slab->next;
			vmgpu_alloc_destroy(q, &slab->alloc, slab->last_use);
			free(slab);
		}
	}
}

/**
 * vmgpu_storage_trim() - destroy what stayed idle too long
 * @q: the queue
 * @all: everything idle, whatever its age (queue teardown)
 *
 * The recycle cache also never holds more than the renaming wait budget.
 */
void vmgpu_storage_trim(vmgpu_queue *q, bool all)
{
	uint64_t now = vmgpu_now_ns();
	struct vmgpu_storage *s;

	while ((s = q->recycle.head) &&
	       (all || now - s->idle_since_ns >= q->expiry_ns ||
		q->recycle_bytes > q->wait_bytes)) {
		vmgpu_list_pop(&q->recycle);
		q->recycle_bytes -= s->size;
		vmgpu_alloc_destroy(q, s->alloc, 0);
		free(s->alloc);
		free(s);
	}
	vmgpu_slab_trim(q, now, all);
}

/**
 * vmgpu_storage_teardown() - destroy every allocation of a queue that has
 * no buffers left, without waiting
 * @q: the queue, its batch submitted
 */
void vmgpu_storage_teardown(vmgpu_queue *q)
{
	struct vmgpu_va_hole *hole;
	struct vmgpu_storage *s;

	while ((s = vmgpu_list_pop(&q->retired))) {
		q->stats.renamed_bytes_now -= s->size;
		if (s->slab) {
			vmgpu_slice_put(s->slab, s);
			continue;
		}
		vmgpu_alloc_destroy(q, s->alloc, vmgpu_storage_last_use(s));
		free(s->alloc);
		free(s);
	}
	vmgpu_storage_trim(q, true);
	while ((hole = q->va_holes)) {
		q->va_holes = hole->next;
		free(hole);
	}
}
