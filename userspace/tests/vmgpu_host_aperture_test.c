// SPDX-License-Identifier: MIT
/*
 * CPU access beyond the VRAM BAR (seeds: CpuHostAperture, Lock2 rules):
 * - a CPU-accessible allocation may live where the BAR does not reach; a
 *   CPU access lends host-aperture pages to all of its pages there, and
 *   the device's moves carry what was written through them;
 * - unlocked allocations give their host-aperture pages back, least
 *   recently used first; locked ones keep them, and a lock that finds no
 *   room moves the allocation to system memory (or fails with
 *   DO_NOT_EVICT); without a host aperture every CPU access does so;
 * - an allocation without CPU access is locked in system memory only, is
 *   mapped only while locked, and stays out of VRAM until the unlock;
 * - visible and cached allocations lock where they are.
 * The layout comes from the queries: a memory segment with no CPU-visible
 * byte, and the host aperture's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB			(1ull << 20)
#define PAGE			4096ull
#define SMALL_SIZE		MiB
#define LOCKED_SIZE		(4 * MiB)
#define LOCKED_BOS		7
#define VA			0x400000000ull

/*
 * Where GEM_INFO reports an allocation without a physical reference in
 * system memory the device reaches: segment 0, resident (the aperture
 * segment's id is for allocations mapped into the aperture).
 */
#define SYSTEM			0
#define IN_SYSTEM		DRM_VMGPU_RESIDENCY_RESIDENT
/* In VRAM beyond the BAR, without and with host-aperture pages. */
#define BEYOND			(DRM_VMGPU_RESIDENCY_RESIDENT | DRM_VMGPU_RESIDENCY_CPU_INVISIBLE)
#define THROUGH_HAP		(BEYOND | DRM_VMGPU_RESIDENCY_HOST_APERTURE)

FIXTURE(hap) {
	vmgpu_device *dev;
	struct drm_vmgpu_query_device info;
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture;
	uint32_t inv;		/* a memory segment the BAR misses wholly, 0 if none */
	uint64_t inv_size;
	uint64_t hap_bytes;	/* host aperture size, 0 if none */
};

FIXTURE_SETUP(hap)
{
	uint32_t i;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_device(self->dev, &self->info));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &self->s));
	self->aperture = vmgpu_aperture_segment_id(self->s);
	ASSERT_NE(0, self->aperture);
	self->hap_bytes = self->info.host_aperture_size;
	for (i = 0; i < self->s->num_segments && !self->inv; i++) {
		const struct drm_vmgpu_segment *seg = &self->s->segments[i];

		if (seg->kind == DRM_VMGPU_SEGMENT_MEMORY && !seg->cpu_visible_size) {
			self->inv = seg->id;
			self->inv_size = seg->size;
		}
	}
}

FIXTURE_TEARDOWN(hap)
{
	free(self->s);
	vmgpu_device_unref(self->dev);
}

/* GEM_INFO: bo is in segment with exactly the residency flags given. */
static void expect_where(struct __test_metadata *_metadata, vmgpu_bo *bo, uint32_t segment,
			 uint32_t residency, const char *when)
{
	struct drm_vmgpu_gem_info info;

	ASSERT_EQ(0, vmgpu_bo_info(bo, &info)) TH_LOG("%s", when);
	EXPECT_EQ(segment, info.segment_id)
		TH_LOG("%s: in segment %u, expected %u", when, info.segment_id, segment);
	EXPECT_EQ(residency, info.residency)
		TH_LOG("%s: residency %#x, expected %#x", when, info.residency, residency);
}

/*
 * Write vmgpu_test_fill()'s pattern at both ends of every page, one CPU
 * access per page, cheap through an emulated host aperture.
 */
static void stamp(void *cpu, uint64_t size, uint64_t key)
{
	uint64_t *w = cpu;
	const uint64_t last = PAGE / 8 - 1;
	uint64_t i;

	for (i = 0; i < size / 8; i += PAGE / 8) {
		w[i] = vmgpu_test_word(key, i);
		w[i + last] = vmgpu_test_word(key, i + last);
	}
}

