// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_tt.h>

#include "vmgpu_drm.h"
#include "vmgpu_bo.h"
#include "vmgpu_cache.h"
#include "vmgpu_device.h"
#include "vmgpu_inject.h"
#include "vmgpu_prime.h"
#include "vmgpu_vm.h"

/**
 * DOC: PRIME import
 *
 * A dma-buf of another device (vgem, udmabuf, another GPU) imported
 * through PRIME is an allocation in the implicit system segment: its
 * supported set is the aperture segment alone, so it lives in system
 * memory the device reaches (TT), mapped into the aperture only when it
 * needs a physical reference, or out of the device's reach (TTM system).
 * The exporter keeps the pages; vmgpu never copies, clears or swaps them,
 * so an import never moves between segments.
 *
 * - Its pages are mapped for the device (dma_buf_map_attachment()) when
 *   its backing enters TT, and unmapped when it leaves: an eviction, a
 *   NONRESIDENT GEM_EVICT, destruction. Exporters that cache their
 *   mapping (vgem, udmabuf, DRM's helpers) keep it until the attachment
 *   goes: when the import is freed, or when the device is unplugged, which
 *   detaches every import. Exporters that never move their buffers are
 *   attached statically, so that those that do not cache unmap for real;
 *   dma-buf would map their buffer at attach time for a dynamic importer.
 * - A dynamic exporter is attached dynamically: before it moves the
 *   buffer it calls move_notify, which waits for the import's users and
 *   evicts it out of the device's reach (its GPU VA mappings invalidated,
 *   its aperture entries gone, the mapping unmapped); the next use maps
 *   the buffer where it is then. A plane showing the import pins the
 *   attachment. (With CONFIG_DMABUF_MOVE_NOTIFY off, as in Debian's
 *   kernel, dma-buf pins every dynamic mapping instead.)
 * - The reservation is the dma-buf's. A job that uses an import waits for
 *   the exporter's and other importers' work (every fence but
 *   bookkeeping) and is a writer of it to them (%DMA_RESV_USAGE_WRITE), so
 *   implicit synchronisation (DMA_BUF_IOCTL_SYNC, other drivers' jobs)
 *   sees vmgpu's jobs. On a non-coherent device the job is bracketed by
 *   flushes of the device's cache (&vmgpu_job.cache_bracket), so that its
 *   fence means its writes are in memory. vmgpu's own allocations stay
 *   explicitly synchronised.
 * - An import is a primary (%DRM_VMGPU_ALLOC_PRIMARY): a framebuffer can
 *   be made of it, and while a plane shows it, it is mapped into the
 *   aperture segment (seed: primaries are physically accessed by the
 *   display). An importer that asks (DRM_IOCTL_VMGPU_GEM_IMPORT) makes it
 *   AccessedPhysically: mapped into the aperture segment while resident,
 *   for the physical engine.
 * - The CPU reaches an import only through its exporter: vmgpu's mmap of
 *   it is the exporter's mmap, and Lock and Lock2 refuse it. The CPU-access
 *   rules of vmgpu's own allocations do not apply to pages it does not own;
 *   DMA_BUF_IOCTL_SYNC on the dma-buf waits for vmgpu's jobs (above).
 * - A dma-buf vmgpu exported comes back as the allocation itself. vmgpu
 *   exports with DRM's helpers, under its own &dma_buf_ops so that it can
 *   tell its own dma-bufs apart.
 */

static const struct dma_buf_ops vmgpu_dmabuf_ops = {
	.cache_sgt_mapping = true,
	.attach = drm_gem_map_attach,
	.detach = drm_gem_map_detach,
	.map_dma_buf = drm_gem_map_dma_buf,
	.unmap_dma_buf = drm_gem_unmap_dma_buf,
	.release = drm_gem_dmabuf_release,
	.mmap = drm_gem_dmabuf_mmap,
	.vmap = drm_gem_dmabuf_vmap,
	.vunmap = drm_gem_dmabuf_vunmap,
};

