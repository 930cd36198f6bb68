/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_VM_PT_H_
#define _VMGPU_VM_PT_H_

#include <linux/bits.h>
#include <linux/types.h>

#include "hw/vmgpu_hw.h"

struct drm_gpuva;
struct vmgpu_device;
struct vmgpu_pt;
struct vmgpu_vm;

#define VMGPU_PT_COVER_SHIFT(level)	(VMGPU_PAGE_SHIFT + 9 * (level))

/* The first address the next last-level table covers. */
static inline u64 vmgpu_pt_next_leaf(u64 va)
{
	return (va | GENMASK_ULL(VMGPU_PT_COVER_SHIFT(1) - 1, 0)) + 1;
}

struct vmgpu_pt *vmgpu_pt_alloc(struct vmgpu_vm *vm, int level);
u32 vmgpu_vm_max_tables(struct vmgpu_device *vdev);
void vmgpu_vm_unmap_tables(struct vmgpu_vm *vm);
void vmgpu_vm_free_tables(struct vmgpu_vm *vm);
int vmgpu_vm_populate(struct vmgpu_vm *vm, u64 va, u64 range);
void vmgpu_vm_depopulate(struct vmgpu_vm *vm, u64 va, u64 range);
void vmgpu_vm_free_unused_tables(struct vmgpu_vm *vm);
dma_addr_t vmgpu_vm_pte_bus(struct vmgpu_vm *vm, u64 va);
void vmgpu_vm_clear_ptes(struct vmgpu_vm *vm, u64 va, u64 range);
void vmgpu_vm_write_ptes(struct vmgpu_vm *vm, struct drm_gpuva *va);

#endif