/* Pages whose stamps are wrong; *first is the offset of the first. */
static uint64_t stamp_check(const void *cpu, uint64_t size, uint64_t key, uint64_t *first)
{
	const uint64_t *w = cpu;
	const uint64_t last = PAGE / 8 - 1;
	uint64_t i, bad = 0;

	for (i = 0; i < size / 8; i += PAGE / 8) {
		if (w[i] == vmgpu_test_word(key, i) &&
		    w[i + last] == vmgpu_test_word(key, i + last))
			continue;
		if (!bad)
			*first = i * 8;
		bad++;
	}
	return bad;
}

/* Lock as is, for allocations the library cannot map: 0 or -errno. */
static int lock_raw(vmgpu_device *dev, vmgpu_bo *bo, uint32_t flags, uint64_t *offset)
{
	struct drm_vmgpu_gem_lock args = { .handle = vmgpu_bo_handle(bo), .flags = flags };
	int ret = vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_LOCK, &args);

	if (!ret)
		*offset = args.offset;
	return ret;
}

/* Read p in a forked child: the signal that killed it, 0 if it exited. */
static int signal_of_read(const void *p)
{
	const struct rlimit no_core = { 0, 0 };
	int status;
	pid_t child;

	fflush(stdout);
	fflush(stderr);
	child = fork();
	if (child < 0)
		return -1;
	if (!child) {
		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGBUS, SIG_DFL);
		(void)*(const volatile uint32_t *)p;
		_exit(0);
	}
	if (waitpid(child, &status, 0) != child)
		return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

/*
 * Beyond the BAR, written through the host aperture: the entries point at
 * the allocation's own VRAM pages, so an eviction copies what was written;
 * back in VRAM, the mapping and /proc/self/mem reach it again.
 */
TEST_F(hap, beyond_the_bar_through_the_host_aperture)
{
	const uint64_t key = 0x4a9001;
	uint64_t first = 0, bad;
	uint8_t *copy;
	vmgpu_bo *bo;
	void *cpu;
	int mem;

	if (!self->inv || self->hap_bytes < SMALL_SIZE)
		SKIP(return, "needs a memory segment beyond the BAR and a host aperture");
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->inv, self->aperture,
						SMALL_SIZE, &bo, &cpu));
	expect_where(_metadata, bo, self->inv, BEYOND, "mapped, not touched");

	vmgpu_test_fill(cpu, SMALL_SIZE, key);
	expect_where(_metadata, bo, self->inv, THROUGH_HAP, "written");
	EXPECT_EQ(0, vmgpu_test_check(cpu, SMALL_SIZE, key, &first))
		TH_LOG("read back wrong at %#llx", (unsigned long long)first);

	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	expect_where(_metadata, bo, SYSTEM, IN_SYSTEM, "evicted");
	bad = vmgpu_test_check(cpu, SMALL_SIZE, key, &first);
	EXPECT_EQ(0, bad) TH_LOG("%llu bytes lost by the eviction, first at %#llx",
				 (unsigned long long)bad, (unsigned long long)first);

	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	expect_where(_metadata, bo, self->inv, BEYOND, "made resident");
	/* The ptrace path first, before a fault maps anything. */
	copy = malloc(SMALL_SIZE);
	ASSERT_NE(NULL, copy);
	mem = open("/proc/self/mem", O_RDONLY);
	ASSERT_LE(0, mem);
	ASSERT_EQ(SMALL_SIZE, pread(mem, copy, SMALL_SIZE, (uintptr_t)cpu))
		TH_LOG("%s", strerror(errno));
	close(mem);
	bad = vmgpu_test_check(copy, SMALL_SIZE, key, &first);
	EXPECT_EQ(0, bad) TH_LOG("/proc/self/mem read %llu wrong bytes, first at %#llx",
				 (unsigned long long)bad, (unsigned long long)first);
	expect_where(_metadata, bo, self->inv, THROUGH_HAP, "read through /proc/self/mem");
	bad = vmgpu_test_check(cpu, SMALL_SIZE, key, &first);
	EXPECT_EQ(0, bad) TH_LOG("the mapping read %llu wrong bytes, first at %#llx",
				 (unsigned long long)bad, (unsigned long long)first);
	free(copy);
	vmgpu_bo_unref(bo);
}

