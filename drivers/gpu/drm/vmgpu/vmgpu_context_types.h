/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_CONTEXT_TYPES_H_
#define _VMGPU_CONTEXT_TYPES_H_

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include <drm/drm_gem.h>
#include <drm/gpu_scheduler.h>

#include "hw/vmgpu_hw.h"

struct vmgpu_device;
struct vmgpu_ring;
struct vmgpu_stats;
struct vmgpu_vm;

/**
 * struct vmgpu_seqno_page - a context's monitored fence: one page of
 * system memory the kernel writes and the UMD maps read-only
 */
struct vmgpu_seqno_page {
	/** @base: a GEM object, only so that it has an mmap offset. */
	struct drm_gem_object base;
	/** @page: the page. */
	struct page *page;
	/** @seqno: the page's first word, the last completed seqno. */
	u64 *seqno;
};

/**
 * struct vmgpu_context - a queue of user jobs on one engine
 */
struct vmgpu_context {
	/** @ref: the file's table and every job hold one. */
	struct kref ref;
	/** @id: the handle in the file's table. */
	u32 id;
	/** @ring: the engine. */
	struct vmgpu_ring *ring;
	/**
	 * @vm: the GPU VA space its commands use, a reference; NULL on the
	 * physical engine.
	 */
	struct vmgpu_vm *vm;
	/** @entity: its queue on the engine's scheduler. */
	struct drm_sched_entity entity;
	/**
	 * @guilty: one of its jobs failed on the device or hung: the
	 * scheduler cancels what is queued, new submissions are refused.
	 */
	atomic_t guilty;
	/** @seqno_page: its monitored fence. */
	struct vmgpu_seqno_page *seqno_page;
	/** @busy_ns: time its jobs kept the engine busy. */
	atomic64_t busy_ns;
	/** @submit_lock: EXEC pushes under it; destruction takes it once. */
	struct mutex submit_lock;
	/** @destroyed: the entity is gone, EXEC fails. Under @submit_lock. */
	bool destroyed;
	/**
	 * @drm: the DRM device, a reference: the jobs the scheduler kills when
	 * the file goes may be freed after the device was removed.
	 */
	struct drm_device *drm;
	/** @release_work: frees it on the module's queue (vmgpu_queue_release()). */
	struct work_struct release_work;
};

/**
 * struct vmgpu_file - what one open DRM file owns
 */
struct vmgpu_file {
	/** @vdev: the device. */
	struct vmgpu_device *vdev;
	/** @lock: protects the creation of @vm. */
	struct mutex lock;
	/** @vm: the file's GPU VA space, made on first use. */
	struct vmgpu_vm *vm;
	/** @contexts: context id to &struct vmgpu_context. */
	struct xarray contexts;
	/**
	 * @retired_busy_ns: busy time of destroyed contexts, by user engine;
	 * under @lock.
	 */
	u64 retired_busy_ns[VMGPU_MAX_RINGS];
	/** @stats: what the memory manager did to the file's allocations. */
	struct vmgpu_stats *stats;
};

#endif
