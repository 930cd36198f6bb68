/*
 * vmgpu: Resizable BAR extended capability for the VRAM BAR.
 *
 * QEMU has no emulated ReBAR helper, so the device owns the whole dance:
 * the guest writes a size into the control register, and the device changes
 * the BAR's size, its writable address bits and the VRAM window behind it,
 * then lets the PCI core remap the BAR.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/range.h"
#include "qemu/units.h"
#include "hw/pci/pcie.h"
#include "vmgpu.h"
#include "trace.h"

#define VMGPU_REBAR_CAP_SIZE    12      /* header, one CAP, one CTRL */
#define VMGPU_REBAR_MIN_SHIFT   20      /* size field 0 means 1 MiB */

/* Every power of two from 1 MiB up to VRAM rounded up. */
static uint32_t vmgpu_rebar_sizes(VmgpuState *s)
{
    return (pow2ceil(s->vram_size) / MiB) * 2 - 1;
}

uint64_t vmgpu_vram_bar_size(VmgpuState *s)
{
    return PCI_DEVICE(s)->io_regions[VMGPU_BAR_VRAM].size;
}

static void vmgpu_vram_bar_resize(VmgpuState *s, uint64_t size)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    PCIIORegion *region = &pdev->io_regions[VMGPU_BAR_VRAM];
    int bar = pci_bar(pdev, VMGPU_BAR_VRAM);
    uint64_t addr = pci_get_quad(pdev->config + bar);

    trace_vmgpu_rebar_resize(region->size, size);

    memory_region_transaction_begin();
    memory_region_set_size(&s->vram_window, MIN(size, s->vram_size));
    memory_region_set_size(&s->vram_bar, size);
    region->size = size;
    pci_set_quad(pdev->wmask + bar, ~(size - 1));
    /* A larger BAR must be naturally aligned: drop the address bits it now decodes. */
    pci_set_quad(pdev->config + bar, (addr & ~(size - 1)) |
                 (addr & ~PCI_BASE_ADDRESS_MEM_MASK));
    memory_region_transaction_commit();

    /* Writing COMMAND back makes the PCI core remap every BAR. */
    pci_default_write_config(pdev, PCI_COMMAND,
                             pci_get_word(pdev->config + PCI_COMMAND), 2);
}

static void vmgpu_rebar_set_ctrl(VmgpuState *s, uint64_t size)
{
    uint8_t *ctrl = PCI_DEVICE(s)->config + s->rebar_offset + PCI_REBAR_CTRL;

    pci_set_long(ctrl, VMGPU_BAR_VRAM | 1 << PCI_REBAR_CTRL_NBAR_SHIFT |
                 (ctz64(size) - VMGPU_REBAR_MIN_SHIFT) <<
                 PCI_REBAR_CTRL_BAR_SHIFT);
}

void vmgpu_rebar_init(VmgpuState *s, uint16_t offset)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    s->rebar_offset = offset;
    pcie_add_capability(pdev, PCI_EXT_CAP_ID_REBAR, 1, offset,
                        VMGPU_REBAR_CAP_SIZE);
    pci_set_long(pdev->config + offset + PCI_REBAR_CAP,
                 vmgpu_rebar_sizes(s) << 4);
    vmgpu_rebar_set_ctrl(s, s->initial_bar_size);
    pci_set_long(pdev->wmask + offset + PCI_REBAR_CTRL,
                 PCI_REBAR_CTRL_BAR_SIZE);
}

void vmgpu_rebar_config_write(VmgpuState *s, uint32_t addr, int len)
{
    uint32_t ctrl_offset = s->rebar_offset + PCI_REBAR_CTRL;
    uint32_t ctrl, field;
    uint64_t size;

    if (!ranges_overlap(addr, len, ctrl_offset, 4)) {
        return;
    }
    ctrl = pci_get_long(PCI_DEVICE(s)->config + ctrl_offset);
    field = (ctrl & PCI_REBAR_CTRL_BAR_SIZE) >> PCI_REBAR_CTRL_BAR_SHIFT;
    if (field >= 32 || !(vmgpu_rebar_sizes(s) & (1u << field))) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "vmgpu: ReBAR size field %u not supported, ignored\n",
                      field);
        vmgpu_rebar_set_ctrl(s, vmgpu_vram_bar_size(s));
        return;
    }
    size = MiB << field;
    if (size != vmgpu_vram_bar_size(s)) {
        vmgpu_vram_bar_resize(s, size);
    }
}

void vmgpu_rebar_reset(VmgpuState *s)
{
    if (vmgpu_vram_bar_size(s) != s->initial_bar_size) {
        vmgpu_rebar_set_ctrl(s, s->initial_bar_size);
        vmgpu_vram_bar_resize(s, s->initial_bar_size);
    }
}
