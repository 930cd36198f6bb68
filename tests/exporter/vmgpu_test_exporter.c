// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 *
 * A dynamic dma-buf exporter for the debug kernel's PRIME tests: Linux
 * 6.12 has no driver a guest can use that moves its buffers (vgem and
 * udmabuf never do), so vmgpu's move_notify would go untested. Its
 * buffers are pages of system memory that it moves on request
 * (/dev/vmgpu-test-exporter, VMGPU_TEST_EXPORTER_MOVE): with the
 * reservation held it notifies the importers, waits for every fence, and
 * copies the buffer into new pages, which only succeeds if no importer
 * still has a mapping of the old ones; a buffer created so moves at its
 * first pin too. Not for production kernels.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/highmem.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vmgpu_test_exporter.h"

struct test_buffer {
	struct page **pages;
	unsigned long num_pages;
	/* Importers' mappings not unmapped yet, and pins; under the resv. */
	unsigned int mappings;
	unsigned int pins;
	unsigned int moves;
	bool move_on_pin;
};

static int test_buffer_alloc_pages(struct test_buffer *buf, struct page ***out)
{
	struct page **pages;
	unsigned long i;

	pages = kvcalloc(buf->num_pages, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	for (i = 0; i < buf->num_pages; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	*out = pages;
	return 0;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return -ENOMEM;
}

static void test_buffer_free_pages(struct test_buffer *buf, struct page **pages)
{
	unsigned long i;

	for (i = 0; i < buf->num_pages; i++)
		__free_page(pages[i]);
	kvfree(pages);
}

/*
 * Move the buffer to new pages, the reservation held. The importers are
 * told first, then every fence waited for; an importer that kept its
 * mapping makes the move fail (-EBUSY), the old pages kept.
 */
static int test_buffer_move(struct dma_buf *dmabuf, unsigned int *mappings_left)
{
	struct test_buffer *buf = dmabuf->priv;
	struct page **pages;
	unsigned long i;
	int ret;

	dma_resv_assert_held(dmabuf->resv);
	dma_buf_move_notify(dmabuf);
	dma_resv_wait_timeout(dmabuf->resv, DMA_RESV_USAGE_BOOKKEEP, false,
			      MAX_SCHEDULE_TIMEOUT);
	*mappings_left = buf->mappings;
	if (buf->mappings)
		return -EBUSY;
	ret = test_buffer_alloc_pages(buf, &pages);
	if (ret)
		return ret;
	for (i = 0; i < buf->num_pages; i++)
		copy_highpage(pages[i], buf->pages[i]);
	swap(buf->pages, pages);
	test_buffer_free_pages(buf, pages);
	buf->moves++;
	return 0;
}

static int test_pin(struct dma_buf_attachment *attach)
{
	struct test_buffer *buf = attach->dmabuf->priv;
	unsigned int left;

	if (buf->move_on_pin && !buf->pins)
		test_buffer_move(attach->dmabuf, &left);
	buf->pins++;
	return 0;
}

static void test_unpin(struct dma_buf_attachment *attach)
{
	struct test_buffer *buf = attach->dmabuf->priv;

	buf->pins--;
}

static struct sg_table *test_map(struct dma_buf_attachment *attach,
				 enum dma_data_direction dir)
{
	struct test_buffer *buf = attach->dmabuf->priv;
	struct sg_table *sgt;
	int ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table_from_pages(sgt, buf->pages, buf->num_pages, 0,
					buf->num_pages << PAGE_SHIFT, GFP_KERNEL);
	if (ret)
		goto err_free;
	ret = dma_map_sgtable(attach->dev, sgt, dir, 0);
	if (ret)
		goto err_table;
	buf->mappings++;
	return sgt;
err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void test_unmap(struct dma_buf_attachment *attach, struct sg_table *sgt,
		       enum dma_data_direction dir)
{
	struct test_buffer *buf = attach->dmabuf->priv;

	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
	buf->mappings--;
}

static void test_release(struct dma_buf *dmabuf)
{
	struct test_buffer *buf = dmabuf->priv;

	test_buffer_free_pages(buf, buf->pages);
	kfree(buf);
}

/* The CPU maps the pages the buffer has now; a move revokes nothing here. */
static int test_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct test_buffer *buf = dmabuf->priv;

	return vm_map_pages(vma, buf->pages, buf->num_pages);
}

static const struct dma_buf_ops test_dmabuf_ops = {
	.pin = test_pin,
	.unpin = test_unpin,
	.map_dma_buf = test_map,
	.unmap_dma_buf = test_unmap,
	.release = test_release,
	.mmap = test_mmap,
};

static int test_create(struct vmgpu_test_exporter_create *args)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct test_buffer *buf;
	struct dma_buf *dmabuf;
	int ret;

	if (!args->size || !PAGE_ALIGNED(args->size) || args->size > SZ_64M ||
	    args->flags & ~VMGPU_TEST_EXPORTER_MOVE_ON_PIN)
		return -EINVAL;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	buf->num_pages = args->size >> PAGE_SHIFT;
	buf->move_on_pin = args->flags & VMGPU_TEST_EXPORTER_MOVE_ON_PIN;
	ret = test_buffer_alloc_pages(buf, &buf->pages);
	if (ret) {
		kfree(buf);
		return ret;
	}
	info.ops = &test_dmabuf_ops;
	info.size = args->size;
	info.flags = O_RDWR | O_CLOEXEC;
	info.priv = buf;
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		test_buffer_free_pages(buf, buf->pages);
		kfree(buf);
		return PTR_ERR(dmabuf);
	}
	args->fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (args->fd < 0) {
		dma_buf_put(dmabuf);
		return args->fd;
	}
	return 0;
}

