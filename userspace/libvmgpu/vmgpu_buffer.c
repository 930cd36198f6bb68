// SPDX-License-Identifier: MIT
/*
 * The UMD's buffers: maps with D3D11's semantics, renaming.
 *
 * Seed "Lock2": the UMD implements no-overwrite and discard itself, returns
 * WasStillDrawing (-EBUSY) for a busy allocation when asked not to wait,
 * and otherwise waits without polling. A map waits only when it must: a
 * read not for a range nothing wrote, a write not for a range nothing
 * wrote or reads (no job can depend on those bytes), a read not for GPU
 * reads. WRITE_DISCARD of busy storage renames: the
 * buffer gets idle storage and the old one is retired until its jobs
 * complete. The renaming budget bounds that: past rename_flush_bytes
 * renamed since the last submission the batch is submitted, so that
 * retired storage can complete at all; past rename_wait_bytes retired and
 * still in use, the map waits for the oldest.
 */
#include <errno.h>
#include <stdlib.h>

#include "libvmgpu_internal.h"

/* How long a map waits for the GPU before it gives up. */
#define VMGPU_MAP_TIMEOUT_NS	(10 * 1000000000ull)

int vmgpu_buffer_create(vmgpu_queue *q, uint64_t size, uint32_t flags,
			vmgpu_buffer **out)
{
	vmgpu_buffer *buf;
	int ret;

	if (!q || !size || flags)
		return -EINVAL;
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&q->lock);
	buf->id = ++q->next_buffer_id;
	ret = vmgpu_storage_get(q, size, buf->id, &buf->storage);
	pthread_mutex_unlock(&q->lock);
	if (ret) {
		free(buf);
		return ret;
	}
	buf->q = vmgpu_queue_ref(q);
	buf->size = size;
	buf->refcount = 1;
	*out = buf;
	return 0;
}

vmgpu_buffer *vmgpu_buffer_ref(vmgpu_buffer *buf)
{
	__atomic_add_fetch(&buf->refcount, 1, __ATOMIC_RELAXED);
	return buf;
}

void vmgpu_buffer_unref(vmgpu_buffer *buf)
{
	vmgpu_queue *q;

	if (!buf || __atomic_sub_fetch(&buf->refcount, 1, __ATOMIC_ACQ_REL))
		return;
	q = buf->q;
	pthread_mutex_lock(&q->lock);
	vmgpu_storage_release(q, buf->storage);
	pthread_mutex_unlock(&q->lock);
	vmgpu_queue_unref(q);
	free(buf);
}

uint64_t vmgpu_buffer_size(const vmgpu_buffer *buf)
{
	return buf->size;
}

uint64_t vmgpu_buffer_gpu_va(const vmgpu_buffer *buf)
{
	return vmgpu_storage_va(buf->storage);
}

/* WRITE_DISCARD of busy storage: new storage, within the budget. */
static int vmgpu_buffer_rename(vmgpu_buffer *buf)
{
	struct vmgpu_storage *old = buf->storage, *head, *new;
	vmgpu_queue *q = buf->q;
	int ret;

	vmgpu_storage_reap(q);
	while ((head = q->retired.head) &&
	       q->stats.renamed_bytes_now + old->size > q->wait_bytes) {
		q->stats.budget_waits++;
		ret = vmgpu_queue_wait_locked(q, vmgpu_storage_last_use(head),
					      VMGPU_MAP_TIMEOUT_NS);
		if (ret)
			return ret;
		vmgpu_storage_reap(q);
	}
	ret = vmgpu_storage_get(q, buf->size, buf->id, &new);
	if (ret)
		return ret;
	vmgpu_storage_retire(q, old);
	buf->storage = new;
	q->stats.renames++;
	q->renamed_since_flush += old->size;
	if (q->renamed_since_flush >= q->flush_bytes && q->num_cmds) {
		q->stats.budget_flushes++;
		return vmgpu_queue_flush_locked(q);
	}
	return 0;
}

/* Whether a map of [offset, end) must wait for the storage's jobs. */
static bool vmgpu_map_depends(const struct vmgpu_storage *s, uint32_t mode,
			      uint64_t offset, uint64_t end)
{
	if (vmgpu_range_overlaps(&s->valid, offset, end))
		return true;
	return mode != VMGPU_MAP_READ && vmgpu_range_overlaps(&s->gpu_read, offset, end);
}

/*
 * The device writes back whole lines: a CPU write anywhere in a line the
 * device wrote needs that line synced first, not only the bytes.
 */