/**
 * vmgpu_gem_prime_export() - &drm_gem_object_funcs.export
 * @obj: an allocation of this device
 * @flags: the dma-buf file's flags
 *
 * Return: the new dma-buf, or an ERR_PTR (-ENODEV for an import).
 */
struct dma_buf *vmgpu_gem_prime_export(struct drm_gem_object *obj, int flags)
{
	struct dma_buf_export_info exp_info = {
		.exp_name = KBUILD_MODNAME,
		.owner = THIS_MODULE,
		.ops = &vmgpu_dmabuf_ops,
		.size = obj->size,
		.flags = flags,
		.priv = obj,
		.resv = obj->resv,
	};

	/*
	 * PRIME re-exports an import's own dma-buf; one detached at unplug
	 * has no mapping to offer anyone.
	 */
	if (vmgpu_bo_is_import(gem_to_vmgpu_bo(obj)))
		return ERR_PTR(-ENODEV);
	return drm_gem_dmabuf_export(obj->dev, &exp_info);
}

static int vmgpu_prime_evict(struct vmgpu_bo *vbo)
{
	static const struct ttm_place system = { .mem_type = TTM_PL_SYSTEM };
	struct ttm_placement placement = { .num_placement = 1, .placement = &system };
	struct ttm_operation_ctx ctx = { .interruptible = false };

	return ttm_bo_validate(&vbo->tbo, &placement, &ctx);
}

/*
 * The exporter is about to move the buffer: take the import out of the
 * device's reach, so that nothing uses the old mapping. The exporter then
 * waits for the fences in the shared reservation, ours included.
 */
static void vmgpu_prime_move_notify(struct dma_buf_attachment *attach)
{
	struct vmgpu_bo *vbo = attach->importer_priv;
	int ret;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (!vbo->import_sgt)
		return;
	/*
	 * Without a timeout, as the exporter itself will: the eviction below
	 * then has no user to give up on.
	 */
	dma_resv_wait_timeout(attach->dmabuf->resv, DMA_RESV_USAGE_BOOKKEEP, false,
			      MAX_SCHEDULE_TIMEOUT);
	/*
	 * Being freed (TTM's release runs without the reservation until its
	 * delayed delete): no user left, only the mapping.
	 */
	if (!ttm_bo_get_unless_zero(&vbo->tbo)) {
		vmgpu_cache_release_pages(&vbo->tbo);
		vmgpu_prime_unmap(vbo);
		return;
	}
	if (vbo->tbo.deleted) {
		vmgpu_cache_release_pages(&vbo->tbo);
		vmgpu_prime_unmap(vbo);
		ret = 0;
	} else if (vmgpu_inject_import_evict_fault(to_vmgpu_device(vbo->tbo.base.dev))) {
		ret = -ENOMEM;
	} else {
		ret = vmgpu_prime_evict(vbo);
	}
	if (ret) {
		/*
		 * Only a small allocation can have failed. Keep the device off
		 * the old pages until the next use evicts the import.
		 */
		vmgpu_vm_bo_invalidate(vbo);
		vmgpu_cache_release_pages(&vbo->tbo);
		vbo->import_moved = true;
		drm_err(vbo->tbo.base.dev, "import %p: eviction for its exporter failed (%d)\n",
			vbo, ret);
	}
	/* Under the reservation: an import's last put only queues its delete. */
	ttm_bo_put(&vbo->tbo);
}

/**
 * vmgpu_prime_settle() - evict an import its exporter moved under it
 * @vbo: an allocation, reserved, before the device uses it
 *
 * Return: 0, or an error of the eviction (see vmgpu_prime_move_notify()).
 */
int vmgpu_prime_settle(struct vmgpu_bo *vbo)
{
	dma_resv_assert_held(vbo->tbo.base.resv);
	return vbo->import_moved ? vmgpu_prime_evict(vbo) : 0;
}

