// SPDX-License-Identifier: MIT
/*
 * Eviction under pressure: several processes together allocate several
 * times the VRAM, then bring their allocations back in turn with
 * MakeResident, each call evicting others' allocations to system memory.
 * Every byte must survive every move. The paging job reserve behind the
 * moves has its own tests (vmgpu_reserve_test).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB			(1ull << 20)
#define EVICT_CHILDREN		4
#define EVICT_BO_SIZE		(4 * MiB)
#define EVICT_CYCLES		3
/* Allocate this many times the VRAM ... */
#define EVICT_OVERCOMMIT	4
/*
 * ... but keep what cannot be in CPU-visible VRAM under this: the evicted
 * allocations then fit in the guest's RAM with room to spare, and a small
 * BAR, where every CPU write beyond it goes through the host aperture,
 * stays within the timeout on the debug kernel of a loaded 2-core host
 * (about 200 s of 240 with 1 GiB; the overcommit is still 2.25 times).
 */
#define EVICT_SYSTEM_BUDGET	(512 * MiB)

/* Exit statuses of a child. */
#define CHILD_INTACT		0
#define CHILD_CORRUPT		1
#define CHILD_ERROR		2

/* What a child reports, in memory shared with the parent. */
struct evict_result {
	uint64_t corrupt;	/* bytes that differed from the pattern */
	uint64_t evicted;	/* found outside VRAM before MakeResident */
	uint64_t resident;	/* found in VRAM right after MakeResident */
	uint64_t checked;	/* MakeResident and verify rounds */
};

struct evict_child {
	int id;
	uint32_t count;		/* allocations */
	uint32_t memory;	/* mask of the memory segments */
	uint32_t aperture;	/* aperture segment id */
	struct evict_result *result;
};

FIXTURE(evict) {
	vmgpu_device *dev;
	struct drm_vmgpu_query_segments *s;
	uint32_t aperture;
	uint32_t memory;
	uint64_t vram;		/* bytes in all memory segments */
	uint64_t visible;	/* of which CPU-visible */
};

FIXTURE_SETUP(evict)
{
	uint32_t i;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &self->s));
	self->aperture = vmgpu_aperture_segment_id(self->s);
	ASSERT_NE(0, self->aperture);
	self->memory = vmgpu_test_memory_segments(self->s);
	ASSERT_NE(0, self->memory);
	for (i = 0; i < self->s->num_segments; i++) {
		const struct drm_vmgpu_segment *seg = &self->s->segments[i];

		if (seg->kind != DRM_VMGPU_SEGMENT_MEMORY)
			continue;
		self->vram += seg->size;
		self->visible += seg->cpu_visible_size;
	}
}

