/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#ifndef _VMGPU_IRQ_H_
#define _VMGPU_IRQ_H_

struct vmgpu_device;

int vmgpu_irq_init(struct vmgpu_device *vdev);

#endif
