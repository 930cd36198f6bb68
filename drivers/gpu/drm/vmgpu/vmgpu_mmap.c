// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/delay.h>
#include <linux/dma-resv.h>
#include <linux/io.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem_ttm_helper.h>
#include <drm/drm_vma_manager.h>
#include <drm/ttm/ttm_bo.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_device.h"
#include "vmgpu_hap.h"
#include "vmgpu_prime.h"
#include "vmgpu_swizzle.h"
#include "vmgpu_mmap.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: CPU mappings
 *
 * How the CPU reaches an allocation's pages, and the rules every way in
 * enforces itself (seed "Allocation usage tracking", Lock2):
 *
 * - Only allocations created with %DRM_VMGPU_ALLOC_CPU_ACCESS can be
 *   mapped at any time, whether through the DRM file's mmap or the mmap of
 *   a dma-buf they were exported to: the check is in the GEM object's
 *   mmap, which both reach. Others only while locked, in system memory
 *   (seed "Lock2"): their faults check it, and the unlock revokes the
 *   mapping.
 * - One fault handler serves VRAM the BAR reaches, VRAM beyond it
 *   (through the CPU host aperture, vmgpu_hap.c) and system pages, and
 *   decides under the reservation: an allocation beyond the BAR is given
 *   host-aperture pages, or, if there is no room, moved to system memory
 *   first (as amdgpu moves one into visible VRAM).
 * - Every access waits for the allocation's kernel fences (clears and
 *   moves) first: page faults, and ptrace-style access (/proc/<pid>/mem,
 *   debuggers) through the mapping's .access. A fault that may be retried
 *   waits without the mmap lock, as TTM's does, so that the process's
 *   mmap() and munmap() do not queue behind the paging ring. A paging
 *   operation that failed is dealt with before the CPU sees anything (see
 *   vmgpu_bo_needs_scrub()): the backing is cleared again, up to three
 *   times, each clear waited for and checked; if data was lost, or the
 *   third clear fails too, the access fails (SIGBUS for a fault, -EIO
 *   otherwise).
 * - All mappings live in the DRM device's address space (DRM points an
 *   exported dma-buf's file at it too), so that moving an allocation, and
 *   unplugging the device, revoke every one of them. After unplug a fault
 *   maps a dummy page.
 * - A fault that cannot make the allocation reachable raises SIGBUS:
 *   contents lost (above), or a move it needs that TTM cannot make room
 *   for. A swizzled allocation evicted swizzled must be paged into a
 *   memory segment first (seed "Locking swizzled allocations", case 2),
 *   and one beyond the BAR with no host-aperture room moves to system
 *   memory. The fault first holds only the allocation's reservation, so
 *   TTM evicts only what it can trylock; if that finds no room it tries
 *   again under a ww ticket, with which TTM's eviction waits for
 *   allocations that concurrent work holds (vmgpu_bo_cpu_reach_ticketed()),
 *   without the mmap lock when the fault may be retried. SIGBUS then means
 *   that after a thousand tries, a second or two of backing off besides
 *   the waits, nothing the move could evict was evictable (pinned:
 *   scanout, kernel mappings), not that it was busy once.
 *
 * - The kernel's own mappings (vmap: fbdev emulation's blits, a dma-buf's
 *   vmap) follow the same rules: CPU-access allocations only, reached
 *   and prepared as for a fault. The allocation is pinned while mapped,
 *   and keeps its host-aperture pages (vmgpu_hap_steal() passes pinned
 *   holders over), so the mapping stays valid without the reservation.
 *   After unplug it fails with -ENODEV.
 *
 * The driver offers no dma-buf attachment, so there is no other CPU path
 * to an allocation's pages. An import's pages are its exporter's, and so
 * is its CPU mapping (DOC: PRIME import).
 */

/* How often a failed clear is redone before the access gives up. */
#define VMGPU_CPU_ACCESS_TRIES	3