FIXTURE_TEARDOWN(evict)
{
	free(self->s);
	vmgpu_device_unref(self->dev);
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Allocation idx of a child holds vmgpu_test_fill()'s pattern with a key
 * hashed from (child, idx): every word unique to its place, so that a page
 * moved to the wrong offset or the wrong allocation shows, and cheap to
 * compute, as the guest CPU is emulated.
 */
static uint64_t pattern_key(int child, uint32_t idx)
{
	return splitmix64((uint64_t)child << 32 | idx);
}

static bool in_memory(const struct evict_child *c, uint32_t segment_id)
{
	return segment_id < 32 && c->memory & 1u << segment_id;
}

static int child_failed(const struct evict_child *c, const char *what, int err)
{
	ksft_print_msg("child %d: %s failed: %s\n", c->id, what, strerror(-err));
	return CHILD_ERROR;
}

/* Allocate, fill, then MakeResident and verify each allocation in turn. */
static int evict_child_run(struct evict_child *c, vmgpu_device *dev,
			   vmgpu_bo **bos, void **cpu, uint32_t *order)
{
	struct evict_result *r = c->result;
	uint32_t ids[32], nids = 0, idx, k, cycle;
	int64_t start, filled;
	uint64_t rng;
	int ret;

	for (idx = 1; idx < 32; idx++)
		if (c->memory & 1u << idx)
			ids[nids++] = idx;

	start = now_ms();
	for (idx = 0; idx < c->count; idx++) {
		/* Spread the preference over the memory segments. */
		ret = vmgpu_test_create_mapped(dev, EVICT_BO_SIZE, 0, c->memory | 1u << c->aperture,
					       ids[(c->id + idx) % nids], &bos[idx], &cpu[idx]);
		if (ret)
			return child_failed(c, "create and map", ret);
		vmgpu_test_fill(cpu[idx], EVICT_BO_SIZE, pattern_key(c->id, idx));
	}
	filled = now_ms();

	rng = splitmix64(c->id);
	for (cycle = 0; cycle < EVICT_CYCLES; cycle++) {
		/* A different order each cycle and child (Fisher-Yates). */
		for (k = 0; k < c->count; k++)
			order[k] = k;
		for (k = c->count - 1; k > 0; k--) {
			uint32_t j, t;

			rng = splitmix64(rng);
			j = rng % (k + 1);
			t = order[k];
			order[k] = order[j];
			order[j] = t;
		}

		for (k = 0; k < c->count; k++) {
			struct drm_vmgpu_gem_info info;
			uint64_t bad, first = 0;

			idx = order[k];
			ret = vmgpu_bo_info(bos[idx], &info);
			if (ret)
				return child_failed(c, "info", ret);
			r->evicted += !in_memory(c, info.segment_id);
			ret = vmgpu_bo_make_resident(bos[idx]);
			if (ret)
				return child_failed(c, "make resident", ret);
			ret = vmgpu_bo_info(bos[idx], &info);
			if (ret)
				return child_failed(c, "info", ret);
			r->resident += in_memory(c, info.segment_id);

			bad = vmgpu_test_check(cpu[idx], EVICT_BO_SIZE, pattern_key(c->id, idx),
					       &first);
			if (bad && !r->corrupt)
				ksft_print_msg("child %d: cycle %u, allocation %u: %llu bytes corrupt, first at %#llx, now in segment %u\n",
					       c->id, cycle, idx,
					       (unsigned long long)bad,
					       (unsigned long long)first,
					       info.segment_id);
			r->corrupt += bad;
			r->checked++;
		}
	}

	ksft_print_msg("child %d: %llu corrupt bytes; of %llu MakeResident calls, %llu found the allocation evicted, %llu left it in VRAM; fill %.1f s, cycles %.1f s\n",
		       c->id, (unsigned long long)r->corrupt,
		       (unsigned long long)r->checked,
		       (unsigned long long)r->evicted,
		       (unsigned long long)r->resident, (filled - start) / 1e3,
		       (now_ms() - filled) / 1e3);
	return r->corrupt ? CHILD_CORRUPT : CHILD_INTACT;
}

/* A child process: its own device, its own allocations. */
static int evict_child_main(struct evict_child *c)
{
	vmgpu_bo **bos = calloc(c->count, sizeof(*bos));
	void **cpu = calloc(c->count, sizeof(*cpu));
	uint32_t *order = calloc(c->count, sizeof(*order));
	vmgpu_device *dev;
	uint32_t idx;
	int status;

	if (!bos || !cpu || !order)
		return child_failed(c, "calloc", -ENOMEM);
	status = vmgpu_device_open(&dev);
	if (status)
		return child_failed(c, "open", status);

	status = evict_child_run(c, dev, bos, cpu, order);

	for (idx = 0; idx < c->count; idx++)
		vmgpu_bo_unref(bos[idx]);
	vmgpu_device_unref(dev);
	free(order);
	free(cpu);
	free(bos);
	return status;
}

TEST_F_TIMEOUT(evict, data_survives_pressure, 240)
{
	struct evict_result *results, total = { 0 };
	uint64_t bytes = EVICT_OVERCOMMIT * self->vram;
	pid_t pids[EVICT_CHILDREN];
	int status[EVICT_CHILDREN];
	uint32_t count;
	int c;

	if (bytes > self->visible + EVICT_SYSTEM_BUDGET)
		bytes = self->visible + EVICT_SYSTEM_BUDGET;
	count = (bytes + EVICT_CHILDREN * EVICT_BO_SIZE - 1) /
		(EVICT_CHILDREN * EVICT_BO_SIZE);
	TH_LOG("%d processes x %u allocations of %llu MiB against %llu MiB of VRAM, %llu MiB CPU-visible",
	       EVICT_CHILDREN, count, EVICT_BO_SIZE / MiB,
	       (unsigned long long)(self->vram / MiB),
	       (unsigned long long)(self->visible / MiB));

	results = mmap(NULL, sizeof(*results) * EVICT_CHILDREN,
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, results);
	memset(results, 0, sizeof(*results) * EVICT_CHILDREN);

	/* Children must not inherit and repeat buffered output. */
	fflush(stdout);
	fflush(stderr);
	for (c = 0; c < EVICT_CHILDREN; c++) {
		struct evict_child child = {
			.id = c,
			.count = count,
			.memory = self->memory,
			.aperture = self->aperture,
			.result = &results[c],
		};

		pids[c] = fork();
		if (!pids[c]) {
			int ret = evict_child_main(&child);

			fflush(stdout);
			_exit(ret);
		}
	}

	for (c = 0; c < EVICT_CHILDREN; c++) {
		status[c] = -1;
		if (pids[c] > 0 && waitpid(pids[c], &status[c], 0) != pids[c])
			status[c] = -1;
		total.corrupt += results[c].corrupt;
		total.evicted += results[c].evicted;
		total.resident += results[c].resident;
		total.checked += results[c].checked;
	}
	munmap(results, sizeof(*results) * EVICT_CHILDREN);

	TH_LOG("%llu corrupt bytes; of %llu MakeResident calls, %llu found the allocation evicted, %llu left it in VRAM",
	       (unsigned long long)total.corrupt,
	       (unsigned long long)total.checked,
	       (unsigned long long)total.evicted,
	       (unsigned long long)total.resident);
	/* Braces: EXPECT_*() with a TH_LOG() is two statements. */
	for (c = 0; c < EVICT_CHILDREN; c++) {
		EXPECT_TRUE(status[c] != -1 && WIFEXITED(status[c]) &&
			    WEXITSTATUS(status[c]) != CHILD_ERROR)
			TH_LOG("child %d: status %#x", c, status[c]);
	}
	ASSERT_EQ(0, total.corrupt);
	EXPECT_EQ(EVICT_CHILDREN * count * EVICT_CYCLES, total.checked);
	EXPECT_NE(0, total.evicted);
	EXPECT_NE(0, total.resident);
}

/*
 * AccessedPhysically allocations under pressure: contiguous in a memory
 * segment, mapped into the aperture when evicted. The device copies them
 * through the aperture's entries (GART addresses), so wrong entries show
 * as wrong data. Every move keeps every byte and the physical reference
 * always covers the whole allocation.
 */
TEST_F_TIMEOUT(evict, physical_allocations_move_through_aperture, 180)
{
	const struct drm_vmgpu_segment *ap = vmgpu_test_segment(self->s, self->aperture);
	uint32_t count = (self->vram + EVICT_BO_SIZE - 1) / EVICT_BO_SIZE + 4;
	uint32_t i, cycle, in_aperture = 0, in_vram = 0;
	vmgpu_bo **bos;
	void **cpu;

	/* Four more than VRAM holds: the aperture takes them. */
	ASSERT_GE(ap->size, 4 * EVICT_BO_SIZE);
	bos = calloc(count, sizeof(*bos));
	cpu = calloc(count, sizeof(*cpu));
	ASSERT_TRUE(bos && cpu);
	for (i = 0; i < count; i++) {
		ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, EVICT_BO_SIZE,
						      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
						      self->memory | 1u << self->aperture, 1,
						      &bos[i], &cpu[i]));
		vmgpu_test_fill(cpu[i], EVICT_BO_SIZE, 0xa000 + i);
	}
	for (cycle = 0; cycle < 2; cycle++) {
		for (i = 0; i < count; i++) {
			uint32_t k = cycle ? count - 1 - i : i;
			struct drm_vmgpu_gem_info info;
			uint64_t first = 0, bad;

			ASSERT_EQ(0, vmgpu_bo_make_resident(bos[k]));
			ASSERT_EQ(0, vmgpu_bo_info(bos[k], &info));
			EXPECT_TRUE(info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL)
				TH_LOG("allocation %u in segment %u without a physical reference",
				       k, info.segment_id);
			EXPECT_LE(info.offset + info.size,
				  vmgpu_test_segment(self->s, info.segment_id)->size);
			bad = vmgpu_test_check(cpu[k], EVICT_BO_SIZE, 0xa000 + k, &first);
			EXPECT_EQ(0, bad) TH_LOG("allocation %u: %llu bytes wrong at %#llx, now in segment %u",
						 k, (unsigned long long)bad,
						 (unsigned long long)first, info.segment_id);
		}
	}
	/* Pressure did send some to the aperture, and left others in VRAM. */
	for (i = 0; i < count; i++) {
		struct drm_vmgpu_gem_info info;

		ASSERT_EQ(0, vmgpu_bo_info(bos[i], &info));
		in_aperture += info.segment_id == self->aperture;
		in_vram += info.segment_id && info.segment_id < self->aperture;
		vmgpu_bo_unref(bos[i]);
	}
	EXPECT_NE(0, in_aperture);
	EXPECT_NE(0, in_vram);
	free(bos);
	free(cpu);
}

