/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_PAGING_VM_H_
#define _VMGPU_PAGING_VM_H_

#include <linux/types.h>

struct drm_printer;
struct vmgpu_device;
struct vmgpu_res_cursor;
union vmgpu_cmd;

/**
 * struct vmgpu_pte_staging - entries for the paging process VA, which the
 * paging ring copies into its tables: one 4 KiB page per table touched
 */
struct vmgpu_pte_staging {
	/** @count: pages in @pages. */
	u32 count;
	/** @used: pages filled so far. */
	u32 used;
	/** @pages: coherent pages the device reads. */
	struct vmgpu_pte_page {
		/** @pages.cpu: CPU view. */
		__le64 *cpu;
		/** @pages.bus: bus address. */
		dma_addr_t bus;
	} pages[];
};

u64 vmgpu_paging_va_rule(u64 requested, u64 largest_segment);
int vmgpu_paging_vm_init(struct vmgpu_device *vdev);
u32 vmgpu_paging_vm_runs(u64 va, u64 size);
struct vmgpu_pte_staging *vmgpu_paging_vm_staging_alloc(struct vmgpu_device *vdev, u32 count);
void vmgpu_paging_vm_staging_free(struct vmgpu_device *vdev, struct vmgpu_pte_staging *st);
void vmgpu_paging_vm_unplug(struct vmgpu_device *vdev);
void vmgpu_paging_vm_staging_print(struct vmgpu_device *vdev, struct drm_printer *p);
int vmgpu_paging_vm_map(struct vmgpu_device *vdev, struct vmgpu_pte_staging *st, u64 va,
			struct vmgpu_res_cursor *cur, u64 size, bool writable,
			int (*add)(void *arg, const union vmgpu_cmd *cmd), void *arg);
int vmgpu_paging_vm_unmap(struct vmgpu_device *vdev, u64 va, u64 size,
			  int (*add)(void *arg, const union vmgpu_cmd *cmd), void *arg);

#endif
