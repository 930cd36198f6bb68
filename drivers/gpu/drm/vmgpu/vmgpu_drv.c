// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/iommu.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/workqueue.h>

#include <drm/drm_client.h>
#include <drm/drm_client_setup.h>
#include <drm/drm_drv.h>
#include <drm/drm_fbdev_ttm.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "vmgpu_cache.h"
#include "vmgpu_drm.h"
#include "vmgpu_context.h"
#include "vmgpu_debugfs.h"
#include "vmgpu_device.h"
#include "vmgpu_display.h"
#include "vmgpu_exec.h"
#include "vmgpu_gem.h"
#include "vmgpu_hap.h"
#include "vmgpu_inject.h"
#include "vmgpu_irq.h"
#include "vmgpu_lock.h"
#include "vmgpu_paging_op.h"
#include "vmgpu_paging_vm.h"
#include "vmgpu_prime.h"
#include "vmgpu_query.h"
#include "vmgpu_ring.h"
#include "vmgpu_stats.h"
#include "vmgpu_ttm.h"
#include "vmgpu_vm.h"
#include "vmgpu_vram.h"
#include "vmgpu_vram_mgr.h"

/**
 * DOC: vmgpu
 *
 * vmgpu drives the vmgpu QEMU device: a GPU whose video memory management
 * follows WDDM's VidMm (the seed documents). This file is the PCI and DRM
 * glue; each concept lives in its own file, named in its DOC block.
 */

#define DRIVER_NAME	"vmgpu"
#define DRIVER_DESC	"vmgpu virtual GPU"

static const struct drm_ioctl_desc vmgpu_ioctls[] = {
	DRM_IOCTL_DEF_DRV(VMGPU_QUERY, vmgpu_query_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_CREATE, vmgpu_gem_create_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_INFO, vmgpu_gem_info_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_MMAP_OFFSET, vmgpu_gem_mmap_offset_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_MAKE_RESIDENT, vmgpu_gem_make_resident_ioctl,
			  DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_EVICT, vmgpu_gem_evict_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_VM_BIND, vmgpu_vm_bind_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_CTX_CREATE, vmgpu_ctx_create_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_CTX_DESTROY, vmgpu_ctx_destroy_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_EXEC, vmgpu_exec_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_WAIT, vmgpu_gem_wait_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_DESTROY, vmgpu_gem_destroy_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_LOCK, vmgpu_gem_lock_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_LOCK2, vmgpu_gem_lock2_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_UNLOCK, vmgpu_gem_unlock_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_CACHE_SYNC, vmgpu_gem_cache_sync_ioctl, DRM_RENDER_ALLOW),
	DRM_IOCTL_DEF_DRV(VMGPU_GEM_IMPORT, vmgpu_gem_import_ioctl, DRM_RENDER_ALLOW),
};

static void vmgpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	vmgpu_gem_show_fdinfo(p, file);
	vmgpu_context_show_fdinfo(p, file);
	vmgpu_stats_show_fdinfo(p, file);
}

/* DRM_GEM_FOPS plus fdinfo, which standard GPU tools read usage from. */
static const struct file_operations vmgpu_fops = {
	.owner = THIS_MODULE,
	DRM_GEM_FOPS,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_driver vmgpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_GEM_GPUVA | DRIVER_RENDER | DRIVER_SYNCOBJ |
			   DRIVER_SYNCOBJ_TIMELINE | DRIVER_MODESET | DRIVER_ATOMIC,
	.open = vmgpu_file_open,
	.postclose = vmgpu_file_postclose,
	.ioctls = vmgpu_ioctls,
	.num_ioctls = ARRAY_SIZE(vmgpu_ioctls),
	.fops = &vmgpu_fops,
	.show_fdinfo = vmgpu_show_fdinfo,
	.dumb_create = vmgpu_gem_dumb_create,
	.dumb_map_offset = vmgpu_gem_dumb_map_offset,
	.gem_prime_import = vmgpu_gem_prime_import,
	DRM_FBDEV_TTM_DRIVER_OPS,
	.name = DRIVER_NAME,
	.desc = DRIVER_DESC,
	.major = 1,
	.minor = 7,
};