/*
 * Without a host aperture the CPU could not map VRAM beyond the BAR in
 * place, so CPU-accessible allocations are never placed there: preferring
 * a segment wholly beyond the BAR lands in system memory, in a partly
 * visible one in its visible part, and a lock moves neither.
 */
TEST_F(hap, beyond_the_bar_without_host_aperture)
{
	const struct drm_vmgpu_segment *seg;
	uint32_t *cpu, *locked;
	vmgpu_bo *bo;
	uint32_t id;

	if (!self->inv || self->hap_bytes)
		SKIP(return, "needs a memory segment beyond the BAR and no host aperture");
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->inv, self->aperture,
						SMALL_SIZE, &bo, (void **)&cpu));
	expect_where(_metadata, bo, SYSTEM, IN_SYSTEM, "created");
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	expect_where(_metadata, bo, SYSTEM, IN_SYSTEM, "made resident");
	vmgpu_bo_unref(bo);

	for (id = 1; id < self->aperture; id++) {
		seg = vmgpu_test_segment(self->s, id);
		if (seg->cpu_visible_size >= SMALL_SIZE && seg->cpu_visible_size < seg->size)
			break;
	}
	if (id == self->aperture)
		return;
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, id, self->aperture, SMALL_SIZE,
						&bo, (void **)&cpu));
	expect_where(_metadata, bo, id, DRM_VMGPU_RESIDENCY_RESIDENT, "in the visible part");
	ASSERT_EQ(0, vmgpu_bo_lock(bo, DRM_VMGPU_LOCK_DO_NOT_EVICT, (void **)&locked));
	locked[0] = 0xc0ffee;
	expect_where(_metadata, bo, id, DRM_VMGPU_RESIDENCY_RESIDENT, "locked and written");
	EXPECT_EQ(0, vmgpu_bo_unlock(bo));
	vmgpu_bo_unref(bo);
}

/*
 * A and B fill the host aperture; touching C takes A's pages (least
 * recently used), touching A again takes B's. Nothing moves, and every
 * page keeps its data through the remapping.
 */
TEST_F(hap, unlocked_pages_reclaimed_lru_first)
{
	enum { A, B, C, N };
	const uint64_t size[N] = { self->hap_bytes / 2, self->hap_bytes / 2,
				   self->hap_bytes / 4 };
	const uint64_t key[N] = { 0x4a9a, 0x4a9b, 0x4a9c };
	uint64_t first = 0;
	vmgpu_bo *bo[N];
	void *cpu[N];
	int i;

	if (!self->inv || !self->hap_bytes || self->inv_size < 2 * self->hap_bytes)
		SKIP(return, "needs a host aperture and twice its size beyond the BAR");
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->inv, self->aperture,
							size[i], &bo[i], &cpu[i]));

	stamp(cpu[A], size[A], key[A]);
	expect_where(_metadata, bo[A], self->inv, THROUGH_HAP, "A touched");
	stamp(cpu[B], size[B], key[B]);
	expect_where(_metadata, bo[A], self->inv, THROUGH_HAP, "A, then B touched");
	expect_where(_metadata, bo[B], self->inv, THROUGH_HAP, "B touched");

	stamp(cpu[C], size[C], key[C]);
	expect_where(_metadata, bo[A], self->inv, BEYOND, "A least recent when C came");
	expect_where(_metadata, bo[B], self->inv, THROUGH_HAP, "B more recent than A");
	expect_where(_metadata, bo[C], self->inv, THROUGH_HAP, "C touched");

	stamp(cpu[A], size[A], key[A]);
	expect_where(_metadata, bo[A], self->inv, THROUGH_HAP, "A touched again");
	expect_where(_metadata, bo[B], self->inv, BEYOND, "B least recent when A came back");
	expect_where(_metadata, bo[C], self->inv, THROUGH_HAP, "C more recent than B");

	for (i = 0; i < N; i++) {
		EXPECT_EQ(0, stamp_check(cpu[i], size[i], key[i], &first))
			TH_LOG("allocation %c wrong at %#llx", 'A' + i, (unsigned long long)first);
		vmgpu_bo_unref(bo[i]);
	}
}

