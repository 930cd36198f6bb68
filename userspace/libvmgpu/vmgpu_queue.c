// SPDX-License-Identifier: MIT
/*
 * The UMD's queue: recording, submission, usage tracking and waits.
 *
 * Seed "Allocation usage tracking": the kernel no longer sees which
 * allocations a command buffer uses, so the UMD tracks it. Each command
 * recorded on a buffer tags the buffer's storage with the seqno the batch
 * will have as a job of the queue's context (the last one submitted plus
 * one: the queue is the context's only submitter), as its last read or
 * last write. Storage is idle once the context's seqno page reached that
 * seqno, which a memory read tells; a wait for it is a non-polling sleep
 * on the queue's timeline syncobj, whose point n each job n signals.
 *
 * Seed "I/O coherency": on a device without it, the queue keeps per
 * storage the ranges the CPU wrote and the device wrote, and calls the
 * cache-sync ioctl where the seed requires: before each submission, one
 * call (of up to 256 ranges) for the CPU-written ranges of the storage the
 * batch uses (CPU write, then GPU read), and before the CPU maps a range
 * the device wrote (GPU write, then CPU read; a CPU write too, as a device
 * line written back later would overwrite it). A range's record is
 * dropped only once its call succeeded. On a coherent device the ioctl is
 * never called.
 *
 * Seed "Lock2" DO_NOT_WAIT: a map that must not wait never submits either
 * (EXEC can block: on locks, on moves, on a device VM slot). When the
 * batch being recorded is what keeps the buffer busy, it hands the batch
 * to the queue's flusher thread, as DXVK hands a flush to its CS thread,
 * so that a caller retrying until the buffer is idle sees progress. A
 * submission that fails there is reported by the next DO_NOT_WAIT map that
 * would ask the flusher again, or by vmgpu_queue_finish(); and, as with
 * any dropped batch, the storage it was to write is lost: maps other than
 * WRITE_DISCARD fail with the error.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "libvmgpu_internal.h"

/* VMGPU_QUEUE_DEBUG_SLOW_FLUSHER: how long the flusher holds the queue. */
#define VMGPU_SLOW_FLUSHER_US	100000

/* Each queue manages its own GPU VA window, from 16 TiB up. */
#define VMGPU_VA_WINDOW_BASE	(1ull << 44)
#define VMGPU_VA_WINDOW_SIZE	(1ull << 38)
#define VMGPU_DEFAULT_EXPIRY_NS	1000000000ull

/* The syncobj ioctls libdrm issues for us, counted like ours. */
static int vmgpu_syncobj_create(vmgpu_device *dev, uint32_t *handle)
{
	vmgpu_count_ioctl(dev);
	return drmSyncobjCreate(dev->fd, 0, handle) ? -errno : 0;
}

static void vmgpu_syncobj_destroy(vmgpu_device *dev, uint32_t handle)
{
	vmgpu_count_ioctl(dev);
	drmSyncobjDestroy(dev->fd, handle);
}

static int vmgpu_syncobj_wait(vmgpu_device *dev, uint32_t handle, uint64_t point,
			      uint64_t deadline_ns)
{
	vmgpu_count_ioctl(dev);
	return drmSyncobjTimelineWait(dev->fd, &handle, &point, 1, deadline_ns,
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL) ? -errno : 0;
}

uint64_t vmgpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/**
 * vmgpu_queue_completed() - the queue's last completed job
 * @q: the queue
 *
 * Return: the seqno page, or what a wait saw signalled if that is later.
 */
uint64_t vmgpu_queue_completed(vmgpu_queue *q)
{
	uint64_t page = vmgpu_context_completed(q->ctx);

	return page > q->waited ? page : q->waited;
}

/**
 * vmgpu_storage_idle() - whether no job of the queue uses storage
 * @q: the queue
 * @s: the storage
 *
 * Return: true once its last reader and last writer completed.
 */