static bool vmgpu_noncoherent = true;
module_param_named(noncoherent, vmgpu_noncoherent, bool, 0444);
MODULE_PARM_DESC(noncoherent, "Run a device that offers it in its non-coherent mode (default: true)");

static int vmgpu_hw_init(struct vmgpu_device *vdev)
{
	struct iommu_domain *domain;
	u32 magic = vmgpu_read32(vdev, VMGPU_REG_MAGIC);

	vdev->hw_version = vmgpu_read32(vdev, VMGPU_REG_VERSION);
	/*
	 * 1.4: user jobs start with SET_VM, which older devices refuse;
	 * 1.5: compression owners (DOC: compression owners); 1.6: the
	 * display controller (DOC: display); 1.7: cursor latches,
	 * PRIMARY_OFF, device time; 1.8: a flip latches the registers of
	 * its COMMIT, an async one is done when the write is, VBLANK_AGE;
	 * 1.9: a COMPRESS the set has no place for leaves pages raw instead
	 * of failing the job; 1.10: copies run beside register accesses,
	 * and a read of MAGIC is the one that waits for them (the
	 * invalidation read, vmgpu_vm_flush()); 1.11: DMA into its own BARs
	 * fails.
	 */
	if (magic != VMGPU_MAGIC ||
	    vdev->hw_version >> 16 != VMGPU_VERSION_MAJOR ||
	    (vdev->hw_version & 0xffff) < VMGPU_VERSION_MINOR) {
		drm_err(&vdev->drm, "not a vmgpu v%u.%u device (magic 0x%08x, version 0x%08x)\n",
			VMGPU_VERSION_MAJOR, VMGPU_VERSION_MINOR, magic, vdev->hw_version);
		return -ENODEV;
	}
	vmgpu_write32(vdev, VMGPU_REG_RESET, VMGPU_RESET_VALUE);
	vdev->caps = vmgpu_read32(vdev, VMGPU_REG_CAPS);
	/* With translation off (iommu=pt), bus addresses are not IOVAs. */
	domain = iommu_get_domain_for_dev(vdev->drm.dev);
	vdev->iommu_dma = (vdev->caps & VMGPU_CAP_IOMMU_DMA) && domain &&
			  iommu_is_dma_domain(domain);
	/* I/O coherency: see vmgpu_cache.c. */
	if ((vdev->caps & VMGPU_CAP_NONCOHERENT) && vmgpu_noncoherent) {
		vmgpu_write32(vdev, VMGPU_REG_CACHE_MODE, VMGPU_CACHE_MODE_NONCOHERENT);
		vdev->noncoherent = vmgpu_read32(vdev, VMGPU_REG_CACHE_MODE) ==
				    VMGPU_CACHE_MODE_NONCOHERENT;
	}
	return 0;
}

static int vmgpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vmgpu_device *vdev;
	int ret;

	vdev = devm_drm_dev_alloc(&pdev->dev, &vmgpu_drm_driver,
				  struct vmgpu_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;
	/*
	 * The device addresses system memory page by page: an exporter may
	 * map an import in segments of any length (the default is 64 KiB).
	 */
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);

	vdev->mmio = pcim_iomap_region(pdev, VMGPU_BAR_MMIO, DRIVER_NAME);
	if (IS_ERR(vdev->mmio))
		return PTR_ERR(vdev->mmio);

	ret = vmgpu_hw_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_vram_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_hap_init(vdev);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&vdev->bos);
	ret = drmm_mutex_init(&vdev->drm, &vdev->bos_lock);
	if (ret)
		return ret;
	ret = vmgpu_irq_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_rings_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_vm_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_paging_vm_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_job_reserve_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_ttm_init(vdev);
	if (ret)
		return ret;
	ret = vmgpu_display_init(vdev);
	if (ret)
		return ret;
	vmgpu_debugfs_init(vdev);

	pci_set_drvdata(pdev, vdev);
	ret = vmgpu_inject_init(vdev);
	if (ret)
		return ret;
	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		return ret;
	/* VRAM holds anything at probe (an earlier driver's data): scrub it. */
	vmgpu_vram_scrub_queue(vdev);
	/* The console on the display: fbdev emulation, a dumb buffer shown. */
	drm_client_setup(&vdev->drm, NULL);
	return 0;
}