/**
 * vmgpu_bo_settle() - wait for the kernel's work on a backing, and repair it
 * @vbo: the allocation, reserved
 * @intr: wait interruptibly
 *
 * Waits for its clears and moves, and clears again what any that failed
 * left (see vmgpu_bo_needs_scrub()): from then on the backing holds
 * nothing of an earlier owner. The display calls it before a cursor is
 * shown: an async cursor update waits for no fence.
 *
 * Return: 0; -EIO if it cannot be cleared; -EINTR or -ERESTARTSYS if
 * interrupted; -ENOMEM.
 */
int vmgpu_bo_settle(struct vmgpu_bo *vbo, bool intr)
{
	struct dma_resv *resv = vbo->tbo.base.resv;
	int tries, ret;
	long lret;

	dma_resv_assert_held(resv);
	for (tries = 0; ; tries++) {
		lret = dma_resv_wait_timeout(resv, DMA_RESV_USAGE_KERNEL, intr,
					     MAX_SCHEDULE_TIMEOUT);
		if (lret < 0)
			return lret;
		if (!vmgpu_bo_needs_scrub(vbo))
			return 0;
		if (tries == VMGPU_CPU_ACCESS_TRIES)
			return -EIO;
		ret = vmgpu_bo_scrub(vbo);
		if (ret && ret != -EAGAIN)
			return ret;
	}
}

/**
 * vmgpu_bo_settle_queued() - repair a backing, leaving the waits to the caller
 * @vbo: the allocation, reserved
 * @last: set to a reference to the last paging operation on the backing,
 *	  if there is one that was not looked at yet, else NULL
 *
 * vmgpu_bo_settle() for a user that waits for the allocation's kernel
 * fences itself (a display commit): a failed paging operation already seen
 * is cleared again, queued; one still to finish is handed over in @last,
 * and the caller must not show the backing if it fails. Only a backing
 * that needs clearing after work still queued on it is waited for.
 *
 * Return: 0; -EIO if it cannot be cleared; -EINTR or -ERESTARTSYS if
 * interrupted; -ENOMEM.
 */
int vmgpu_bo_settle_queued(struct vmgpu_bo *vbo, struct dma_fence **last)
{
	int ret;

	*last = NULL;
	if (vmgpu_bo_needs_scrub(vbo)) {
		ret = vbo->paging_fence ||
		      !dma_resv_test_signaled(vbo->tbo.base.resv, DMA_RESV_USAGE_KERNEL) ?
		      vmgpu_bo_settle(vbo, true) : vmgpu_bo_scrub(vbo);
		if (ret && ret != -EAGAIN)
			return ret;
	}
	*last = dma_fence_get(vbo->paging_fence);
	return 0;
}

/**
 * vmgpu_bo_prepare_access() - make an allocation's backing safe to read
 * @vbo: the allocation, reserved
 * @intr: wait interruptibly
 *
 * vmgpu_bo_settle(), for the CPU (mappings, ptrace) and for GPU VA
 * mappings alike: from then on userspace may have written it.
 *
 * Return: 0; -EIO if its contents were lost or cannot be cleared; -EINTR
 * or -ERESTARTSYS if interrupted; -ENOMEM.
 */
int vmgpu_bo_prepare_access(struct vmgpu_bo *vbo, bool intr)
{
	int ret = vmgpu_bo_settle(vbo, intr);

	if (ret)
		return ret;
	if (vbo->contents_lost)
		return -EIO;
	vbo->has_contents = true;
	return 0;
}

/**
 * vmgpu_bo_cpu_reach() - make an allocation reachable by the CPU
 * @vbo: the allocation, reserved
 * @may_move: if the host aperture cannot take it, move it to system memory
 *
 * Pages beyond the VRAM BAR get host-aperture pages (vmgpu_hap_map()),
 * taking them back from unlocked allocations if needed; a swizzled
 * allocation gets a linear view (vmgpu_swizzle_cpu_reach()). The move, if
 * there is one, is queued: vmgpu_bo_prepare_access() waits for it.
 *
 * Return: 0; -ENOSPC if it needs moving and @may_move is false; -EACCES
 * for an allocation without CPU access outside a lock; another errno.
 */