bool vmgpu_storage_idle(vmgpu_queue *q, const struct vmgpu_storage *s)
{
	uint64_t completed = vmgpu_queue_completed(q);

	return s->last_read <= completed && s->last_write <= completed;
}

static int vmgpu_queue_cache_sync(vmgpu_queue *q, struct drm_vmgpu_cache_op *ops,
				  uint32_t num_ops)
{
	struct drm_vmgpu_gem_cache_sync args = {
		.ops = (uintptr_t)ops,
		.num_ops = num_ops,
	};

	q->stats.cache_syncs++;
	q->stats.cache_sync_ranges += num_ops;
	return vmgpu_ioctl(q->dev, DRM_IOCTL_VMGPU_GEM_CACHE_SYNC, &args);
}

static struct drm_vmgpu_cache_op vmgpu_cache_op(const struct vmgpu_storage *s,
						const struct vmgpu_range *r, uint32_t flags)
{
	return (struct drm_vmgpu_cache_op){
		.handle = vmgpu_bo_handle(s->alloc->bo),
		.flags = flags,
		.offset = s->offset + r->start,
		.size = r->end - r->start,
	};
}

/* Sync to the device ops[0..n), the CPU-written ranges of synced[]. */
static int vmgpu_queue_sync_batch(vmgpu_queue *q, struct drm_vmgpu_cache_op *ops,
				  struct vmgpu_storage **synced, uint32_t n)
{
	uint32_t i;
	int ret = 0;

	if (!(q->debug & VMGPU_QUEUE_DEBUG_NO_SYNC_TO_DEVICE))
		ret = vmgpu_queue_cache_sync(q, ops, n);
	for (i = 0; i < n && !ret; i++)
		vmgpu_range_clear(&synced[i]->cpu_dirty);
	return ret;
}

/* CPU writes, then the batch's GPU reads: one call for all its storage. */
static int vmgpu_queue_sync_to_device(vmgpu_queue *q)
{
	struct vmgpu_storage *synced[DRM_VMGPU_CACHE_SYNC_MAX_OPS];
	struct drm_vmgpu_cache_op ops[DRM_VMGPU_CACHE_SYNC_MAX_OPS];
	uint32_t i, n = 0;
	int ret = 0;

	for (i = 0; i < q->num_listed && !ret; i++) {
		struct vmgpu_storage *s = q->listed[i];

		if (vmgpu_range_empty(&s->cpu_dirty))
			continue;
		synced[n] = s;
		ops[n++] = vmgpu_cache_op(s, &s->cpu_dirty, DRM_VMGPU_CACHE_SYNC_TO_DEVICE);
		if (n == DRM_VMGPU_CACHE_SYNC_MAX_OPS) {
			ret = vmgpu_queue_sync_batch(q, ops, synced, n);
			n = 0;
		}
	}
	if (n && !ret)
		ret = vmgpu_queue_sync_batch(q, ops, synced, n);
	return ret;
}

/**
 * vmgpu_queue_sync_to_cpu() - before the CPU touches storage the device
 * wrote
 * @q: the queue
 * @s: the storage, its last write completed
 *
 * Return: 0 or the cache-sync ioctl's -errno.
 */
int vmgpu_queue_sync_to_cpu(vmgpu_queue *q, struct vmgpu_storage *s)
{
	struct drm_vmgpu_cache_op op;
	int ret = 0;

	if (vmgpu_range_empty(&s->gpu_dirty))
		return 0;
	op = vmgpu_cache_op(s, &s->gpu_dirty, DRM_VMGPU_CACHE_SYNC_TO_CPU);
	if (!(q->debug & VMGPU_QUEUE_DEBUG_NO_SYNC_TO_CPU))
		ret = vmgpu_queue_cache_sync(q, &op, 1);
	if (!ret)
		vmgpu_range_clear(&s->gpu_dirty);
	return ret;
}

/**
 * vmgpu_queue_destroy_after_flush() - destroy a whole allocation once the
 * batch that uses it is submitted (before, its mappings would go with it)
 * @q: the queue
 * @s: storage the batch lists; freed with its allocation
 *
 * Never fails: the array has room for every listed storage.
 */
