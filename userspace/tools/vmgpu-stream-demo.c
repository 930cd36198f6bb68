// SPDX-License-Identifier: MIT
/*
 * vmgpu-stream-demo: a streaming vertex buffer through the UMD layer. Each
 * frame maps the 64 KiB dynamic buffer with WRITE_DISCARD, appends four
 * 4 KiB batches of "vertices" with WRITE_NO_OVERWRITE, each drawn by a
 * copy into a target buffer and a 2 ms busy NOP, and submits. The buffer's
 * GPU VA shows the storage changing under renaming, never a wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libvmgpu.h"

#define VB_SIZE		(64u << 10)
#define BATCH_SIZE	(4u << 10)
#define BATCHES		4
#define FRAMES		8
#define DRAW_US		2000

static void check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "vmgpu-stream-demo: %s: %s\n", what, strerror(-ret));
		exit(1);
	}
}

/* Vertex word i of a batch of a frame. */
static uint32_t vertex(int frame, int batch, uint32_t i)
{
	return (uint32_t)frame << 24 | (uint32_t)batch << 16 | i;
}

int main(void)
{
	uint64_t ioctls, start_ioctls, maps = 0;
	struct vmgpu_queue_stats st;
	vmgpu_buffer *vb, *target;
	uint32_t *v, i;
	vmgpu_device *dev;
	vmgpu_queue *q;
	int frame, b, bad = 0;
	void *p;

	check(vmgpu_device_open(&dev), "open");
	check(vmgpu_queue_create(dev, &(struct vmgpu_queue_info){
					.engine = DRM_VMGPU_ENGINE_GPU_VA0 }, &q),
	      "queue create");
	check(vmgpu_buffer_create(q, VB_SIZE, 0, &vb), "vertex buffer create");
	check(vmgpu_buffer_create(q, BATCHES * BATCH_SIZE, 0, &target), "target create");
	start_ioctls = vmgpu_device_ioctl_count(dev);

	printf("\nstreaming vertex buffer (%u KiB, %d x %u KiB per frame):\n",
	       VB_SIZE >> 10, BATCHES, BATCH_SIZE >> 10);
	for (frame = 0; frame < FRAMES; frame++) {
		ioctls = vmgpu_device_ioctl_count(dev);
		/* Orphan last frame's storage the GPU may still draw from. */
		check(vmgpu_buffer_map(vb, VMGPU_MAP_WRITE_DISCARD, 0, 0, VB_SIZE, &p),
		      "map discard");
		check(vmgpu_buffer_unmap(vb), "unmap");
		maps++;
		for (b = 0; b < BATCHES; b++) {
			uint64_t off = (uint64_t)b * BATCH_SIZE;

			/* Append: this range no recorded draw uses. */
			check(vmgpu_buffer_map(vb, VMGPU_MAP_WRITE_NO_OVERWRITE, 0, off,
					       BATCH_SIZE, &p), "map no-overwrite");
			v = p;
			for (i = 0; i < BATCH_SIZE / 4; i++)
				v[i] = vertex(frame, b, i);
			check(vmgpu_buffer_unmap(vb), "unmap");
			maps++;
			check(vmgpu_queue_copy(q, target, off, vb, off, BATCH_SIZE), "copy");
			check(vmgpu_queue_delay(q, DRAW_US), "delay");
		}
		check(vmgpu_queue_flush(q), "flush");
		vmgpu_queue_stats(q, &st);
		printf("  frame %d: vertex buffer at GPU VA 0x%llx, %llu renames, "
		       "%llu KiB renamed in flight, %llu ioctls\n", frame,
		       (unsigned long long)vmgpu_buffer_gpu_va(vb),
		       (unsigned long long)st.renames,
		       (unsigned long long)(st.renamed_bytes_now >> 10),
		       (unsigned long long)(vmgpu_device_ioctl_count(dev) - ioctls));
	}

	check(vmgpu_queue_finish(q, 10000000000ull), "finish");
	check(vmgpu_buffer_map(target, VMGPU_MAP_READ, 0, 0, BATCHES * BATCH_SIZE, &p),
	      "map read");
	maps++;
	v = p;
	for (b = 0; b < BATCHES; b++)
		for (i = 0; i < BATCH_SIZE / 4; i++)
			if (v[b * BATCH_SIZE / 4 + i] != vertex(FRAMES - 1, b, i) && !bad++)
				printf("  target word %u: 0x%08x, expected 0x%08x\n",
				       b * BATCH_SIZE / 4 + i, v[b * BATCH_SIZE / 4 + i],
				       vertex(FRAMES - 1, b, i));
	check(vmgpu_buffer_unmap(target), "unmap");
	printf("\nlast frame's vertices in the target: %s\n", bad ? "MISMATCH" : "ok");

	vmgpu_queue_stats(q, &st);
	printf("\nqueue stats:\n");
	printf("  renames %llu, recycled %llu, allocations %llu, submissions %llu\n",
	       (unsigned long long)st.renames, (unsigned long long)st.recycled,
	       (unsigned long long)st.allocations, (unsigned long long)st.submissions);
	printf("  %.2f ioctls per map (%llu maps)\n",
	       (double)(vmgpu_device_ioctl_count(dev) - start_ioctls) / maps,
	       (unsigned long long)maps);

	vmgpu_buffer_unref(vb);
	vmgpu_buffer_unref(target);
	vmgpu_queue_unref(q);
	vmgpu_device_unref(dev);
	return bad ? 1 : 0;
}
