// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * Deliberately broken, for the debug kernel only: each value of the bug
 * parameter commits one of the mistakes the guest log checks must catch,
 * so that a checker that cannot fire (an option lost from the kernel
 * configuration, a pattern the report no longer matches) fails the run.
 * Loading it always fails (-EAGAIN) so that it can be loaded again.
 */

#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

static char *bug = "";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "fence-alloc, kasan, kmemleak, dma-api or atomic-sleep");

static void *leaked;

/* dma-fence rules: no allocation that may reclaim while signalling. */
static void checker_fence_alloc(void)
{
	bool cookie = dma_fence_begin_signalling();

	kfree(kmalloc(64, GFP_KERNEL));
	dma_fence_end_signalling(cookie);
}

static void checker_kasan(void)
{
	volatile char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	kfree((void *)p);
	(void)p[8];
}

static void checker_kmemleak(void)
{
	leaked = kmalloc(128, GFP_KERNEL);
	leaked = NULL;
}

static void checker_dma_api(void)
{
	struct platform_device *pdev;

	pdev = platform_device_register_simple("vmgpu-checker", -1, NULL, 0);
	if (IS_ERR(pdev))
		return;
	if (!dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32)))
		dma_unmap_single(&pdev->dev, 0x12345000, PAGE_SIZE, DMA_TO_DEVICE);
	platform_device_unregister(pdev);
}

static void checker_atomic_sleep(void)
{
	static DEFINE_SPINLOCK(lock);

	spin_lock(&lock);
	msleep(1);
	spin_unlock(&lock);
}

static int __init checker_init(void)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} bugs[] = {
		{ "fence-alloc", checker_fence_alloc },
		{ "kasan", checker_kasan },
		{ "kmemleak", checker_kmemleak },
		{ "dma-api", checker_dma_api },
		{ "atomic-sleep", checker_atomic_sleep },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(bugs); i++)
		if (!strcmp(bug, bugs[i].name))
			bugs[i].fn();
	return -EAGAIN;
}
module_init(checker_init);

MODULE_DESCRIPTION("Deliberate bugs that the vmgpu debug-kernel log checks must catch");
MODULE_LICENSE("GPL");