void vmgpu_queue_destroy_after_flush(vmgpu_queue *q, struct vmgpu_storage *s)
{
	q->destroy_after_flush[q->num_destroy_after_flush++] = s;
}

/* The batch is gone, submitted (as job seqno) or not. */
static void vmgpu_queue_end_batch(vmgpu_queue *q, uint64_t seqno)
{
	uint32_t i;

	for (i = 0; i < q->num_destroy_after_flush; i++) {
		struct vmgpu_storage *s = q->destroy_after_flush[i];

		vmgpu_alloc_destroy(q, s->alloc, seqno);
		free(s->alloc);
		free(s);
	}
	q->num_destroy_after_flush = 0;
	q->num_cmds = 0;
	q->num_listed = 0;
	q->batch_gen++;
	q->renamed_since_flush = 0;
}

/**
 * vmgpu_queue_flush_locked() - submit the recorded batch as one job
 * @q: the queue
 *
 * A batch that fails to submit is dropped: none of it ran, the error says
 * so. Its storage stays tagged with the seqno it would have had, which the
 * next job takes (see vmgpu_queue_submit_through()); the storage it was to
 * write is marked lost, which maps report.
 *
 * The recycle cache is trimmed here too: a queue in use submits often.
 *
 * Return: 0, or -errno from the cache sync or the submission.
 */
int vmgpu_queue_flush_locked(vmgpu_queue *q)
{
	uint64_t seqno = q->submitted + 1, got = 0;
	struct vmgpu_sync out = { .syncobj = q->syncobj, .point = seqno };
	uint32_t i;
	int ret;

	if (!q->num_cmds) {
		vmgpu_storage_trim(q, false);
		return 0;
	}
	if (q->debug & VMGPU_QUEUE_DEBUG_FAIL_SUBMIT) {
		q->debug &= ~VMGPU_QUEUE_DEBUG_FAIL_SUBMIT;
		ret = -EIO;
	} else {
		ret = vmgpu_queue_sync_to_device(q);
	}
	if (!ret)
		ret = vmgpu_context_submit(q->ctx, q->cmds, q->num_cmds, NULL, 0, &out, 1, &got);
	if (!ret) {
		q->stats.submissions++;
		/* Someone else submitted on the context: tracking is off. */
		if (got != seqno)
			ret = -EPROTO;
		q->submitted = got;
	} else {
		/* What it was to write is not there: maps say so. */
		for (i = 0; i < q->num_listed; i++)
			if (q->listed[i]->last_write == seqno)
				q->listed[i]->lost = ret;
	}
	vmgpu_queue_end_batch(q, seqno);
	vmgpu_storage_trim(q, false);
	return ret;
}

/**
 * vmgpu_queue_submit_through() - make sure job seqno is submitted
 * @q: the queue
 * @seqno: a tag of some storage: at most the recorded batch's seqno
 *
 * Submits the recorded batch if it is that job. If that batch was dropped
 * (its submission failed), a NOP job takes the seqno, so that the tags
 * complete, or the error repeats (a guilty context) and is returned.
 *
 * Return: 0 or the submission's -errno.
 */
int vmgpu_queue_submit_through(vmgpu_queue *q, uint64_t seqno)
{
	if (seqno <= q->submitted)
		return 0;
	if (!q->num_cmds)
		q->cmds[q->num_cmds++] = (union vmgpu_cmd){ .nop.hdr.opcode = VMGPU_OP_NOP };
	return vmgpu_queue_flush_locked(q);
}

/*
 * The flusher thread: submits through the seqno DO_NOT_WAIT asked for,
 * under the queue lock like any flush.
 */