static const struct dma_buf_attach_ops vmgpu_prime_attach_ops = {
	.allow_peer2peer = false,
	.move_notify = vmgpu_prime_move_notify,
};

/* Every page of the buffer, page-aligned, exactly its size. */
static int vmgpu_prime_check_sgt(struct sg_table *sgt, u64 size)
{
	struct scatterlist *sg;
	u64 bytes = 0;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (!PAGE_ALIGNED(sg_dma_address(sg)) || !PAGE_ALIGNED(sg_dma_len(sg)))
			return -EINVAL;
		bytes += sg_dma_len(sg);
	}
	return bytes == size ? 0 : -EINVAL;
}

/**
 * vmgpu_prime_map() - DMA-map an import's pages for the device
 * @vbo: the import, reserved, its backing entering TT
 *
 * Fills its TT's bus addresses from the attachment's mapping.
 *
 * Return: 0; -EINVAL if the exporter's mapping does not cover the buffer
 * page by page; an error of the exporter's.
 */
int vmgpu_prime_map(struct vmgpu_bo *vbo)
{
	struct dma_buf_attachment *attach = vbo->tbo.base.import_attach;
	struct ttm_tt *tt = vbo->tbo.ttm;
	struct sg_table *sgt;
	int ret;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (vbo->import_sgt)
		return 0;
	sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	ret = vmgpu_prime_check_sgt(sgt, vbo->tbo.base.size);
	if (!ret)
		ret = drm_prime_sg_to_dma_addr_array(sgt, tt->dma_address, tt->num_pages);
	if (ret) {
		drm_dbg_prime(vbo->tbo.base.dev, "import %p: unusable mapping from %s\n",
			      vbo, attach->dmabuf->exp_name);
		dma_buf_unmap_attachment(attach, sgt, DMA_BIDIRECTIONAL);
		return -EINVAL;
	}
	vbo->import_sgt = sgt;
	return 0;
}

/**
 * vmgpu_prime_unmap() - undo vmgpu_prime_map()
 * @vbo: the import, reserved, no longer reachable by the device
 */
void vmgpu_prime_unmap(struct vmgpu_bo *vbo)
{
	struct ttm_tt *tt = vbo->tbo.ttm;

	dma_resv_assert_held(vbo->tbo.base.resv);
	if (!vbo->import_sgt)
		return;
	dma_buf_unmap_attachment(vbo->tbo.base.import_attach, vbo->import_sgt,
				 DMA_BIDIRECTIONAL);
	vbo->import_sgt = NULL;
	vbo->import_moved = false;
	/* No stale bus address for anyone to follow. */
	if (tt)
		memset(tt->dma_address, 0, tt->num_pages * sizeof(*tt->dma_address));
}

/**
 * vmgpu_prime_pin() - keep a dynamic exporter from moving an import
 * @vbo: the import, reserved, about to be pinned for scanout
 *
 * Pinning may itself move the buffer (an exporter migrating it to where
 * it can stay) and call move_notify: the import is settled after the pin,
 * when no further move can come.
 *
 * Return: 0, an error of the exporter's, or of the eviction of an import
 * the pin moved (vmgpu_prime_settle()).
 */
int vmgpu_prime_pin(struct vmgpu_bo *vbo)
{
	struct dma_buf_attachment *attach = vbo->tbo.base.import_attach;
	int ret;

	/* Detached at unplug: the display is gone too. */
	if (!attach)
		return -ENODEV;
	if (attach->importer_ops) {
		ret = dma_buf_pin(attach);
		if (ret)
			return ret;
	}
	ret = vmgpu_prime_settle(vbo);
	if (ret)
		vmgpu_prime_unpin(vbo);
	return ret;
}

/**
 * vmgpu_prime_unpin() - undo vmgpu_prime_pin()
 * @vbo: the import, reserved
 */
void vmgpu_prime_unpin(struct vmgpu_bo *vbo)
{
	struct dma_buf_attachment *attach = vbo->tbo.base.import_attach;

	if (attach && attach->importer_ops)
		dma_buf_unpin(attach);
}

