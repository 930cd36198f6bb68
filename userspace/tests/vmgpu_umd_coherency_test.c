// SPDX-License-Identifier: MIT
/*
 * The UMD layer of libvmgpu on a device without I/O coherency (seed: "I/O
 * coherency"): the UMD makes the cache-sync calls itself, batched per
 * submission, and only where the data needs them; on a coherent device it
 * makes none. The configurations run it both ways (VMGPU_NONCOHERENT).
 */
#include "vmgpu_umd.h"

/*
 * The device writes back whole 4 KiB lines: a CPU write beside bytes the
 * GPU wrote in the same line must survive the line's write back (the UMD
 * syncs the line before the CPU writes). Trivially true when coherent.
 */
TEST_F(umd, cpu_write_beside_gpu_write_in_one_line)
{
	vmgpu_buffer *b = BUF(SMALL), *dst = BUF(SMALL);

	ASSERT_EQ(0, vmgpu_queue_fill(self->q, b, 256, 256, NEW));
	ASSERT_EQ(0, vmgpu_queue_finish(self->q, WAIT_NS));
	ASSERT_EQ(0, write_pat(b, VMGPU_MAP_WRITE, 0, 256, WORD, OLD));
	ASSERT_EQ(0, vmgpu_queue_copy(self->q, dst, 0, b, 0, 512));
	ASSERT_EQ(0, vmgpu_queue_finish(self->q, WAIT_NS));
	EXPECT_EQ(0, check(dst, 0, 256, WORD, OLD));
	EXPECT_EQ(0, check(dst, 256, 256, WORD, NEW));
}

/*
 * Cache-sync calls: none on a coherent device; on a non-coherent one one
 * batched call per submission for what the CPU wrote, one per CPU read of
 * what the GPU wrote, none for a CPU read of what the GPU only read.
 */
TEST_F(umd, coherency_sync_calls)
{
	enum { N = 3, SZ = 128 * KiB };		/* allocations of their own */
	struct vmgpu_queue_stats s0, s1, s2, s3, s4;
	vmgpu_buffer *x[N], *y[N];
	int i;

	for (i = 0; i < N; i++) {
		x[i] = BUF(SZ);
		y[i] = BUF(SZ);
	}
	s0 = stats_of(self->q);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, write_key(x[i], VMGPU_MAP_WRITE, 0, SZ, 120 + i));
		ASSERT_EQ(0, vmgpu_queue_copy(self->q, y[i], 0, x[i], 0, SZ));
	}
	ASSERT_EQ(0, vmgpu_queue_flush(self->q));
	s1 = stats_of(self->q);
	ASSERT_EQ(0, vmgpu_queue_finish(self->q, WAIT_NS));
	s2 = stats_of(self->q);
	EXPECT_EQ(0, check_key(y[0], 0, SZ, 120));	/* the GPU wrote it */
	s3 = stats_of(self->q);
	EXPECT_EQ(0, check_key(x[0], 0, SZ, 120));	/* the GPU only read it */
	s4 = stats_of(self->q);
	if (self->noncoherent) {
		EXPECT_EQ(s0.cache_syncs + 1, s1.cache_syncs)
			TH_LOG("the CPU writes of one submission: one call");
		EXPECT_EQ(s0.cache_sync_ranges + N, s1.cache_sync_ranges);
		EXPECT_EQ(s2.cache_syncs + 1, s3.cache_syncs)
			TH_LOG("a CPU read of a GPU write: one call");
		EXPECT_EQ(s3.cache_syncs, s4.cache_syncs)
			TH_LOG("a CPU read of what the GPU only read: no call");
	} else {
		EXPECT_EQ(0, s4.cache_syncs);
		EXPECT_EQ(0, s4.cache_sync_ranges);
	}
}

#define CASE_SIZE		(16 * KiB)

/*
 * The GPU reads x (its lines now in the device cache), the CPU rewrites it,
 * the GPU copies it to z: z has what the GPU saw of the CPU's write. No
 * CPU read in between: a cache-sync call flushes the whole device cache.
 */
static void cpu_write_gpu_read(struct __test_metadata *_metadata, FIXTURE_DATA(umd) *self,
			       uint32_t debug)
{
	vmgpu_buffer *x = BUF(CASE_SIZE), *y = BUF(CASE_SIZE), *z = BUF(CASE_SIZE);
	uint32_t want = self->noncoherent && debug ? OLD : NEW;

	ASSERT_EQ(0, write_pat(x, VMGPU_MAP_WRITE, 0, CASE_SIZE, WORD, OLD));
	ASSERT_EQ(0, vmgpu_queue_copy(self->q, y, 0, x, 0, CASE_SIZE));
	ASSERT_EQ(0, vmgpu_queue_finish(self->q, WAIT_NS));

	vmgpu_queue_set_debug(self->q, debug);
	ASSERT_EQ(0, write_pat(x, VMGPU_MAP_WRITE, 0, CASE_SIZE, WORD, NEW));
	ASSERT_EQ(0, vmgpu_queue_copy(self->q, z, 0, x, 0, CASE_SIZE));
	ASSERT_EQ(0, vmgpu_queue_finish(self->q, WAIT_NS));
	EXPECT_EQ(0, check(z, 0, CASE_SIZE, WORD, want))
		TH_LOG("debug %#x: the GPU did not read %#x", debug, want);
	EXPECT_EQ(0, check(y, 0, CASE_SIZE, WORD, OLD));
	vmgpu_queue_set_debug(self->q, 0);
}

/* The GPU fills y, which the CPU wrote and the GPU read before: the CPU reads it. */
static void gpu_write_cpu_read(struct __test_metadata *_metadata, FIXTURE_DATA(umd) *self,
			       uint32_t debug)
{
	vmgpu_buffer *y = BUF(CASE_SIZE);
	uint32_t want = self->noncoherent && debug ? OLD : NEW;

	ASSERT_EQ(0, write_pat(y, VMGPU_MAP_WRITE, 0, CASE_SIZE, WORD, OLD));
	ASSERT_EQ(0, vmgpu_queue_copy(self->q, self->scratch, 0, y, 0, CASE_SIZE));
	ASSERT_EQ(0, vmgpu_queue_finish(self->q, WAIT_NS));

	vmgpu_queue_set_debug(self->q, debug);
	ASSERT_EQ(0, vmgpu_queue_fill(self->q, y, 0, CASE_SIZE, NEW));
	ASSERT_EQ(0, vmgpu_queue_finish(self->q, WAIT_NS));
	EXPECT_EQ(0, check(y, 0, CASE_SIZE, WORD, want))
		TH_LOG("debug %#x: the CPU did not read %#x", debug, want);
	vmgpu_queue_set_debug(self->q, 0);
}

/*
 * The data is right with the cache-sync calls; on a non-coherent device,
 * leaving out either one reads stale data (on a coherent one it does not).
 */
TEST_F(umd, noncoherent_data)
{
	static const uint32_t debug[] = { 0, VMGPU_QUEUE_DEBUG_NO_SYNC_TO_DEVICE };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(debug); i++) {
		cpu_write_gpu_read(_metadata, self, debug[i]);
		gpu_write_cpu_read(_metadata, self, debug[i] ? VMGPU_QUEUE_DEBUG_NO_SYNC_TO_CPU : 0);
	}
}

TEST_HARNESS_MAIN