/* Move the buffer to new pages, as an exporter evicting it would. */
static int test_move(struct vmgpu_test_exporter_move *args)
{
	struct test_buffer *buf;
	struct dma_buf *dmabuf;
	int ret;

	dmabuf = dma_buf_get(args->fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	ret = -EINVAL;
	if (dmabuf->ops != &test_dmabuf_ops)
		goto put;
	buf = dmabuf->priv;
	ret = dma_resv_lock_interruptible(dmabuf->resv, NULL);
	if (ret)
		goto put;
	ret = buf->pins ? -EBUSY : test_buffer_move(dmabuf, &args->mappings_left);
	args->moves = buf->moves;
	dma_resv_unlock(dmabuf->resv);
put:
	dma_buf_put(dmabuf);
	return ret;
}

static long test_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	union {
		struct vmgpu_test_exporter_create create;
		struct vmgpu_test_exporter_move move;
	} args;
	int ret;

	switch (cmd) {
	case VMGPU_TEST_EXPORTER_CREATE:
		if (copy_from_user(&args.create, (void __user *)arg, sizeof(args.create)))
			return -EFAULT;
		ret = test_create(&args.create);
		if (!ret && copy_to_user((void __user *)arg, &args.create, sizeof(args.create)))
			ret = -EFAULT;
		return ret;
	case VMGPU_TEST_EXPORTER_MOVE:
		if (copy_from_user(&args.move, (void __user *)arg, sizeof(args.move)))
			return -EFAULT;
		ret = test_move(&args.move);
		if (copy_to_user((void __user *)arg, &args.move, sizeof(args.move)))
			ret = -EFAULT;
		return ret;
	default:
		return -ENOTTY;
	}
}

static const struct file_operations test_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = test_ioctl,
};

static struct miscdevice test_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vmgpu-test-exporter",
	.fops = &test_fops,
};

module_misc_device(test_misc);
MODULE_IMPORT_NS(DMA_BUF);
MODULE_DESCRIPTION("A dynamic dma-buf exporter for vmgpu's PRIME tests");
MODULE_LICENSE("GPL");