/*
 * Four locks of a quarter of the host aperture each hold all of it; the
 * fifth and sixth go to system memory, a seventh with DO_NOT_EVICT is
 * refused until a lock ends, and then takes the unlocked one's pages.
 */
TEST_F_TIMEOUT(hap, locked_pages_stay_and_overflow_goes_to_system, 120)
{
	const uint64_t size = self->hap_bytes / 4;
	vmgpu_bo *bo[LOCKED_BOS], *spill;
	void *cpu[LOCKED_BOS], *locked, *spill_cpu;
	uint64_t first = 0, bad;
	char when[64];
	int i;

	if (!self->inv || !self->hap_bytes || self->inv_size < (LOCKED_BOS + 1) * size)
		SKIP(return, "needs a host aperture and twice its size beyond the BAR");
	for (i = 0; i < LOCKED_BOS; i++)
		ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->inv, self->aperture,
							size, &bo[i], &cpu[i]));

	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, vmgpu_bo_lock(bo[i], 0, &locked)) TH_LOG("lock %d", i + 1);
		EXPECT_EQ(cpu[i], locked);
		snprintf(when, sizeof(when), "lock %d", i + 1);
		if (i < 4)
			expect_where(_metadata, bo[i], self->inv, THROUGH_HAP, when);
		else
			expect_where(_metadata, bo[i], SYSTEM, IN_SYSTEM, when);
		vmgpu_test_fill(cpu[i], size, 0x4a9400 + i);
	}
	EXPECT_EQ(-ENOSPC, vmgpu_bo_lock(bo[6], DRM_VMGPU_LOCK_DO_NOT_EVICT, NULL));
	expect_where(_metadata, bo[6], self->inv, BEYOND, "lock 7 refused");

	/* Every page locked: a CPU access without a lock moves instead. */
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->inv, self->aperture, size,
						&spill, &spill_cpu));
	expect_where(_metadata, spill, self->inv, BEYOND, "another one, not touched yet");
	vmgpu_test_fill(spill_cpu, size, 0x4a94ff);
	expect_where(_metadata, spill, SYSTEM, IN_SYSTEM, "touched with every page locked");
	bad = vmgpu_test_check(spill_cpu, size, 0x4a94ff, &first);
	EXPECT_EQ(0, bad) TH_LOG("%llu bytes wrong after the move, first at %#llx",
				 (unsigned long long)bad, (unsigned long long)first);
	vmgpu_bo_unref(spill);

	ASSERT_EQ(0, vmgpu_bo_unlock(bo[0]));
	expect_where(_metadata, bo[0], self->inv, THROUGH_HAP, "unlocked, pages not needed yet");
	ASSERT_EQ(0, vmgpu_bo_lock(bo[6], DRM_VMGPU_LOCK_DO_NOT_EVICT, NULL));
	expect_where(_metadata, bo[6], self->inv, THROUGH_HAP, "lock 7 after an unlock");
	expect_where(_metadata, bo[0], self->inv, BEYOND, "its pages taken by lock 7");
	for (i = 1; i < 4; i++) {
		snprintf(when, sizeof(when), "lock %d, still held", i + 1);
		expect_where(_metadata, bo[i], self->inv, THROUGH_HAP, when);
	}
	vmgpu_test_fill(cpu[6], size, 0x4a9400 + 6);

	for (i = 1; i < LOCKED_BOS; i++)
		ASSERT_EQ(0, vmgpu_bo_unlock(bo[i])) TH_LOG("unlock %d", i + 1);
	for (i = 0; i < LOCKED_BOS; i++) {
		ASSERT_EQ(0, vmgpu_bo_evict(bo[i]));
		snprintf(when, sizeof(when), "allocation %d evicted", i + 1);
		expect_where(_metadata, bo[i], SYSTEM, IN_SYSTEM, when);
		bad = vmgpu_test_check(cpu[i], size, 0x4a9400 + i, &first);
		EXPECT_EQ(0, bad) TH_LOG("allocation %d: %llu bytes wrong, first at %#llx", i + 1,
					 (unsigned long long)bad, (unsigned long long)first);
		vmgpu_bo_unref(bo[i]);
	}
}