static bool vmgpu_map_needs_sync(vmgpu_queue *q, const struct vmgpu_storage *s,
				 uint32_t mode, uint64_t offset, uint64_t end)
{
	uint64_t line = VMGPU_CACHE_LINE_SIZE;

	if (mode != VMGPU_MAP_READ) {
		offset &= ~(line - 1);
		end = (end + line - 1) & ~(line - 1);
	}
	return vmgpu_range_overlaps(&s->gpu_dirty, offset, end) &&
	       s->last_write <= vmgpu_queue_completed(q);
}

/* Make [offset, end) of the buffer ready for the CPU as mode asks. */
static int vmgpu_buffer_prepare(vmgpu_buffer *buf, uint32_t mode, uint32_t flags,
				uint64_t offset, uint64_t end)
{
	struct vmgpu_storage *s = buf->storage;
	vmgpu_queue *q = buf->q;
	uint64_t until;
	int ret;

	/* A dropped batch was to write it: only new contents make sense. */
	if (s->lost && mode != VMGPU_MAP_WRITE_DISCARD)
		return s->lost;
	switch (mode) {
	case VMGPU_MAP_WRITE_DISCARD:
		s->lost = 0;
		if (!vmgpu_storage_idle(q, s)) {
			ret = vmgpu_buffer_rename(buf);
			if (ret)
				return ret;
			s = buf->storage;
		}
		vmgpu_range_clear(&s->valid);
		vmgpu_range_clear(&s->gpu_read);
		break;
	case VMGPU_MAP_WRITE_NO_OVERWRITE:
		break;
	default:
		if (!vmgpu_map_depends(s, mode, offset, end))
			break;
		until = mode == VMGPU_MAP_READ ? s->last_write : vmgpu_storage_last_use(s);
		if (until <= vmgpu_queue_completed(q))
			break;
		if (flags & VMGPU_MAP_DO_NOT_WAIT) {
			/* A caller that spins on -EBUSY must see progress. */
			ret = vmgpu_queue_submit_async(q, until);
			return ret ?: -EBUSY;
		}
		ret = vmgpu_queue_wait_locked(q, until, VMGPU_MAP_TIMEOUT_NS);
		if (ret)
			return ret;
	}
	/* NO_OVERWRITE does not wait: a write still running is the caller's. */
	if (vmgpu_map_needs_sync(q, s, mode, offset, end))
		return vmgpu_queue_sync_to_cpu(q, s);
	return 0;
}

int vmgpu_buffer_map(vmgpu_buffer *buf, uint32_t mode, uint32_t flags,
		     uint64_t offset, uint64_t size, void **cpu)
{
	vmgpu_queue *q = buf->q;
	int ret;

	if (mode < VMGPU_MAP_READ || mode > VMGPU_MAP_WRITE_NO_OVERWRITE ||
	    flags & ~VMGPU_MAP_DO_NOT_WAIT)
		return -EINVAL;
	if ((flags & VMGPU_MAP_DO_NOT_WAIT) &&
	    (mode == VMGPU_MAP_WRITE_DISCARD || mode == VMGPU_MAP_WRITE_NO_OVERWRITE))
		return -EINVAL;
	if (!vmgpu_buffer_range_ok(buf, offset, size))
		return -EINVAL;
	/* Someone (the flusher) is submitting: the answer could wait. */
	if (flags & VMGPU_MAP_DO_NOT_WAIT) {
		if (pthread_mutex_trylock(&q->lock))
			return -EBUSY;
	} else {
		pthread_mutex_lock(&q->lock);
	}
	ret = buf->map_mode ? -EBUSY : vmgpu_buffer_prepare(buf, mode, flags, offset,
							    offset + size);
	if (!ret) {
		buf->map_mode = mode;
		buf->map_range = (struct vmgpu_range){ offset, offset + size };
		*cpu = buf->storage->alloc->cpu + buf->storage->offset + offset;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int vmgpu_buffer_unmap(vmgpu_buffer *buf)
{
	struct vmgpu_storage *s = buf->storage;
	vmgpu_queue *q = buf->q;
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	if (!buf->map_mode) {
		ret = -EINVAL;
	} else if (buf->map_mode != VMGPU_MAP_READ) {
		vmgpu_range_add(&s->valid, buf->map_range.start, buf->map_range.end);
		if (q->noncoherent)
			vmgpu_range_add(&s->cpu_dirty, buf->map_range.start,
					buf->map_range.end);
	}
	buf->map_mode = 0;
	pthread_mutex_unlock(&q->lock);
	return ret;
}