/**
 * vmgpu_prime_mmap() - the CPU mapping of an import: the exporter's
 * @obj: the import
 * @vma: the new mapping, holding a reference to @obj
 *
 * Return: 0 or an error of the exporter's mmap.
 */
int vmgpu_prime_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	int ret;

	/* The exporter's mmap takes the mapping over, file and all. */
	vma->vm_private_data = NULL;
	vma->vm_ops = NULL;
	vm_flags_set(vma, VM_DONTEXPAND);
	ret = dma_buf_mmap(gem_to_vmgpu_bo(obj)->import_dmabuf, vma, 0);
	/* The mapping holds the dma-buf's file now, not the object. */
	if (!ret)
		drm_gem_object_put(obj);
	return ret;
}

static struct drm_gem_object *vmgpu_prime_import_foreign(struct vmgpu_device *vdev,
							 struct dma_buf *dma_buf)
{
	u32 aperture = vmgpu_aperture_segment(vdev);
	struct dma_buf_attachment *attach;
	struct vmgpu_bo *vbo;
	int ret;

	if (!dma_buf->size || !PAGE_ALIGNED(dma_buf->size))
		return ERR_PTR(-EINVAL);
	vbo = vmgpu_bo_alloc(vdev, dma_buf->size, DRM_VMGPU_ALLOC_PRIMARY, BIT(aperture),
			     aperture);
	if (IS_ERR(vbo))
		return ERR_CAST(vbo);
	/* Dynamic with a dynamic exporter only: see DOC: PRIME import. */
	if (dma_buf_is_dynamic(dma_buf))
		attach = dma_buf_dynamic_attach(dma_buf, vdev->drm.dev,
						&vmgpu_prime_attach_ops, vbo);
	else
		attach = dma_buf_attach(dma_buf, vdev->drm.dev);
	if (IS_ERR(attach)) {
		vmgpu_bo_free_unplaced(vbo);
		return ERR_CAST(attach);
	}
	atomic_inc(&vdev->imports_attached);
	/* Dropped by vmgpu_prime_release(). */
	get_dma_buf(dma_buf);
	vbo->import_dmabuf = dma_buf;
	vbo->tbo.base.import_attach = attach;
	vbo->tbo.base.resv = dma_buf->resv;
	/* The exporter's pages hold the exporter's contents. */
	vbo->cleared = true;
	vbo->has_contents = true;

	dma_resv_lock(dma_buf->resv, NULL);
	ret = vmgpu_bo_place(vbo, ttm_bo_type_sg, NULL);
	dma_resv_unlock(dma_buf->resv);
	return ret ? ERR_PTR(ret) : &vbo->tbo.base;
}

#define VMGPU_IMPORT_FLAGS	DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY

/*
 * Whether the allocation @dma_buf imports as can have @flags: one of this
 * device's must have them already, an import must fit the aperture.
 */
static int vmgpu_prime_check_flags(struct vmgpu_device *vdev, struct dma_buf *dma_buf,
				   u32 flags)
{
	if (dma_buf->ops == &vmgpu_dmabuf_ops &&
	    ((struct drm_gem_object *)dma_buf->priv)->dev == &vdev->drm)
		return (gem_to_vmgpu_bo(dma_buf->priv)->flags & flags) == flags ? 0 : -EINVAL;
	if ((flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY) &&
	    dma_buf->size > (u64)vdev->gart_pages << PAGE_SHIFT)
		return -E2BIG;
	return 0;
}

/*
 * The allocation the handle names gains @flags if it is an import, and is
 * placed where they say if resident; one of this device's must have them.
 * Checked again here, on what the handle names now: the fd or the handle
 * may have been replaced since vmgpu_prime_check_flags(). An import that
 * has them already is placed again: the call that gave them may have been
 * interrupted before it placed it, and restarted.
 */