static void *vmgpu_queue_flusher(void *arg)
{
	vmgpu_queue *q = arg;
	uint64_t seqno, before;
	int ret;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		__atomic_store_n(&q->flusher_parked, true, __ATOMIC_RELEASE);
		while (!q->flush_through && !q->flusher_stop)
			pthread_cond_wait(&q->flush_wake, &q->lock);
		if (q->flusher_stop)
			break;
		seqno = q->flush_through;
		q->flush_through = 0;
		if (q->debug & VMGPU_QUEUE_DEBUG_SLOW_FLUSHER)
			usleep(VMGPU_SLOW_FLUSHER_US);
		before = q->stats.submissions;
		ret = vmgpu_queue_submit_through(q, seqno);
		q->stats.async_submissions += q->stats.submissions - before;
		if (ret)
			q->async_error = ret;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* Application signals are the application's threads' business. */
static int vmgpu_queue_start_flusher(vmgpu_queue *q)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&q->flusher, NULL, vmgpu_queue_flusher, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return ret;
	/*
	 * Once it waits for work it holds the queue lock only to submit: a
	 * DO_NOT_WAIT map's trylock must not fail on the thread's start.
	 * Taking the lock after it is parked means its wait released it.
	 */
	while (!__atomic_load_n(&q->flusher_parked, __ATOMIC_ACQUIRE))
		sched_yield();
	pthread_mutex_lock(&q->lock);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

static void vmgpu_queue_stop_flusher(vmgpu_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->flusher_stop = true;
	pthread_cond_signal(&q->flush_wake);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->flusher, NULL);
}

/* A submission of the flusher's that failed, reported once. */
static int vmgpu_queue_take_async_error(vmgpu_queue *q)
{
	int ret = q->async_error;

	q->async_error = 0;
	return ret;
}

/**
 * vmgpu_queue_submit_async() - have job seqno submitted, without blocking
 * @q: the queue, locked
 * @seqno: a tag of some storage: at most the recorded batch's seqno
 *
 * Return: 0 once the flusher is asked (or nothing is left to submit), or
 * the -errno of a submission of the flusher's that failed earlier.
 */
int vmgpu_queue_submit_async(vmgpu_queue *q, uint64_t seqno)
{
	int ret = vmgpu_queue_take_async_error(q);

	if (ret)
		return ret;
	if (seqno <= q->submitted)
		return 0;
	if (seqno > q->flush_through)
		q->flush_through = seqno;
	pthread_cond_signal(&q->flush_wake);
	return 0;
}

/**
 * vmgpu_queue_wait_locked() - wait without polling until job seqno completed
 * @q: the queue; its lock is dropped during the sleep
 * @seqno: the job; submitted first if it is not yet
 * @timeout_ns: relative
 *
 * Return: 0, -ETIME, or the submission's -errno.
 */
int vmgpu_queue_wait_locked(vmgpu_queue *q, uint64_t seqno, uint64_t timeout_ns)
{
	uint64_t now, deadline;
	int ret;

	if (seqno <= vmgpu_queue_completed(q))
		return 0;
	ret = vmgpu_queue_submit_through(q, seqno);
	if (ret)
		return ret;
	/* The kernel takes a signed absolute time: saturate. */
	now = vmgpu_now_ns();
	deadline = timeout_ns > (uint64_t)INT64_MAX - now ? (uint64_t)INT64_MAX :
							    now + timeout_ns;
	q->stats.kernel_waits++;
	pthread_mutex_unlock(&q->lock);
	ret = vmgpu_syncobj_wait(q->dev, q->syncobj, seqno, deadline);
	pthread_mutex_lock(&q->lock);
	if (!ret && seqno > q->waited)
		q->waited = seqno;
	return ret;
}

static int vmgpu_queue_budget(const struct vmgpu_queue_info *info, uint64_t aperture_size,
			      uint64_t *flush, uint64_t *wait)
{
	*flush = info->rename_flush_bytes ?: aperture_size / 16;
	*wait = info->rename_wait_bytes ?: aperture_size / 4;
	if (info->rename_flush_bytes && info->rename_wait_bytes)
		return *wait < *flush ? -EINVAL : 0;
	/* One of them given: keep the other consistent with it. */
	if (*wait < *flush) {
		if (info->rename_flush_bytes)
			*wait = *flush;
		else
			*flush = *wait;
	}
	return 0;
}