int vmgpu_bo_cpu_reach(struct vmgpu_bo *vbo, bool may_move)
{
	int ret;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS))
		return vbo->locked_by && !vmgpu_bo_in_memory_segment(vbo) ? 0 : -EACCES;
	if (vbo->flags & DRM_VMGPU_ALLOC_SWIZZLED)
		return vmgpu_swizzle_cpu_reach(vbo, may_move);
	if (!vbo->hap_slots &&
	    !vmgpu_hap_res_invisible(vmgpu_bo_device(vbo), vbo->tbo.resource))
		return 0;
	ret = vmgpu_hap_map(vbo);
	if (ret != -ENOSPC || !may_move)
		return ret;
	return vmgpu_bo_move_to_system(vbo);
}

/*
 * TTM found no room (ttm_bo_validate() says so with -ENOMEM, for old
 * userspace's sake); with trylocks only, that may be contention.
 */
static bool vmgpu_bo_reach_contended(int err)
{
	return err == -ENOSPC || err == -EBUSY || err == -ENOMEM;
}

/*
 * How many times a fault backs off (1-2 ms each) before it gives up on
 * making room: waits for held allocations do not count.
 */
#define VMGPU_FAULT_ROOM_BACKOFFS	1000

/*
 * vmgpu_bo_cpu_reach() under a ww ticket, for a caller whose trylocking
 * attempt found no room: TTM's eviction then waits for the allocations
 * concurrent work holds (its ticketed LRU walk) instead of passing over
 * them. A new ticket is the youngest and loses at once to an older
 * holder (-EDEADLK, which TTM reports as no room), and TTM does not say
 * which lock that was, so each try takes a new ticket after a short sleep,
 * VMGPU_FAULT_ROOM_BACKOFFS times at most. The move, if any, is queued;
 * the caller reserves the allocation again and finds it reachable.
 */
static int vmgpu_bo_cpu_reach_ticketed(struct vmgpu_bo *vbo)
{
	struct dma_resv *resv = vbo->tbo.base.resv;
	struct ww_acquire_ctx ticket;
	int ret, backoffs;

	for (backoffs = 0; ; backoffs++) {
		ww_acquire_init(&ticket, &reservation_ww_class);
		ret = dma_resv_lock_interruptible(resv, &ticket);
		if (!ret) {
			ret = vmgpu_bo_cpu_reach(vbo, true);
			dma_resv_unlock(resv);
		}
		ww_acquire_fini(&ticket);
		if (!vmgpu_bo_reach_contended(ret) || backoffs == VMGPU_FAULT_ROOM_BACKOFFS)
			return ret;
		if (fatal_signal_pending(current))
			return -EINTR;
		usleep_range(1000, 2000);
	}
}

/*
 * The fault's move found no room with trylocks. Try under a ticket: when
 * the fault may be retried, without the fault's lock (as
 * ttm_bo_vm_reserve() waits for a reservation), then fault again. SIGBUS
 * only when a fault that may not drop its lock still finds no room.
 */
static vm_fault_t vmgpu_bo_vm_fault_make_room(struct vm_fault *vmf, struct vmgpu_bo *vbo)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	int err;

	if (fault_flag_allow_retry_first(vmf->flags)) {
		if (!(vmf->flags & FAULT_FLAG_RETRY_NOWAIT)) {
			ttm_bo_get(&vbo->tbo);
			release_fault_lock(vmf);
			vmgpu_bo_cpu_reach_ticketed(vbo);
			/* The move it queued, still without the fault's lock. */
			dma_resv_wait_timeout(vbo->tbo.base.resv, DMA_RESV_USAGE_KERNEL, true,
					      MAX_SCHEDULE_TIMEOUT);
			/* Possibly the last reference: &vmgpu_device.unplug_sem. */
			down_read(&vdev->unplug_sem);
			ttm_bo_put(&vbo->tbo);
			up_read(&vdev->unplug_sem);
		}
		return VM_FAULT_RETRY;
	}
	err = vmgpu_bo_cpu_reach_ticketed(vbo);
	/* Unplugged meanwhile: the next fault maps the dummy page. */
	if (!err || err == -EINTR || err == -ERESTARTSYS || err == -ENODEV)
		return VM_FAULT_NOPAGE;
	/* Nothing it could evict, even waiting: as amdgpu's fault does. */
	return VM_FAULT_SIGBUS;
}