static int vmgpu_prime_add_flags(struct vmgpu_bo *vbo, u32 flags)
{
	struct ttm_operation_ctx ctx = { .interruptible = true };
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);
	struct dma_resv *resv = vbo->tbo.base.resv;
	int ret;

	ret = dma_resv_lock_interruptible(resv, NULL);
	if (ret)
		return ret;
	if (!vmgpu_bo_is_import(vbo)) {
		ret = (vbo->flags & flags) == flags ? 0 : -EINVAL;
	} else if ((flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY) &&
		   vbo->tbo.base.size > (u64)vdev->gart_pages << PAGE_SHIFT) {
		ret = -E2BIG;
	} else {
		if ((vbo->flags & flags) != flags)
			vmgpu_bo_add_flags(vbo, flags);
		/* Not bound to the pages an exporter moved: mapped anew. */
		ret = vmgpu_prime_settle(vbo);
		if (!ret && vmgpu_bo_is_resident(&vbo->tbo))
			ret = ttm_bo_validate(&vbo->tbo, &vbo->placement, &ctx);
		/* No room now: an engine that needs it maps it then. */
		if (ret == -ENOSPC || ret == -ENOMEM)
			ret = 0;
	}
	dma_resv_unlock(resv);
	return ret;
}

/**
 * vmgpu_gem_import_ioctl() - DRM_IOCTL_VMGPU_GEM_IMPORT
 * @drm: the DRM device
 * @data: a &struct drm_vmgpu_gem_import
 * @file: the importer
 *
 * Return: 0; -EINVAL for bad flags, a non-zero pad or reserved word, a
 * file that is no dma-buf, or one of this device's allocations without
 * @flags; -E2BIG for an AccessedPhysically import larger than the
 * aperture; -ENODEV after unplug; -EINTR or -ERESTARTSYS if interrupted;
 * what PRIME import returns (vmgpu_gem_prime_import()).
 */
int vmgpu_gem_import_ioctl(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_vmgpu_gem_import *args = data;
	struct drm_gem_object *obj;
	struct dma_buf *dma_buf;
	int idx, ret;

	if ((args->flags & ~VMGPU_IMPORT_FLAGS) || args->pad || args->reserved[0] ||
	    args->reserved[1])
		return -EINVAL;
	dma_buf = dma_buf_get(args->fd);
	if (IS_ERR(dma_buf))
		return -EINVAL;
	ret = vmgpu_prime_check_flags(to_vmgpu_device(drm), dma_buf, args->flags);
	dma_buf_put(dma_buf);
	if (ret)
		return ret;
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = drm_gem_prime_fd_to_handle(drm, file, args->fd, &args->handle);
	if (ret || !args->flags)
		goto exit;
	/* A racing close of the handle leaves nothing to give flags to. */
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj) {
		ret = -ENOENT;
		goto exit;
	}
	ret = vmgpu_prime_add_flags(gem_to_vmgpu_bo(obj), args->flags);
	drm_gem_object_put(obj);
exit:
	drm_dev_exit(idx);
	return ret;
}

/**
 * vmgpu_gem_prime_import() - &drm_driver.gem_prime_import
 * @drm: the DRM device
 * @dma_buf: the dma-buf to import
 *
 * Return: the allocation with a new reference: the one that was exported
 * if @dma_buf is one of this device's, else a new import (DOC: PRIME
 * import); or an ERR_PTR: -EINVAL for a buffer that is not whole pages or
 * that its exporter maps otherwise, -E2BIG for one larger than may be
 * resident in system memory (see memory-management.rst), -ENOSYS for
 * another vmgpu device's (vmgpu exports no device mapping), -ENODEV after
 * unplug, another error of the exporter's.
 */
struct drm_gem_object *vmgpu_gem_prime_import(struct drm_device *drm,
					      struct dma_buf *dma_buf)
{
	struct drm_gem_object *obj;
	int idx;