/* The aperture segment's id and size, and whether the device snoops. */
static int vmgpu_queue_query(vmgpu_queue *q, uint64_t *aperture_size)
{
	struct drm_vmgpu_query_segments *segs;
	struct drm_vmgpu_query_device info;
	int ret;

	ret = vmgpu_query_device(q->dev, &info);
	if (ret)
		return ret;
	q->noncoherent = info.flags & DRM_VMGPU_DEVICE_NONCOHERENT;
	ret = vmgpu_query_segments(q->dev, &segs);
	if (ret)
		return ret;
	/* Listed by id from 0, the system segment: the id is the index. */
	q->aperture = vmgpu_aperture_segment_id(segs);
	if (q->aperture)
		*aperture_size = segs->segments[q->aperture].size;
	free(segs);
	return q->aperture ? 0 : -ENODEV;
}

int vmgpu_queue_create(vmgpu_device *dev, const struct vmgpu_queue_info *info,
		       vmgpu_queue **out)
{
	uint64_t aperture_size = 0;
	uint32_t window;
	vmgpu_queue *q;
	int ret;

	if (!info || info->flags || (info->engine != DRM_VMGPU_ENGINE_GPU_VA0 &&
				     info->engine != DRM_VMGPU_ENGINE_GPU_VA1))
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->dev = dev;
	q->cmds = calloc(DRM_VMGPU_EXEC_MAX_CMDS, sizeof(*q->cmds));
	ret = q->cmds ? vmgpu_queue_query(q, &aperture_size) : -ENOMEM;
	if (!ret)
		ret = vmgpu_queue_budget(info, aperture_size, &q->flush_bytes, &q->wait_bytes);
	if (ret)
		goto err_free;
	window = __atomic_fetch_add(&dev->va_windows, 1, __ATOMIC_RELAXED);
	q->va_next = VMGPU_VA_WINDOW_BASE + (uint64_t)window * VMGPU_VA_WINDOW_SIZE;
	q->va_end = q->va_next + VMGPU_VA_WINDOW_SIZE;
	if (q->va_end > 1ull << DRM_VMGPU_VA_BITS) {
		ret = -ENOSPC;
		goto err_free;
	}
	ret = vmgpu_context_create(dev, info->engine, &q->ctx);
	if (ret)
		goto err_free;
	ret = vmgpu_syncobj_create(dev, &q->syncobj);
	if (ret) {
		vmgpu_context_unref(q->ctx);
		goto err_free;
	}
	q->expiry_ns = info->recycle_expiry_ns ?: VMGPU_DEFAULT_EXPIRY_NS;
	q->batch_gen = 1;	/* storage starts with batch 0: never listed */
	/* A device line is a page: slices never share one when it matters. */
	q->slice_min_shift = q->noncoherent ? VMGPU_PAGE_SHIFT : VMGPU_SLICE_MIN_SHIFT;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->flush_wake, NULL);
	ret = vmgpu_queue_start_flusher(q);
	if (ret) {
		pthread_cond_destroy(&q->flush_wake);
		pthread_mutex_destroy(&q->lock);
		vmgpu_syncobj_destroy(dev, q->syncobj);
		vmgpu_context_unref(q->ctx);
		goto err_free;
	}
	q->refcount = 1;
	vmgpu_device_ref(dev);
	*out = q;
	return 0;

err_free:
	free(q->cmds);
	free(q);
	return ret;
}

vmgpu_queue *vmgpu_queue_ref(vmgpu_queue *q)
{
	__atomic_add_fetch(&q->refcount, 1, __ATOMIC_RELAXED);
	return q;
}