/*
 * The kernel's work on the backing (a move, a clear) has not finished:
 * wait for it without the fault's lock, as TTM's own fault does, and
 * fault again; mmap() and munmap() of the process need not wait behind a
 * paging queue. Returns 0 if there is nothing to wait for, or the fault
 * may not be retried; else VM_FAULT_RETRY, with the reservation dropped
 * unless FAULT_FLAG_RETRY_NOWAIT.
 */
static vm_fault_t vmgpu_bo_vm_fault_idle(struct vm_fault *vmf, struct vmgpu_bo *vbo)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	struct dma_resv *resv = vbo->tbo.base.resv;

	if (dma_resv_test_signaled(resv, DMA_RESV_USAGE_KERNEL) ||
	    !fault_flag_allow_retry_first(vmf->flags))
		return 0;
	if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
		return VM_FAULT_RETRY;
	ttm_bo_get(&vbo->tbo);
	release_fault_lock(vmf);
	dma_resv_wait_timeout(resv, DMA_RESV_USAGE_KERNEL, true, MAX_SCHEDULE_TIMEOUT);
	dma_resv_unlock(resv);
	/* Possibly the last reference: &vmgpu_device.unplug_sem. */
	down_read(&vdev->unplug_sem);
	ttm_bo_put(&vbo->tbo);
	up_read(&vdev->unplug_sem);
	return VM_FAULT_RETRY;
}

static vm_fault_t vmgpu_bo_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct ttm_buffer_object *tbo = vma->vm_private_data;
	vm_fault_t ret;
	int idx, err;

	ret = ttm_bo_vm_reserve(tbo, vmf);
	if (ret)
		return ret;
	if (!drm_dev_enter(tbo->base.dev, &idx)) {
		ret = ttm_bo_vm_dummy_page(vmf, vma->vm_page_prot);
		goto unlock;
	}
	err = vmgpu_bo_cpu_reach(to_vmgpu_bo(tbo), true);
	if (vmgpu_bo_reach_contended(err)) {
		dma_resv_unlock(tbo->base.resv);
		ret = vmgpu_bo_vm_fault_make_room(vmf, to_vmgpu_bo(tbo));
		drm_dev_exit(idx);
		return ret;
	}
	if (!err) {
		ret = vmgpu_bo_vm_fault_idle(vmf, to_vmgpu_bo(tbo));
		if (ret)
			goto exit;
		err = vmgpu_bo_prepare_access(to_vmgpu_bo(tbo), true);
	}
	if (err == -EINTR || err == -ERESTARTSYS)
		ret = VM_FAULT_NOPAGE;
	else if (err == -ENOMEM)
		ret = VM_FAULT_OOM;
	else if (err)
		ret = VM_FAULT_SIGBUS;
	else
		ret = ttm_bo_vm_fault_reserved(vmf, vma->vm_page_prot,
					       TTM_BO_VM_NUM_PREFAULT);
exit:
	drm_dev_exit(idx);
	/* ttm_bo_vm_fault_reserved() dropped the reservation for a retry. */
	if (ret == VM_FAULT_RETRY && !(vmf->flags & FAULT_FLAG_RETRY_NOWAIT))
		return ret;
unlock:
	dma_resv_unlock(tbo->base.resv);
	return ret;
}