/*
 * Aperture pressure: more AccessedPhysically allocations in system memory
 * than the aperture segment maps. Older ones are evicted out of the
 * device's reach (TT to system), the rest stay mapped, and MakeResident
 * maps them back with their data. System memory that holds no aperture
 * entries is not evicted to make room.
 */
TEST_F_TIMEOUT(evict, aperture_pressure, 180)
{
	const struct drm_vmgpu_segment *ap = vmgpu_test_segment(self->s, self->aperture);
	uint32_t count = ap->size / EVICT_BO_SIZE + ap->size / EVICT_BO_SIZE / 4 + 1;
	uint32_t i, mapped = 0, evicted = 0;
	struct drm_vmgpu_gem_info info;
	vmgpu_bo **bos, *unmapped;
	uint64_t first = 0;
	void **cpu, *unmapped_cpu;

	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, self->aperture, self->aperture,
						EVICT_BO_SIZE, &unmapped, &unmapped_cpu));
	vmgpu_test_fill(unmapped_cpu, EVICT_BO_SIZE, 0xbeef);
	bos = calloc(count, sizeof(*bos));
	cpu = calloc(count, sizeof(*cpu));
	ASSERT_TRUE(bos && cpu);
	for (i = 0; i < count; i++) {
		ASSERT_EQ(0, vmgpu_test_create_mapped(self->dev, EVICT_BO_SIZE,
						      DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
						      1u << self->aperture, self->aperture,
						      &bos[i], &cpu[i]));
		vmgpu_test_fill(cpu[i], EVICT_BO_SIZE, 0xc000 + i);
	}
	for (i = 0; i < count; i++) {
		ASSERT_EQ(0, vmgpu_bo_info(bos[i], &info));
		if (info.segment_id == self->aperture) {
			EXPECT_TRUE(info.residency & DRM_VMGPU_RESIDENCY_PHYSICAL);
			mapped++;
		} else {
			EXPECT_EQ(0, info.segment_id);
			EXPECT_EQ(0, info.residency) TH_LOG("allocation %u", i);
			evicted++;
		}
	}
	EXPECT_LE(mapped * EVICT_BO_SIZE, ap->size);
	EXPECT_NE(0, evicted);
	ASSERT_EQ(0, vmgpu_bo_info(unmapped, &info));
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_RESIDENT, info.residency)
		TH_LOG("aperture pressure evicted an allocation that maps no aperture");

	for (i = 0; i < count; i++) {
		ASSERT_EQ(0, vmgpu_bo_make_resident(bos[i]));
		ASSERT_EQ(0, vmgpu_bo_info(bos[i], &info));
		EXPECT_EQ(self->aperture, info.segment_id);
		EXPECT_EQ(0, vmgpu_test_check(cpu[i], EVICT_BO_SIZE, 0xc000 + i, &first))
			TH_LOG("allocation %u wrong at %#llx", i, (unsigned long long)first);
		vmgpu_bo_unref(bos[i]);
	}
	EXPECT_EQ(0, vmgpu_test_check(unmapped_cpu, EVICT_BO_SIZE, 0xbeef, &first));
	vmgpu_bo_unref(unmapped);
	free(bos);
	free(cpu);
}

TEST_HARNESS_MAIN