/*
 * Another file's allocation takes the whole segment: the locked one is
 * evicted under the lock, its mapping follows it both ways.
 */
TEST_F_TIMEOUT(hap, eviction_during_a_lock, 60)
{
	const uint64_t p1 = 0x4a95001, p2 = 0x4a95002;
	uint64_t first = 0;
	vmgpu_device *other;
	vmgpu_bo *x, *big;
	void *cpu, *locked;

	if (!self->inv || self->hap_bytes < LOCKED_SIZE)
		SKIP(return, "needs a memory segment beyond the BAR and a host aperture");
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->inv, self->aperture,
						LOCKED_SIZE, &x, &cpu));
	ASSERT_EQ(0, vmgpu_bo_lock(x, 0, &locked));
	EXPECT_EQ(cpu, locked);
	expect_where(_metadata, x, self->inv, THROUGH_HAP, "locked");
	vmgpu_test_fill(cpu, LOCKED_SIZE, p1);

	ASSERT_EQ(0, vmgpu_device_open(&other));
	ASSERT_EQ(0, vmgpu_test_create(other, self->inv_size, 0, 1u << self->inv, self->inv, &big));
	ASSERT_EQ(0, vmgpu_bo_make_resident(big));
	EXPECT_EQ(self->inv, segment_of(big));
	expect_where(_metadata, x, SYSTEM, IN_SYSTEM, "evicted while locked");
	EXPECT_EQ(0, vmgpu_test_check(cpu, LOCKED_SIZE, p1, &first))
		TH_LOG("the locked mapping read wrong at %#llx after the eviction",
		       (unsigned long long)first);
	vmgpu_test_fill(cpu, LOCKED_SIZE, p2);

	/* Idle, so that its memory is free once it is closed. */
	ASSERT_EQ(0, vmgpu_bo_wait(big, WAIT_NS, 0));
	vmgpu_bo_unref(big);
	vmgpu_device_unref(other);
	ASSERT_EQ(0, vmgpu_bo_make_resident(x));
	expect_where(_metadata, x, self->inv, BEYOND, "made resident while locked");
	EXPECT_EQ(0, vmgpu_test_check(cpu, LOCKED_SIZE, p2, &first))
		TH_LOG("the locked mapping read wrong at %#llx after coming back",
		       (unsigned long long)first);
	expect_where(_metadata, x, self->inv, THROUGH_HAP, "read again while locked");
	EXPECT_EQ(0, vmgpu_bo_unlock(x));
	vmgpu_bo_unref(x);
}

/*
 * Without CPU access, a lock moves the allocation to system memory if the
 * aperture is in its set (refused otherwise, or with DO_NOT_EVICT) and
 * keeps it there until the unlock, which revokes the mapping.
 */