/* Copy up to the end of one page of the allocation. */
static int vmgpu_bo_access_page(struct vmgpu_bo *vbo, unsigned long page,
				unsigned long offset, void *buf, int len, int write)
{
	struct ttm_buffer_object *tbo = &vbo->tbo;
	struct ttm_bo_kmap_obj map;
	void __iomem *io;
	bool is_iomem;
	void *ptr;
	int ret;

	if (tbo->resource->mem_type == TTM_PL_SYSTEM || tbo->resource->mem_type == TTM_PL_TT) {
		ret = ttm_bo_kmap(tbo, page, 1, &map);
		if (ret)
			return ret;
		ptr = ttm_kmap_obj_virtual(&map, &is_iomem) + offset;
		if (write)
			memcpy(ptr, buf, len);
		else
			memcpy(buf, ptr, len);
		ttm_bo_kunmap(&map);
		return 0;
	}

	io = ioremap_wc((resource_size_t)vmgpu_hap_pfn(vbo, page) << PAGE_SHIFT, PAGE_SIZE);
	if (!io)
		return -ENOMEM;
	if (write)
		memcpy_toio(io + offset, buf, len);
	else
		memcpy_fromio(buf, io + offset, len);
	iounmap(io);
	return 0;
}

/*
 * ptrace-style access. TTM's ttm_bo_vm_access() neither waits for the move
 * fences nor reaches VRAM that is not contiguous, so this is vmgpu's own.
 */
static int vmgpu_bo_vm_access(struct vm_area_struct *vma, unsigned long addr,
			      void *buf, int len, int write)
{
	struct ttm_buffer_object *tbo = vma->vm_private_data;
	unsigned long offset = addr - vma->vm_start +
		((vma->vm_pgoff - drm_vma_node_start(&tbo->base.vma_node)) << PAGE_SHIFT);
	int done = 0, idx, ret;

	if (len < 1 || offset + len > tbo->base.size)
		return -EIO;
	if (!drm_dev_enter(tbo->base.dev, &idx))
		return -ENODEV;
	ret = ttm_bo_reserve(tbo, true, false, NULL);
	if (ret)
		goto exit;
	ret = vmgpu_bo_cpu_reach(to_vmgpu_bo(tbo), true);
	if (vmgpu_bo_reach_contended(ret)) {
		ttm_bo_unreserve(tbo);
		ret = vmgpu_bo_cpu_reach_ticketed(to_vmgpu_bo(tbo)) ?:
		      ttm_bo_reserve(tbo, true, false, NULL);
		if (ret)
			goto exit;
		ret = vmgpu_bo_cpu_reach(to_vmgpu_bo(tbo), true);
	}
	if (!ret)
		ret = vmgpu_bo_prepare_access(to_vmgpu_bo(tbo), true);
	while (!ret && done < len) {
		unsigned long in_page = (offset + done) & ~PAGE_MASK;
		int chunk = min_t(unsigned long, len - done, PAGE_SIZE - in_page);

		ret = vmgpu_bo_access_page(to_vmgpu_bo(tbo), (offset + done) >> PAGE_SHIFT,
					   in_page, buf + done, chunk, write);
		done += chunk;
	}
	ttm_bo_unreserve(tbo);
exit:
	drm_dev_exit(idx);
	return ret ?: len;
}

/*
 * A mapping holds a TTM reference of its own: its close may be the first
 * release of the allocation (see &vmgpu_device.unplug_sem).
 */
static void vmgpu_bo_vm_close(struct vm_area_struct *vma)
{
	struct ttm_buffer_object *tbo = vma->vm_private_data;
	struct vmgpu_device *vdev = vmgpu_tbo_device(tbo);

	down_read(&vdev->unplug_sem);
	ttm_bo_vm_close(vma);
	up_read(&vdev->unplug_sem);
}

static const struct vm_operations_struct vmgpu_bo_vm_ops = {
	.fault = vmgpu_bo_vm_fault,
	.open = ttm_bo_vm_open,
	.close = vmgpu_bo_vm_close,
	.access = vmgpu_bo_vm_access,
};

