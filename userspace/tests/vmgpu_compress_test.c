// SPDX-License-Identifier: MIT
/*
 * Compression state belongs to the address space that made it (DOC:
 * compression owners): a new allocation is never decoded with what a
 * freed one left, one process gets half of the device's compressed-page
 * set at most, and a full set leaves pages raw rather than failing
 * anyone's job. The notifications that keep compressed data across
 * evictions: vmgpu_notify_test.c.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmgpu_notify.h"

/*
 * Pages a space compressed and freed without a notification keep their
 * state in the device until a physical write or the space goes. A new
 * allocation of the same space, likely on the same pages (TTM's pool gives
 * back what it got last), must not be decoded with it: a DECOMPRESS of
 * the new allocation leaves its zeros.
 */
TEST_F(notify, new_allocation_shows_no_compression_state)
{
	const uint64_t size = 256 * 1024;
	uint64_t first = 0, dirty;
	vmgpu_bo *bo;
	uint32_t *cpu;

	ASSERT_EQ(0, create_mapped(self, size, 0, 0, &bo, &cpu));
	fill_and_compress(_metadata, self, bo, cpu, size);
	ASSERT_EQ(0, destroy_and_wait(self->dev, bo));

	ASSERT_EQ(0, create_mapped(self, size, 0, 0, &bo, &cpu));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_DECOMPRESS, size));
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, size));
	dirty = vmgpu_test_nonzero(cpu, size, &first);
	EXPECT_EQ(0, dirty) TH_LOG("%llu bytes decoded with the old state, first at %#llx",
				   (unsigned long long)dirty, (unsigned long long)first);
	destroy(self->dev, bo);
}

/*
 * Another process's compression, in its own address space: 0 if its
 * COMPRESS job ran, its CPU then sees the pages XORed with xor (the
 * encoding, or 0 where the set had no place for them), and a later job of
 * its context runs too (a failed one would have made the context guilty);
 * else a step number.
 */
static int compress_in_other_process(uint64_t size, uint32_t xor)
{
	FIXTURE_DATA(notify) other = { 0 };
	vmgpu_bo *bo = NULL;
	uint32_t *cpu;
	int ret = 1;

	if (vmgpu_device_open(&other.dev) || vmgpu_query_device(other.dev, &other.info))
		return ret;
	other.aperture = vmgpu_test_aperture(other.dev);
	if (!vmgpu_context_create(other.dev, DRM_VMGPU_ENGINE_GPU_VA0, &other.ctx) &&
	    !create_mapped(&other, size, 0, 0, &bo, &cpu)) {
		cpu_fill(cpu, size);
		ret = cache_sync(&other, bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, size) ? 2 :
		      gpu_range(&other, VMGPU_OP_COMPRESS, size) ? 3 :
		      cache_sync(&other, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, size) ? 4 :
		      cpu_differs(cpu, size, xor) ? 5 :
		      gpu_range(&other, VMGPU_OP_DECOMPRESS, size) ? 6 : 0;
	}
	vmgpu_bo_unref(bo);
	vmgpu_context_unref(other.ctx);
	vmgpu_device_unref(other.dev);
	return ret;
}

/*
 * One process cannot take the device's whole compressed-page set for
 * itself (DOC: compression owners): a job compressing as much as the set
 * holds stops at its address space's quota, half of it, and another
 * process's COMPRESS still works.
 */
TEST_F_TIMEOUT(notify, one_process_cannot_fill_the_compressed_set, 180)
{
	const uint64_t whole = VMGPU_COMPRESS_MAX_PAGES * PAGE, small = 64 * 1024;
	uint64_t half_words = whole / 2 / 4, last_of_half = half_words - 1;
	vmgpu_bo *bo;
	uint32_t *cpu;
	int status;
	pid_t pid;

	ASSERT_EQ(0, create_mapped(self, whole, 0, 0, &bo, &cpu));
	/* Only the two pages at the boundary: 65536 CPU faults are slow. */
	cpu[last_of_half] = (uint32_t)vmgpu_test_word(0x0071f1, last_of_half);
	cpu[half_words] = (uint32_t)vmgpu_test_word(0x0071f1, half_words);
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, whole));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_COMPRESS, whole));
	ASSERT_EQ(0, cache_sync(self, bo, DRM_VMGPU_CACHE_SYNC_TO_CPU, whole));
	/* The last page of the first half encoded, the first of the rest not. */
	EXPECT_EQ((uint32_t)vmgpu_test_word(0x0071f1, last_of_half) ^ VMGPU_COMPRESS_XOR,
		  cpu[last_of_half]) TH_LOG("the quota's pages not compressed");
	EXPECT_EQ((uint32_t)vmgpu_test_word(0x0071f1, half_words), cpu[half_words])
		TH_LOG("compressed past the quota");

	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(compress_in_other_process(small, VMGPU_COMPRESS_XOR));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the other process's COMPRESS failed at step %d", WEXITSTATUS(status));
	destroy(self->dev, bo);
}

/* A second address space of this process that compresses size bytes. */
static int compress_in_second_space(FIXTURE_DATA(notify) *second, uint64_t size,
				    vmgpu_bo **bo)
{
	uint32_t *cpu;
	int ret = vmgpu_device_open(&second->dev);

	if (ret)
		return ret;
	second->aperture = vmgpu_test_aperture(second->dev);
	ret = vmgpu_query_device(second->dev, &second->info) ?:
	      vmgpu_context_create(second->dev, DRM_VMGPU_ENGINE_GPU_VA0, &second->ctx) ?:
	      create_mapped(second, size, 0, 0, bo, &cpu);
	return ret ?: gpu_range(second, VMGPU_OP_COMPRESS, size);
}

/*
 * What two address spaces hold of the compressed-page set fails nobody
 * else's job (contract 1.9): with the set full, a third process's COMPRESS
 * leaves its pages raw (its CPU sees them plain) and its context runs on.
 */
TEST_F_TIMEOUT(notify, a_full_compressed_set_fails_no_job, 240)
{
	const uint64_t half = VMGPU_COMPRESS_MAX_PAGES / 2 * PAGE, small = 64 * 1024;
	FIXTURE_DATA(notify) second = { 0 };
	vmgpu_bo *bo, *second_bo = NULL;
	uint32_t *cpu;
	int status;
	pid_t pid;

	ASSERT_EQ(0, create_mapped(self, half, 0, 0, &bo, &cpu));
	ASSERT_EQ(0, gpu_range(self, VMGPU_OP_COMPRESS, half));
	ASSERT_EQ(0, compress_in_second_space(&second, half, &second_bo));

	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(compress_in_other_process(small, 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the third process failed at step %d", WEXITSTATUS(status));
	if (second_bo)
		destroy(second.dev, second_bo);
	vmgpu_context_unref(second.ctx);
	vmgpu_device_unref(second.dev);
	destroy(self->dev, bo);
}

TEST_HARNESS_MAIN