TEST_F(hap, not_cpu_accessible_lock_rules)
{
	const uint32_t mem = 1, key = 0x4a96;
	const struct drm_vmgpu_segment *seg = vmgpu_test_segment(self->s, mem);
	struct drm_vmgpu_gem_mmap_offset mmap_args = { 0 };
	const int fd = vmgpu_device_fd(self->dev);
	union vmgpu_cmd cmd = cmd_fill(VA, SMALL_SIZE, 0x4a96f111);
	uint32_t in_mem;
	uint64_t offset = 0, first = 0;
	vmgpu_context *ctx;
	void *map, *again;
	vmgpu_bo *n1, *n2;

	ASSERT_NE(NULL, seg);
	ASSERT_EQ(DRM_VMGPU_SEGMENT_MEMORY, seg->kind);
	/* Allocations without CPU access go beyond the BAR where there is any. */
	in_mem = DRM_VMGPU_RESIDENCY_RESIDENT |
		 (seg->cpu_visible_size < seg->size ? DRM_VMGPU_RESIDENCY_CPU_INVISIBLE : 0);

	/* The aperture in the set: locked in system memory. */
	ASSERT_EQ(0, vmgpu_test_create(self->dev, SMALL_SIZE, 0, 1u << mem | 1u << self->aperture,
				       mem, &n1));
	expect_where(_metadata, n1, mem, in_mem, "N1 created");
	mmap_args.handle = vmgpu_bo_handle(n1);
	EXPECT_EQ(-EINVAL, vmgpu_test_ioctl(self->dev, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET,
					    &mmap_args));
	EXPECT_EQ(-ENOSPC, lock_raw(self->dev, n1, DRM_VMGPU_LOCK_DO_NOT_EVICT, &offset));
	expect_where(_metadata, n1, mem, in_mem, "N1 lock refused");
	ASSERT_EQ(0, lock_raw(self->dev, n1, 0, &offset));
	expect_where(_metadata, n1, SYSTEM, IN_SYSTEM, "N1 locked");
	map = mmap(NULL, SMALL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
	ASSERT_NE(MAP_FAILED, map) TH_LOG("%s", strerror(errno));
	vmgpu_test_fill(map, SMALL_SIZE, key);
	ASSERT_EQ(0, vmgpu_bo_make_resident(n1));
	expect_where(_metadata, n1, SYSTEM, IN_SYSTEM, "N1 made resident while locked");
	EXPECT_EQ(0, vmgpu_test_check(map, SMALL_SIZE, key, &first));

	ASSERT_EQ(0, vmgpu_bo_unlock(n1));
	EXPECT_EQ(EACCES, vmgpu_test_try_mmap(fd, SMALL_SIZE, offset));
	EXPECT_EQ(SIGBUS, signal_of_read(map)) TH_LOG("the unlock left the mapping usable");
	ASSERT_EQ(0, vmgpu_bo_make_resident(n1));
	expect_where(_metadata, n1, mem, in_mem, "N1 made resident after the unlock");
	ASSERT_EQ(0, lock_raw(self->dev, n1, 0, &offset));
	expect_where(_metadata, n1, SYSTEM, IN_SYSTEM, "N1 locked again");
	again = mmap(NULL, SMALL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
	ASSERT_NE(MAP_FAILED, again) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, vmgpu_test_check(again, SMALL_SIZE, key, &first))
		TH_LOG("wrong at %#llx after the round trip", (unsigned long long)first);
	EXPECT_EQ(0, vmgpu_bo_unlock(n1));
	munmap(again, SMALL_SIZE);
	munmap(map, SMALL_SIZE);
	vmgpu_bo_unref(n1);

	/*
	 * No aperture in the set: only lockable out of the device's reach,
	 * and kept there, from MakeResident and from a job that maps it.
	 */
	ASSERT_EQ(0, vmgpu_test_create(self->dev, SMALL_SIZE, 0, 1u << mem, mem, &n2));
	expect_where(_metadata, n2, mem, in_mem, "N2 created");
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx));
	ASSERT_EQ(0, vmgpu_vm_map(n2, 0, VA, SMALL_SIZE, 0));
	EXPECT_EQ(-EINVAL, lock_raw(self->dev, n2, 0, &offset));
	expect_where(_metadata, n2, mem, in_mem, "N2 lock refused");
	ASSERT_EQ(0, vmgpu_bo_evict(n2));
	expect_where(_metadata, n2, 0, 0, "N2 evicted");
	ASSERT_EQ(0, lock_raw(self->dev, n2, 0, &offset));
	EXPECT_EQ(-EBUSY, vmgpu_bo_make_resident(n2));
	expect_where(_metadata, n2, 0, 0, "N2 locked, made resident");
	EXPECT_EQ(-EBUSY, vmgpu_context_submit(ctx, &cmd, 1, NULL, 0, NULL, 0, NULL));
	expect_where(_metadata, n2, 0, 0, "N2 locked, submitted");
	ASSERT_EQ(0, vmgpu_bo_unlock(n2));
	ASSERT_EQ(0, vmgpu_bo_make_resident(n2));
	expect_where(_metadata, n2, mem, in_mem, "N2 made resident after the unlock");
	EXPECT_EQ(0, run(ctx, fd, &cmd, 1)) TH_LOG("the job still refused after the unlock");
	vmgpu_context_unref(ctx);
	vmgpu_bo_unref(n2);
}