	if (dma_buf->ops == &vmgpu_dmabuf_ops) {
		obj = dma_buf->priv;
		if (obj->dev == drm) {
			drm_gem_object_get(obj);
			return obj;
		}
	}
	if (!drm_dev_enter(drm, &idx))
		return ERR_PTR(-ENODEV);
	obj = vmgpu_prime_import_foreign(to_vmgpu_device(drm), dma_buf);
	drm_dev_exit(idx);
	return obj;
}

/* Detached: one import fewer for unplug to wait for. */
static void vmgpu_prime_detach(struct vmgpu_bo *vbo, struct dma_buf_attachment *attach)
{
	struct vmgpu_device *vdev = vmgpu_bo_device(vbo);

	dma_buf_detach(vbo->import_dmabuf, attach);
	if (atomic_dec_and_test(&vdev->imports_attached))
		wake_up_var(&vdev->imports_attached);
}

static void vmgpu_prime_release_work(struct work_struct *work)
{
	struct vmgpu_bo *vbo = container_of(work, struct vmgpu_bo, import_release);

	if (vbo->tbo.base.import_attach)
		vmgpu_prime_detach(vbo, vbo->tbo.base.import_attach);
	dma_buf_put(vbo->import_dmabuf);
	drm_gem_object_release(&vbo->tbo.base);
	kfree(vbo);
}

/**
 * vmgpu_prime_release() - detach and free an import TTM is done with
 * @vbo: the import, unreferenced
 *
 * In a work item of TTM's: the last reference may go in an eviction that
 * holds another reservation, and detaching takes the dma-buf's. TTM's
 * workqueue is drained before the device is released.
 */
void vmgpu_prime_release(struct vmgpu_bo *vbo)
{
	INIT_WORK(&vbo->import_release, vmgpu_prime_release_work);
	queue_work(vmgpu_bo_device(vbo)->ttm.wq, &vbo->import_release);
}

/* The next import still attached, with a reference; NULL when none is left. */
static struct vmgpu_bo *vmgpu_prime_next_attached(struct vmgpu_device *vdev)
{
	struct vmgpu_bo *vbo, *found = NULL;

	mutex_lock(&vdev->bos_lock);
	list_for_each_entry(vbo, &vdev->bos, link) {
		if (vmgpu_bo_is_import(vbo) && READ_ONCE(vbo->tbo.base.import_attach) &&
		    ttm_bo_get_unless_zero(&vbo->tbo)) {
			found = vbo;
			break;
		}
	}
	mutex_unlock(&vdev->bos_lock);
	return found;
}

/**
 * vmgpu_prime_unplug() - the device is going: detach every import
 * @vdev: the device, unplugged, so that no import is mapped again
 *
 * Exporters that cache their mapping unmap it only when detached. The
 * imports stay, detached, until their last user lets go; a re-export
 * still finds the dma-buf (&drm_gem_object.dma_buf).
 */
void vmgpu_prime_unplug(struct vmgpu_device *vdev)
{
	struct dma_buf_attachment *attach;
	struct vmgpu_bo *vbo;

	while ((vbo = vmgpu_prime_next_attached(vdev))) {
		dma_resv_lock(vbo->tbo.base.resv, NULL);
		vmgpu_prime_unmap(vbo);
		dma_resv_unlock(vbo->tbo.base.resv);
		/* PRIME's re-export reads it under this lock. */
		mutex_lock(&vdev->drm.object_name_lock);
		attach = vbo->tbo.base.import_attach;
		vbo->tbo.base.import_attach = NULL;
		mutex_unlock(&vdev->drm.object_name_lock);
		vmgpu_prime_detach(vbo, attach);
		ttm_bo_put(&vbo->tbo);
	}
	/* Those the walk found dying detach in their release, soon. */
	if (!wait_var_event_timeout(&vdev->imports_attached,
				    !atomic_read(&vdev->imports_attached), 10 * HZ))
		drm_err(&vdev->drm, "%d imports still attached after unplug\n",
			atomic_read(&vdev->imports_attached));
}