void vmgpu_queue_unref(vmgpu_queue *q)
{
	if (!q || __atomic_sub_fetch(&q->refcount, 1, __ATOMIC_ACQ_REL))
		return;
	vmgpu_queue_stop_flusher(q);
	pthread_mutex_lock(&q->lock);
	/* A failure leaves nothing to wait for: teardown is the same. */
	vmgpu_queue_flush_locked(q);
	vmgpu_storage_teardown(q);
	pthread_mutex_unlock(&q->lock);
	vmgpu_syncobj_destroy(q->dev, q->syncobj);
	vmgpu_context_unref(q->ctx);
	pthread_cond_destroy(&q->flush_wake);
	pthread_mutex_destroy(&q->lock);
	vmgpu_device_unref(q->dev);
	free(q->destroy_after_flush);
	free(q->listed);
	free(q->cmds);
	free(q);
}

int vmgpu_queue_flush(vmgpu_queue *q)
{
	int ret;

	pthread_mutex_lock(&q->lock);
	ret = vmgpu_queue_flush_locked(q);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int vmgpu_queue_finish(vmgpu_queue *q, uint64_t timeout_ns)
{
	int ret, wait_ret;

	pthread_mutex_lock(&q->lock);
	ret = vmgpu_queue_flush_locked(q);
	/* What was submitted before a failed flush is still waited for. */
	wait_ret = vmgpu_queue_wait_locked(q, q->submitted, timeout_ns);
	if (!wait_ret)
		vmgpu_storage_reap(q);
	/* A batch the flusher could not submit never ran. */
	if (!ret && !wait_ret)
		ret = vmgpu_queue_take_async_error(q);
	pthread_mutex_unlock(&q->lock);
	return ret ?: wait_ret;
}

void vmgpu_queue_stats(vmgpu_queue *q, struct vmgpu_queue_stats *out)
{
	pthread_mutex_lock(&q->lock);
	*out = q->stats;
	pthread_mutex_unlock(&q->lock);
}

void vmgpu_queue_set_debug(vmgpu_queue *q, uint32_t flags)
{
	pthread_mutex_lock(&q->lock);
	q->debug = flags;
	pthread_mutex_unlock(&q->lock);
}

/*
 * Room for one more command, and for the two storages it may list (in both
 * arrays), before anything is tagged: a command is recorded whole or not
 * at all. A full batch is submitted.
 */
static int vmgpu_queue_reserve(vmgpu_queue *q)
{
	struct vmgpu_storage **listed, **destroy;
	uint32_t max;

	if (q->num_listed + 2 > q->max_listed) {
		max = q->max_listed ? 2 * q->max_listed : 64;
		listed = realloc(q->listed, max * sizeof(*listed));
		if (!listed)
			return -ENOMEM;
		q->listed = listed;
		destroy = realloc(q->destroy_after_flush, max * sizeof(*destroy));
		if (!destroy)
			return -ENOMEM;
		q->destroy_after_flush = destroy;
		q->max_listed = max;
	}
	return q->num_cmds < DRM_VMGPU_EXEC_MAX_CMDS ? 0 : vmgpu_queue_flush_locked(q);
}

/* The batch uses [start, end) of the buffer's storage; room reserved. */
static void vmgpu_queue_use(vmgpu_queue *q, vmgpu_buffer *buf, uint64_t start,
			    uint64_t end, bool write)
{
	struct vmgpu_storage *s = buf->storage;
	uint64_t pending = q->submitted + 1;

	if (s->batch != q->batch_gen) {
		q->listed[q->num_listed++] = s;
		s->batch = q->batch_gen;
	}
	if (!write) {
		s->last_read = pending;
		vmgpu_range_add(&s->gpu_read, start, end);
		return;
	}
	s->last_write = pending;
	vmgpu_range_add(&s->valid, start, end);
	if (q->noncoherent)
		vmgpu_range_add(&s->gpu_dirty, start, end);
}

/* A buffer commands may use: this queue's, not mapped, range inside. */
static int vmgpu_queue_check(vmgpu_queue *q, const vmgpu_buffer *buf, uint64_t offset,
			     uint64_t size)
{
	if (!buf || buf->q != q || !vmgpu_buffer_range_ok(buf, offset, size))
		return -EINVAL;
	return buf->map_mode ? -EBUSY : 0;
}

static struct vmgpu_addr vmgpu_va_addr(uint64_t va)
{
	return (struct vmgpu_addr){ .addr = va, .space = VMGPU_SPACE_VIRTUAL };
}

int vmgpu_queue_fill(vmgpu_queue *q, vmgpu_buffer *dst, uint64_t offset,
		     uint64_t size, uint32_t pattern)
{
	union vmgpu_cmd *cmd;
	int ret;

	ret = vmgpu_queue_check(q, dst, offset, size);
	if (ret || offset % 4 || size % 4)
		return ret ?: -EINVAL;
	pthread_mutex_lock(&q->lock);
	ret = vmgpu_queue_reserve(q);
	if (!ret) {
		vmgpu_queue_use(q, dst, offset, offset + size, true);
		cmd = &q->cmds[q->num_cmds++];
		*cmd = (union vmgpu_cmd){ 0 };
		cmd->fill.hdr.opcode = VMGPU_OP_FILL;
		cmd->fill.dst = vmgpu_va_addr(vmgpu_storage_va(dst->storage) + offset);
		cmd->fill.size = size;
		cmd->fill.pattern = pattern;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int vmgpu_queue_copy(vmgpu_queue *q, vmgpu_buffer *dst, uint64_t dst_offset,
		     vmgpu_buffer *src, uint64_t src_offset, uint64_t size)
{
	union vmgpu_cmd *cmd;
	int ret;

	ret = vmgpu_queue_check(q, dst, dst_offset, size) ?:
	      vmgpu_queue_check(q, src, src_offset, size);
	if (ret)
		return ret;
	pthread_mutex_lock(&q->lock);
	ret = vmgpu_queue_reserve(q);
	if (!ret) {
		vmgpu_queue_use(q, src, src_offset, src_offset + size, false);
		vmgpu_queue_use(q, dst, dst_offset, dst_offset + size, true);
		cmd = &q->cmds[q->num_cmds++];
		*cmd = (union vmgpu_cmd){ 0 };
		cmd->transfer.hdr.opcode = VMGPU_OP_TRANSFER;
		cmd->transfer.src = vmgpu_va_addr(vmgpu_storage_va(src->storage) + src_offset);
		cmd->transfer.dst = vmgpu_va_addr(vmgpu_storage_va(dst->storage) + dst_offset);
		cmd->transfer.size = size;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int vmgpu_queue_wait_value(vmgpu_queue *q, vmgpu_buffer *buf, uint64_t offset,
			   uint64_t value)
{
	union vmgpu_cmd *cmd;
	int ret;

	ret = vmgpu_queue_check(q, buf, offset, sizeof(uint64_t));
	if (ret || offset % sizeof(uint64_t))
		return ret ?: -EINVAL;
	pthread_mutex_lock(&q->lock);
	ret = vmgpu_queue_reserve(q);
	if (!ret) {
		vmgpu_queue_use(q, buf, offset, offset + sizeof(uint64_t), false);
		cmd = &q->cmds[q->num_cmds++];
		*cmd = (union vmgpu_cmd){ 0 };
		cmd->wait.hdr.opcode = VMGPU_OP_WAIT;
		cmd->wait.addr = vmgpu_va_addr(vmgpu_storage_va(buf->storage) + offset);
		cmd->wait.value = value;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

int vmgpu_queue_delay(vmgpu_queue *q, uint32_t delay_us)
{
	union vmgpu_cmd *cmd;
	int ret;

	if (delay_us > 1000000)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	ret = vmgpu_queue_reserve(q);
	if (!ret) {
		cmd = &q->cmds[q->num_cmds++];
		*cmd = (union vmgpu_cmd){ 0 };
		cmd->nop.hdr.opcode = VMGPU_OP_NOP;
		cmd->nop.delay_us = delay_us;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}