/* Where the BAR reaches, a lock moves nothing and borrows no page. */
TEST_F(hap, visible_allocations_lock_in_place)
{
	const struct drm_vmgpu_segment *seg = visible_memory_segment(self->s, SMALL_SIZE);
	const uint64_t key = 0x4a97;
	uint64_t first = 0;
	void *cpu, *locked;
	vmgpu_bo *bo;

	if (!seg)
		SKIP(return, "no memory segment has CPU-visible room");
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, seg->id, self->aperture, SMALL_SIZE,
						&bo, &cpu));
	expect_where(_metadata, bo, seg->id, DRM_VMGPU_RESIDENCY_RESIDENT, "created");
	ASSERT_EQ(0, vmgpu_bo_lock(bo, 0, &locked));
	EXPECT_EQ(cpu, locked);
	expect_where(_metadata, bo, seg->id, DRM_VMGPU_RESIDENCY_RESIDENT, "locked");
	vmgpu_test_fill(locked, SMALL_SIZE, key);
	expect_where(_metadata, bo, seg->id, DRM_VMGPU_RESIDENCY_RESIDENT, "written");
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));
	/* Nothing to move: DO_NOT_EVICT has nothing to refuse. */
	ASSERT_EQ(0, vmgpu_bo_lock(bo, DRM_VMGPU_LOCK_DO_NOT_EVICT, NULL));
	expect_where(_metadata, bo, seg->id, DRM_VMGPU_RESIDENCY_RESIDENT, "locked, do not evict");
	ASSERT_EQ(0, vmgpu_bo_unlock(bo));

	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	expect_where(_metadata, bo, SYSTEM, IN_SYSTEM, "evicted");
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	expect_where(_metadata, bo, seg->id, DRM_VMGPU_RESIDENCY_RESIDENT, "made resident");
	EXPECT_EQ(0, vmgpu_test_check(cpu, SMALL_SIZE, key, &first))
		TH_LOG("wrong at %#llx after the round trip", (unsigned long long)first);
	vmgpu_bo_unref(bo);
}

/* A cached allocation lives in system memory: locked there, in place. */
TEST_F(hap, cached_lock)
{
	const uint64_t key = 0x4a98;
	uint64_t first = 0;
	vmgpu_bo *bo;
	void *cpu;

	ASSERT_EQ(0, vmgpu_test_create(self->dev, SMALL_SIZE,
				       DRM_VMGPU_ALLOC_CACHED | DRM_VMGPU_ALLOC_CPU_ACCESS,
				       1u << self->aperture, self->aperture, &bo));
	expect_where(_metadata, bo, SYSTEM, IN_SYSTEM, "created");
	ASSERT_EQ(0, vmgpu_bo_lock(bo, DRM_VMGPU_LOCK_DO_NOT_EVICT, &cpu));
	expect_where(_metadata, bo, SYSTEM, IN_SYSTEM, "locked");
	vmgpu_test_fill(cpu, SMALL_SIZE, key);
	EXPECT_EQ(0, vmgpu_test_check(cpu, SMALL_SIZE, key, &first))
		TH_LOG("wrong at %#llx", (unsigned long long)first);
	EXPECT_EQ(0, vmgpu_bo_unlock(bo));
	vmgpu_bo_unref(bo);
}

TEST_HARNESS_MAIN
