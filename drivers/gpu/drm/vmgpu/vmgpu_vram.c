// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/log2.h>
#include <linux/sizes.h>

#include <drm/drm_print.h>

#include "vmgpu_device.h"
#include "vmgpu_vram.h"

/**
 * DOC: memory segments and the resizable BAR
 *
 * The device describes its VRAM as consecutive memory segments (seed "GPU
 * segments"), each with a page size of 4 KiB or 64 KiB. The CPU sees VRAM
 * through BAR 2, which starts small. Like amdgpu and xe, the driver tries at
 * probe to grow BAR 2 through the Resizable BAR capability until it covers
 * all VRAM, so that CPU-accessible allocations in any memory segment are
 * always lockable (seed "Allocation usage tracking", Lock2). When that fails
 * (no capability, no room in the host bridge window) the driver carries on
 * with the small BAR: the part of VRAM beyond it is reached through the CPU
 * host aperture, if the device has one.
 */

/*
 * Without a window above 4 GiB on the root bus a larger BAR has nowhere to
 * go, and releasing the BAR would only risk losing it. ACPI root windows
 * do not carry IORESOURCE_MEM_64, so the address is what tells.
 */
static bool vmgpu_vram_root_has_64bit_window(struct pci_dev *pdev)
{
	struct pci_bus *root = pdev->bus;
	struct resource *res;

	while (root->parent)
		root = root->parent;

	pci_bus_for_each_resource(root, res) {
		if (res && (res->flags & IORESOURCE_MEM) && res->start >= SZ_4G)
			return true;
	}
	return false;
}

static void vmgpu_vram_resize_bar(struct vmgpu_device *vdev)
{
	struct pci_dev *pdev = vmgpu_pdev(vdev);
	u64 wanted = roundup_pow_of_two(vdev->vram.size);
	u32 sizes;
	int size, ret;
	u16 cmd;

	if (pci_resource_len(pdev, VMGPU_BAR_VRAM) >= vdev->vram.size)
		return;

	sizes = pci_rebar_get_possible_sizes(pdev, VMGPU_BAR_VRAM);
	if (!sizes) {
		drm_info(&vdev->drm, "VRAM BAR is not resizable\n");
		return;
	}
	size = pci_rebar_bytes_to_size(wanted);
	if (!(sizes & BIT(size)))
		size = __fls(sizes);

	if (!vmgpu_vram_root_has_64bit_window(pdev)) {
		drm_info(&vdev->drm,
			 "no 64-bit root bus window, VRAM BAR not resized\n");
		return;
	}

	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	pci_write_config_word(pdev, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
	pci_release_resource(pdev, VMGPU_BAR_VRAM);
	/* 6.12.y since the stable ReBAR rework takes a mask of BARs to keep. */
	ret = pci_resize_resource(pdev, VMGPU_BAR_VRAM, size, 0);
	if (ret)
		drm_info(&vdev->drm, "VRAM BAR resize to %u MiB failed: %d\n",
			 1u << size, ret);
	pci_assign_unassigned_bus_resources(pdev->bus);
	pci_write_config_word(pdev, PCI_COMMAND, cmd);
}

static int vmgpu_vram_read_segments(struct vmgpu_device *vdev)
{
	u32 count = vmgpu_read32(vdev, VMGPU_REG_NUM_SEGMENTS);
	u64 end = 0;
	u32 i;

	if (!count || count > VMGPU_MAX_DRIVER_SEGMENTS) {
		drm_err(&vdev->drm, "device reports %u memory segments, the driver manages 1 to %u\n",
			count, VMGPU_MAX_DRIVER_SEGMENTS);
		return -ENODEV;
	}

	for (i = 0; i < count; i++) {
		struct vmgpu_segment *seg = &vdev->segments[i];
		u32 reg = VMGPU_REG_SEG(i);
		u32 shift = vmgpu_read32(vdev, reg + VMGPU_SEG_PAGE_SHIFT);

		seg->id = i + 1;
		seg->mem_type = VMGPU_TTM_FIRST_SEGMENT + i;
		seg->vram_base = vmgpu_read64(vdev, reg + VMGPU_SEG_BASE_LO);
		seg->size = vmgpu_read64(vdev, reg + VMGPU_SEG_SIZE_LO);
		if ((shift != VMGPU_PAGE_SHIFT && shift != VMGPU_PAGE_SHIFT_64K) ||
		    seg->vram_base != end || !seg->size ||
		    !IS_ALIGNED(seg->size, BIT_ULL(shift))) {
			drm_err(&vdev->drm, "memory segment %u is malformed\n",
				seg->id);
			return -ENODEV;
		}
		seg->page_size = BIT(shift);
		end += seg->size;
	}
	if (end != vdev->vram.size) {
		drm_err(&vdev->drm, "segments cover %llu of %llu VRAM bytes\n",
			end, vdev->vram.size);
		return -ENODEV;
	}
	vdev->num_segments = count;
	return 0;
}

/**
 * vmgpu_vram_init() - discover memory segments and size the VRAM BAR
 * @vdev: the device, with registers mapped
 *
 * Must run before anything claims BAR 2, since growing the BAR releases and
 * reassigns it.
 *
 * Return: 0, or -ENODEV when the device describes its VRAM inconsistently.
 */
int vmgpu_vram_init(struct vmgpu_device *vdev)
{
	struct pci_dev *pdev = vmgpu_pdev(vdev);
	u64 device_bar;
	int ret;

	vdev->vram.size = vmgpu_read64(vdev, VMGPU_REG_VRAM_SIZE_LO);
	ret = vmgpu_vram_read_segments(vdev);
	if (ret)
		return ret;

	vdev->vram.bar_probe_size = pci_resource_len(pdev, VMGPU_BAR_VRAM);
	vmgpu_vram_resize_bar(vdev);
	vdev->vram.bar_size = pci_resource_len(pdev, VMGPU_BAR_VRAM);
	vdev->vram.bar_start = pci_resource_start(pdev, VMGPU_BAR_VRAM);

	device_bar = vmgpu_read64(vdev, VMGPU_REG_VRAM_BAR_SIZE_LO);
	if (device_bar != vdev->vram.bar_size) {
		drm_err(&vdev->drm, "VRAM BAR is %llu bytes, device decodes %llu\n",
			vdev->vram.bar_size, device_bar);
		return -ENODEV;
	}

	if (vdev->caps & VMGPU_CAP_HOST_APERTURE)
		vdev->vram.host_aperture_size =
			pci_resource_len(pdev, VMGPU_BAR_HOST_APERTURE);
	vdev->gart_pages = vmgpu_read32(vdev, VMGPU_REG_GART_MAX_PAGES);

	drm_info(&vdev->drm,
		 "%u memory segments, %llu MiB VRAM, BAR %llu MiB (was %llu MiB), host aperture %llu MiB\n",
		 vdev->num_segments, vdev->vram.size >> 20,
		 vdev->vram.bar_size >> 20, vdev->vram.bar_probe_size >> 20,
		 vdev->vram.host_aperture_size >> 20);
	return 0;
}

/**
 * vmgpu_segment_cpu_visible_size() - bytes of a memory segment inside BAR 2
 * @vdev: the device
 * @seg: one of its memory segments
 *
 * Return: how many bytes from the start of @seg the CPU reaches directly.
 */
u64 vmgpu_segment_cpu_visible_size(struct vmgpu_device *vdev,
				   const struct vmgpu_segment *seg)
{
	u64 bar_end = min(vdev->vram.bar_size, vdev->vram.size);

	if (bar_end <= seg->vram_base)
		return 0;
	return min(bar_end - seg->vram_base, seg->size);
}
