// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/interrupt.h>

#include <drm/drm_print.h>

#include "vmgpu_device.h"
#include "vmgpu_irq.h"
#include "vmgpu_ring.h"
#include "vmgpu_trace.h"

/**
 * DOC: interrupts
 *
 * Each interrupt cause has its own MSI-X vector (VMGPU_MSIX_VEC_*), so
 * handlers never share a line and never need to ask which cause fired; the
 * status bits exist to be acknowledged. The error vector reports what the
 * device latched in its error registers: a command that failed (bad opcode,
 * out-of-range or IOMMU-faulting address, a VM fault) or a bad register
 * write. A failed command halts its ring; the ring code fails the job and
 * resumes the ring.
 */

static irqreturn_t vmgpu_irq_error(int irq, void *arg)
{
	struct vmgpu_device *vdev = arg;
	u32 code, ring, slot;
	u64 addr;

	vmgpu_write32(vdev, VMGPU_REG_INT_STATUS, VMGPU_INT_ERROR);
	code = vmgpu_read32(vdev, VMGPU_REG_ERROR_CODE);
	if (code != VMGPU_ERR_NONE) {
		ring = vmgpu_read32(vdev, VMGPU_REG_ERROR_RING);
		slot = vmgpu_read32(vdev, VMGPU_REG_ERROR_SLOT);
		addr = vmgpu_read64(vdev, VMGPU_REG_ERROR_ADDR_LO);
		vmgpu_write32(vdev, VMGPU_REG_ERROR_ACK, 1);
		/* Every error, where the log lines below are rate limited. */
		trace_vmgpu_device_error(ring, slot, code, addr);
		if (ring == VMGPU_ERROR_RING_MMIO)
			drm_err_ratelimited(&vdev->drm,
					    "device rejected register 0x%x write (error %u, value 0x%llx)\n",
					    slot, code, addr);
		else
			drm_err_ratelimited(&vdev->drm, "ring %u command %u failed: error %u at 0x%llx\n",
					    ring, slot, code, addr);
	}
	/* Only the first error latches: other rings may have halted too. */
	vmgpu_ring_handle_error(vdev);
	return IRQ_HANDLED;
}

/**
 * vmgpu_irq_init() - allocate the MSI-X vectors and enable error reports
 * @vdev: the device, enabled with pcim_enable_device()
 *
 * The vectors and the handler are device-managed.
 *
 * Return: 0 or a negative errno; the device needs MSI-X.
 */
int vmgpu_irq_init(struct vmgpu_device *vdev)
{
	struct pci_dev *pdev = vmgpu_pdev(vdev);
	int i, ret;

	ret = pci_alloc_irq_vectors(pdev, VMGPU_MSIX_NUM_VECTORS,
				    VMGPU_MSIX_NUM_VECTORS, PCI_IRQ_MSIX);
	if (ret < 0) {
		drm_err(&vdev->drm, "cannot get %u MSI-X vectors: %d\n",
			VMGPU_MSIX_NUM_VECTORS, ret);
		return ret;
	}
	for (i = 0; i < VMGPU_MSIX_NUM_VECTORS; i++)
		vdev->irq[i] = pci_irq_vector(pdev, i);

	ret = devm_request_irq(&pdev->dev, vdev->irq[VMGPU_MSIX_VEC_ERROR],
			       vmgpu_irq_error, 0, "vmgpu-error", vdev);
	if (ret)
		return ret;

	vmgpu_write32(vdev, VMGPU_REG_INT_STATUS, ~0u);
	vmgpu_write32(vdev, VMGPU_REG_INT_MASK, VMGPU_INT_ERROR);
	return 0;
}