/*
 * Removal (hot-unplug, unbind or module unload) may come while processes
 * hold files, mappings and allocations. Cut them off from the device and
 * fail its work now; what the device owns (registers, ring and aperture
 * memory, interrupts) goes with it (devres), what the files still use
 * (TTM, the scheduler) with the last reference to the DRM device (drmm).
 */
static void vmgpu_remove(struct pci_dev *pdev)
{
	struct vmgpu_device *vdev = pci_get_drvdata(pdev);

	/*
	 * The console leaves the display while the device is still there:
	 * fbdev's blits into VRAM fail once it is unplugged.
	 */
	drm_client_dev_unregister(&vdev->drm);
	/* Then ioctls and faults in flight may wait for these fences. */
	vmgpu_rings_unplug(vdev);
	/* Also revokes every CPU mapping: faults then map a dummy page. */
	drm_dev_unplug(&vdev->drm);
	/* No head may scan out what TTM's unplug below frees. */
	vmgpu_display_unplug(vdev);
	/*
	 * The failed fences released deferred destructions and TTM's delayed
	 * deletes: let them drop their allocations first. TTM's walk of the
	 * LRUs below spins on an allocation whose last reference is being
	 * dropped, holding the lock its release needs.
	 */
	vmgpu_vm_wait_deferred(vdev);
	flush_workqueue(vdev->ttm.wq);
	vmgpu_ttm_unplug(vdev);
	/* The files' page tables, which live as long as their VMs, hold DMA pages. */
	vmgpu_vm_unplug(vdev);
}

static const struct pci_device_id vmgpu_pci_ids[] = {
	{ PCI_DEVICE(VMGPU_PCI_VENDOR_ID, VMGPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vmgpu_pci_ids);

static struct pci_driver vmgpu_pci_driver = {
	.name = DRIVER_NAME,
	.id_table = vmgpu_pci_ids,
	.probe = vmgpu_probe,
	.remove = vmgpu_remove,
};

/*
 * Releases that may drop the DRM device's last reference run on a queue of
 * the module's own: never in scheduler work, which the device's release
 * stops (drm_sched_fini() waits for its own work), nor on a queue the
 * release destroys. Module unload drains it.
 */
static struct workqueue_struct *vmgpu_release_wq;

/**
 * vmgpu_queue_release() - run a release on the module's queue
 * @work: a release that may drop the DRM device's last reference
 *
 * Context: any context.
 */
void vmgpu_queue_release(struct work_struct *work)
{
	queue_work(vmgpu_release_wq, work);
}

static int __init vmgpu_init(void)
{
	int ret;

	vmgpu_release_wq = alloc_workqueue("vmgpu-release", WQ_UNBOUND, 0);
	if (!vmgpu_release_wq)
		return -ENOMEM;
	ret = pci_register_driver(&vmgpu_pci_driver);
	if (ret)
		destroy_workqueue(vmgpu_release_wq);
	return ret;
}
module_init(vmgpu_init);

/* After the driver is unregistered: the last releases may free devices. */
static void __exit vmgpu_exit(void)
{
	pci_unregister_driver(&vmgpu_pci_driver);
	destroy_workqueue(vmgpu_release_wq);
}
module_exit(vmgpu_exit);

MODULE_DESCRIPTION(DRIVER_DESC);
MODULE_IMPORT_NS(DMA_BUF);
MODULE_LICENSE("GPL");