/* Page by page: beyond the BAR, its pages are anywhere in the host aperture. */
static int vmgpu_bo_vmap_vram(struct vmgpu_bo *vbo, struct iosys_map *map)
{
	unsigned long page, pages = vbo->tbo.base.size >> PAGE_SHIFT;
	unsigned long *pfns;
	void *vaddr;

	pfns = kvmalloc_array(pages, sizeof(*pfns), GFP_KERNEL);
	if (!pfns)
		return -ENOMEM;
	for (page = 0; page < pages; page++)
		pfns[page] = vmgpu_hap_pfn(vbo, page);
	vaddr = vmap_pfn(pfns, pages, pgprot_writecombine(PAGE_KERNEL));
	kvfree(pfns);
	if (!vaddr)
		return -ENOMEM;
	iosys_map_set_vaddr_iomem(map, (void __iomem __force *)vaddr);
	return 0;
}

/**
 * vmgpu_gem_vmap() - map a whole allocation into the kernel
 * @obj: the allocation, reserved
 * @map: out, the mapping (I/O memory for VRAM)
 *
 * See DOC: CPU mappings. The allocation stays pinned until
 * vmgpu_gem_vunmap().
 *
 * Return: 0; -EACCES for an allocation without CPU access; -ENODEV after
 * unplug; -EIO if its contents were lost; -ENOSPC if it cannot be made
 * reachable (a pinned one beyond the BAR with the host aperture full);
 * -ENOMEM.
 */
int vmgpu_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	struct vmgpu_bo *vbo = gem_to_vmgpu_bo(obj);
	struct ttm_buffer_object *tbo = &vbo->tbo;
	int idx, ret;

	dma_resv_assert_held(obj->resv);
	if (!(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS))
		return -EACCES;
	/* After unplug, no page is DMA-mapped or moved for it again. */
	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	/* A pinned one (shown) stays put: host-aperture pages or nothing. */
	ret = vmgpu_bo_cpu_reach(vbo, !tbo->pin_count);
	if (!ret)
		ret = vmgpu_bo_prepare_access(vbo, false);
	if (ret)
		goto exit;
	ttm_bo_pin(tbo);
	if (vmgpu_bo_in_memory_segment(vbo))
		ret = vmgpu_bo_vmap_vram(vbo, map);
	else
		ret = ttm_bo_vmap(tbo, map);
	if (ret)
		ttm_bo_unpin(tbo);
exit:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_gem_vunmap() - undo vmgpu_gem_vmap()
 * @obj: the allocation, reserved
 * @map: the mapping
 */
void vmgpu_gem_vunmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	struct ttm_buffer_object *tbo = &gem_to_vmgpu_bo(obj)->tbo;

	dma_resv_assert_held(obj->resv);
	/* System pages are never mapped as I/O memory. */
	if (map->is_iomem)
		vunmap((void __force *)map->vaddr_iomem);
	else
		ttm_bo_vunmap(tbo, map);
	ttm_bo_unpin(tbo);
}

/**
 * vmgpu_gem_mmap() - the GEM object's mmap, for the DRM file and dma-bufs
 * @obj: the allocation
 * @vma: the new mapping, its offset already the object's fake offset
 *
 * Return: 0, -EACCES for an allocation without CPU access that is not
 * locked, or an error of TTM's; for an import, what its exporter's mmap
 * returns (vmgpu_prime_mmap()).
 */
int vmgpu_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct vmgpu_bo *vbo = gem_to_vmgpu_bo(obj);

	if (vmgpu_bo_is_import(vbo))
		return vmgpu_prime_mmap(obj, vma);

	/* Only a hint: every fault checks under the reservation. */
	if (!(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS) && !READ_ONCE(vbo->locked_by))
		return -EACCES;
	vma->vm_ops = &vmgpu_bo_vm_ops;
	return drm_gem_ttm_mmap(obj, vma);
}
