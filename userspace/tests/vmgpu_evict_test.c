// SPDX-License-Identifier: MIT
/*
 * Eviction under pressure: several processes together allocate several
 * times the VRAM, then bring their allocations back in turn with
 * MakeResident, each call evicting others' allocations to system memory.
 * Every byte must survive every move. And the paging operations behind
 * the moves allocate nothing and wait for every user of the allocation.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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
	double start, filled;
	uint64_t rng;
	int ret;

	for (idx = 1; idx < 32; idx++)
		if (c->memory & 1u << idx)
			ids[nids++] = idx;

	start = now();
	for (idx = 0; idx < c->count; idx++) {
		/* Spread the preference over the memory segments. */
		ret = vmgpu_test_create_mapped(dev, EVICT_BO_SIZE, 0, c->memory | 1u << c->aperture,
					       ids[(c->id + idx) % nids], &bos[idx], &cpu[idx]);
		if (ret)
			return child_failed(c, "create and map", ret);
		vmgpu_test_fill(cpu[idx], EVICT_BO_SIZE, pattern_key(c->id, idx));
	}
	filled = now();

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
		       (unsigned long long)r->resident, filled - start,
		       now() - filled);
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

/*
 * What this process allocated inside vmgpu's paging operations, read from a
 * tracing instance of its own: the kmem events between each
 * vmgpu_paging_op_begin and vmgpu_paging_op_end (global clock, so that the
 * order holds across CPUs).
 */
#define OP_TRACE	"/sys/kernel/tracing/instances/vmgpu-reserve"

struct op_trace {
	int begins, ends, lost;
	unsigned int max_jobs;	/* the most jobs of one operation, gates included */
	int inside;		/* allocations inside operations */
	char first[512];	/* the first of them */
};

static int op_trace_start(void)
{
	static const char *const events[] = {
		"kmem/kmalloc", "kmem/kmem_cache_alloc", "kmem/mm_page_alloc",
		"vmgpu/vmgpu_paging_op_begin", "vmgpu/vmgpu_paging_op_end",
	};
	char path[256], pid[16];
	unsigned int i;
	int ret;

	rmdir(OP_TRACE);
	if (mkdir(OP_TRACE, 0755))
		return -errno;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	ret = vmgpu_test_write_file(OP_TRACE "/buffer_size_kb", "8192") ?:
	      vmgpu_test_write_file(OP_TRACE "/trace_clock", "global") ?:
	      vmgpu_test_write_file(OP_TRACE "/set_event_pid", pid);
	for (i = 0; !ret && i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), OP_TRACE "/events/%s/enable", events[i]);
		ret = vmgpu_test_write_file(path, "1");
	}
	return ret;
}

/*
 * An event an interrupt caused while the process ran: the trace's flags
 * column ("[001] d.h1.") says hard or soft interrupt in its third place.
 */
static bool in_interrupt(const char *line)
{
	const char *cpu = strstr(line, "] ");

	return cpu && strlen(cpu) > 4 && strchr("hHsZz", cpu[4]);
}

static int op_trace_stop(struct op_trace *t)
{
	FILE *f = fopen(OP_TRACE "/trace", "r");
	bool inside = false;
	char line[512];

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *end;
		unsigned int jobs;

		if (line[0] == '#')
			continue;
		if (strstr(line, "LOST"))
			t->lost++;
		if (strstr(line, " vmgpu_paging_op_begin:")) {
			inside = true;
			t->begins++;
		} else if ((end = strstr(line, " vmgpu_paging_op_end:"))) {
			inside = false;
			t->ends++;
			end = strstr(end, " jobs ");
			if (end && sscanf(end, " jobs %u", &jobs) == 1 && jobs > t->max_jobs)
				t->max_jobs = jobs;
		} else if (inside && !in_interrupt(line) &&
			   (strstr(line, " kmalloc:") || strstr(line, " kmem_cache_alloc:") ||
			    strstr(line, " mm_page_alloc:"))) {
			if (!t->inside++)
				snprintf(t->first, sizeof(t->first), "%s", line);
		}
	}
	fclose(f);
	vmgpu_test_write_file(OP_TRACE "/tracing_on", "0");
	vmgpu_test_write_file(OP_TRACE "/set_event_pid", "");
	return rmdir(OP_TRACE) ? -errno : 0;
}

/*
 * Seed "GPU segments": evictions make room, so they must not need memory.
 * vmgpu's paging operations take prepared jobs of a reserve, staging
 * included (DOC: paging job reserve): a clear, moves out of and back into
 * a memory segment, NotifyEviction queued ahead of leaving the system
 * segment, and in non-coherent mode the flushes, allocate nothing while
 * they are built and queued. TTM's own allocations around them (the new
 * resource, the system pages) are outside the operations.
 */
TEST_F(evict, paging_operations_allocate_nothing)
{
	const uint64_t size = 2 * MiB;
	struct op_trace t;
	uint64_t first = 0;
	vmgpu_bo *bo, *notified;
	void *cpu;

	ASSERT_EQ(0, op_trace_start()) TH_LOG("no tracing instance with kmem and vmgpu events");
	ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, size, &bo, &cpu));
	vmgpu_test_fill(cpu, size, 0x0a110c);
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	ASSERT_EQ(0, vmgpu_test_create(self->dev, size, DRM_VMGPU_ALLOC_NOTIFY_EVICTION,
				       1u << self->aperture, self->aperture, &notified));
	ASSERT_EQ(0, vmgpu_bo_make_resident(notified));
	ASSERT_EQ(0, vmgpu_bo_evict_flags(notified, DRM_VMGPU_EVICT_NONRESIDENT));
	ASSERT_EQ(0, op_trace_stop(&t));

	EXPECT_EQ(0, t.lost) TH_LOG("the trace lost events");
	/* The clear, the move out, the move back, the notification at least. */
	EXPECT_LE(4, t.begins);
	EXPECT_EQ(t.begins, t.ends);
	EXPECT_EQ(0, t.inside) TH_LOG("%d allocations inside %d paging operations, the first: %s",
				      t.inside, t.begins, t.first);
	EXPECT_EQ(0, vmgpu_test_check(cpu, size, 0x0a110c, &first))
		TH_LOG("wrong at %#llx", (unsigned long long)first);
	vmgpu_bo_unref(notified);
	vmgpu_bo_unref(bo);
}

/*
 * An eviction waits for every job that used the allocation, on the GPU
 * side, however many contexts they come from: the operation's first job
 * holds one fence, an empty job queued ahead (a gate) each other one.
 * Jobs of two engines fill one half each after a delay; the eviction is
 * queued while both run, and what it evicted has both halves.
 */
TEST_F(evict, eviction_waits_for_every_user)
{
	const uint64_t size = 2 * MiB, va = 0x400000000ull;
	/*
	 * The reservation lists the first job's fence first: it is the one
	 * the operation's own job holds, the second job's is the gate's. The
	 * second ends last, so the gate is what keeps the eviction after it.
	 */
	union vmgpu_cmd first[2] = { cmd_nop(200000), cmd_fill(va, size / 2, 0x1111aaaa) };
	union vmgpu_cmd second[2] = {
		cmd_nop(600000), cmd_fill(va + size / 2, size / 2, 0x2222bbbb),
	};
	int fd = vmgpu_device_fd(self->dev);
	vmgpu_context *ctx0, *ctx1;
	uint32_t sync0, sync1;
	struct op_trace t;
	uint8_t *cpu;
	vmgpu_bo *bo;

	ASSERT_EQ(0, make_mapped(self->dev, 1, self->aperture, va, size, &bo, (void **)&cpu));
	ASSERT_EQ(1, segment_of(bo));
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx0));
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA1, &ctx1));
	ASSERT_EQ(0, op_trace_start()) TH_LOG("no tracing instance with kmem and vmgpu events");
	ASSERT_EQ(0, submit_signal(ctx0, fd, first, 2, &sync0, NULL));
	ASSERT_EQ(0, submit_signal(ctx1, fd, second, 2, &sync1, NULL));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, op_trace_stop(&t));
	EXPECT_LE(2, t.max_jobs) TH_LOG("no gate: the eviction took %u job(s)", t.max_jobs);
	EXPECT_EQ(0, t.inside) TH_LOG("%d allocations inside paging operations, the first: %s",
				      t.inside, t.first);

	ASSERT_EQ(0, wait_syncobj(fd, sync0));
	ASSERT_EQ(0, wait_syncobj(fd, sync1));
	EXPECT_NE(1, segment_of(bo));
	EXPECT_EQ(0, count_not(cpu, size / 2, 0x1111aaaa)) TH_LOG("the first job's half");
	EXPECT_EQ(0, count_not(cpu + size / 2, size / 2, 0x2222bbbb))
		TH_LOG("the second job's half");
	drmSyncobjDestroy(fd, sync0);
	drmSyncobjDestroy(fd, sync1);
	vmgpu_context_unref(ctx1);
	vmgpu_context_unref(ctx0);
	vmgpu_bo_unref(bo);
}

/* Operation jobs of the reserve and the waits for one (debugfs job_reserve). */
/*
 * The operation jobs, those ready, and the waits for one: inside paging
 * operations, and by moves before theirs.
 */
static int reserve_read(unsigned int *jobs, unsigned int *ready, unsigned long long *waits,
			unsigned long long *move_waits)
{
	char buf[256];
	const char *moves;
	int ret = vmgpu_test_debugfs_read("job_reserve", buf, sizeof(buf));

	if (ret)
		return ret;
	moves = strstr(buf, "move_waits ");
	if (!moves || sscanf(moves, "move_waits %llu", move_waits) != 1)
		return -EINVAL;
	return sscanf(buf, "jobs %u ready %u waits %llu", jobs, ready, waits) == 3 ? 0 : -EINVAL;
}

/* The jobs, and every wait for a ready one. */
static int reserve_state(unsigned int *jobs, unsigned long long *waits)
{
	unsigned long long inside, moves;
	unsigned int ready;
	int ret = reserve_read(jobs, &ready, &inside, &moves);

	*waits = inside + moves;
	return ret;
}

/*
 * With the paging ring held busy, every new allocation's clear keeps a job
 * of the reserve until the ring gets to it: more allocations than the
 * reserve has jobs make the operations wait for jobs to come back, which
 * still allocates nothing, and every allocation is cleared in the end.
 */
TEST_F(evict, a_busy_ring_makes_operations_wait_for_jobs)
{
	const uint64_t size = 64 * 1024;
	unsigned long long waits_before, waits_after;
	unsigned int jobs, i, n;
	uint64_t first = 0;
	vmgpu_bo **bos;
	struct op_trace t;
	void **cpu;

	ASSERT_EQ(0, vmgpu_test_dirty_segment(self->dev, 1, self->aperture, 8 * MiB));
	ASSERT_EQ(0, reserve_state(&jobs, &waits_before)) TH_LOG("no debugfs job_reserve");
	n = jobs + 4;
	bos = calloc(n, sizeof(*bos));
	cpu = calloc(n, sizeof(*cpu));
	ASSERT_TRUE(bos && cpu);
	ASSERT_EQ(0, op_trace_start()) TH_LOG("no tracing instance with kmem and vmgpu events");
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "1000"));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, vmgpu_test_create_mappable(self->dev, 1, self->aperture, size,
							&bos[i], &cpu[i]));
	ASSERT_EQ(0, op_trace_stop(&t));
	ASSERT_EQ(0, reserve_state(&jobs, &waits_after));
	EXPECT_LT(waits_before, waits_after) TH_LOG("%u clears behind a busy ring never waited for a job",
						    n);
	EXPECT_LE(n, t.begins);
	EXPECT_EQ(0, t.inside) TH_LOG("%d allocations inside paging operations, the first: %s",
				      t.inside, t.first);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0, vmgpu_test_nonzero(cpu[i], size, &first))
			TH_LOG("allocation %u not cleared at %#llx", i, (unsigned long long)first);
		vmgpu_bo_unref(bos[i]);
	}
	free(cpu);
	free(bos);
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * SIGALRM at 200 ms and again every 100 ms, in case one comes before the
 * ioctl waits; no SA_RESTART, so an interrupted ioctl returns EINTR.
 */
static int alarms_on(struct sigaction *old)
{
	const struct sigaction sa = { .sa_handler = on_alarm };
	const struct itimerval alarms = {
		.it_value = { .tv_usec = 200 * 1000 },
		.it_interval = { .tv_usec = 100 * 1000 },
	};
	int err;

	if (sigaction(SIGALRM, &sa, old))
		return -errno;
	if (setitimer(ITIMER_REAL, &alarms, NULL)) {
		err = -errno;
		sigaction(SIGALRM, old, NULL);
		return err;
	}
	return 0;
}

static void alarms_off(const struct sigaction *old)
{
	const struct itimerval off = {};

	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, old, NULL);
}

/*
 * Creates allocations whose clears wait behind a delayed ring until no job
 * of the reserve is ready. Returns 0 with *@n allocations in @bos and the
 * move_waits count in *@moves, -ENOSPC if @max of them left a job ready,
 * or the error of the create or debugfs read that failed.
 */
static int drain_reserve(vmgpu_device *dev, const struct vmgpu_bo_create_info *info,
			 vmgpu_bo **bos, unsigned int max, unsigned int *n,
			 unsigned long long *moves)
{
	unsigned long long waits;
	unsigned int jobs, ready;
	int ret;

	ret = reserve_read(&jobs, &ready, &waits, moves);
	while (!ret && ready && *n < max) {
		ret = vmgpu_bo_create(dev, info, &bos[*n]);
		if (ret)
			return ret;
		(*n)++;
		ret = reserve_read(&jobs, &ready, &waits, moves);
	}
	if (ret)
		return ret;
	return ready ? -ENOSPC : 0;
}

/*
 * A move that finds the reserve drained behind a busy ring waits for a
 * job before it queues anything, and a signal ends that wait: a new
 * allocation's create fails with EINTR at once, instead of sleeping until
 * the ring is through the work ahead of it (8 s here).
 */
TEST_F(evict, a_drained_reserve_wait_is_interruptible)
{
	const struct vmgpu_bo_create_info info = {
		.size = 64 * 1024, .segments = 1u << 1, .preferred_segment = 1,
	};
	struct drm_vmgpu_gem_create c = {
		.size = info.size, .segments = info.segments, .preferred_segment = 1,
	};
	unsigned long long waits, moves_before, moves_after;
	unsigned int jobs, ready, n = 0, max = 256;
	struct drm_vmgpu_gem_info gi;
	struct sigaction old;
	int64_t start, took;
	vmgpu_bo **bos, *last;
	int ret, err;

	bos = calloc(max, sizeof(*bos));
	ASSERT_NE(NULL, bos);
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "8000"));
	start = now_ms();
	ret = drain_reserve(self->dev, &info, bos, max, &n, &moves_before);
	ASSERT_EQ(0, ret) TH_LOG("draining the job reserve with %u clears: %s", n, strerror(-ret));
	ASSERT_GT(4000, now_ms() - start) TH_LOG("draining took half of the ring's delay");

	start = now_ms();
	ASSERT_EQ(0, alarms_on(&old));
	ret = ioctl(vmgpu_device_fd(self->dev), DRM_IOCTL_VMGPU_GEM_CREATE, &c);
	err = errno;
	took = now_ms() - start;
	alarms_off(&old);
	EXPECT_EQ(-1, ret) TH_LOG("the create slept through the signals: done after %lld ms",
				  (long long)took);
	EXPECT_EQ(EINTR, err);
	EXPECT_GT(3000, took);
	EXPECT_EQ(0, reserve_read(&jobs, &ready, &waits, &moves_after));
	EXPECT_LT(moves_before, moves_after) TH_LOG("the create never waited for a job");
	if (!ret) {
		struct drm_gem_close close_args = { .handle = c.handle };

		ioctl(vmgpu_device_fd(self->dev), DRM_IOCTL_GEM_CLOSE, &close_args);
	}

	/* Uninterrupted, the same create waits for the ring and succeeds. */
	ASSERT_EQ(0, vmgpu_bo_create(self->dev, &info, &last));
	EXPECT_EQ(0, vmgpu_bo_info_flags(last, DRM_VMGPU_GEM_INFO_WAIT, &gi));
	EXPECT_EQ(1, gi.segment_id);
	vmgpu_bo_unref(last);
	while (n)
		vmgpu_bo_unref(bos[--n]);
	free(bos);
}

/* The gates of the reserve and those ready (debugfs job_reserve). */
static int gates_read(unsigned int *gates, unsigned int *ready)
{
	char buf[256];
	const char *line;
	int ret = vmgpu_test_debugfs_read("job_reserve", buf, sizeof(buf));

	if (ret)
		return ret;
	line = strstr(buf, "gates ");
	return line && sscanf(line, "gates %u ready %u", gates, ready) == 2 ? 0 : -EINVAL;
}

/*
 * A move also waits for the gates its operation queues, one for each user
 * of the allocation but the first, before it queues anything, and a signal
 * ends that wait too: a gate comes back only once the job it waits for has
 * ended. Nine contexts have a job held by another file's (about 6 s), so
 * that each eviction of an allocation they map takes eight gates; once
 * fewer are ready, an eviction with signals coming fails with EINTR at
 * once and leaves the allocation where it was.
 */
TEST_F(evict, a_wait_for_gates_is_interruptible)
{
	enum { USERS = 9, HOLD_JOBS = 6, MAX_BOS = 12 };
	const uint64_t size = 64 * 1024, va = 0x400000000ull;
	const union vmgpu_cmd hold = cmd_nop(VMGPU_NOP_MAX_DELAY_US), quick = cmd_nop(0);
	int fd = vmgpu_device_fd(self->dev), syncobj_fd, ret, err;
	unsigned int gates, ready, per_eviction, jobs, ops_ready, n, i;
	struct drm_vmgpu_gem_make_resident ev = {};
	uint32_t sync[USERS], hold_out, hold_in;
	unsigned long long waits, moves_before, moves_after;
	vmgpu_context *ctx[USERS], *hold_ctx;
	vmgpu_bo *bos[MAX_BOS];
	vmgpu_device *hold_dev;
	struct vmgpu_sync in;
	struct sigaction old;
	int64_t start, took;
	void *cpu;

	for (i = 0; i < MAX_BOS; i++) {
		ASSERT_EQ(0, make_mapped(self->dev, 1, self->aperture, va + i * size, size,
					 &bos[i], &cpu));
		ASSERT_EQ(1, segment_of(bos[i]));
	}
	for (i = 0; i < USERS; i++) {
		ASSERT_EQ(0, vmgpu_context_create(self->dev, i % 2 ? DRM_VMGPU_ENGINE_GPU_VA1 :
						  DRM_VMGPU_ENGINE_GPU_VA0, &ctx[i]));
		ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &sync[i]));
	}
	/* Another file's jobs hold the users' jobs, in no GPU VA space. */
	ASSERT_EQ(0, vmgpu_device_open(&hold_dev));
	ASSERT_EQ(0, vmgpu_context_create(hold_dev, DRM_VMGPU_ENGINE_PHYSICAL, &hold_ctx));
	start = now_ms();
	for (i = 0; i + 1 < HOLD_JOBS; i++)
		ASSERT_EQ(0, vmgpu_context_submit(hold_ctx, &hold, 1, NULL, 0, NULL, 0, NULL));
	ASSERT_EQ(0, submit_signal(hold_ctx, vmgpu_device_fd(hold_dev), &hold, 1, &hold_out,
				   NULL));
	ASSERT_EQ(0, drmSyncobjHandleToFD(vmgpu_device_fd(hold_dev), hold_out, &syncobj_fd));
	ASSERT_EQ(0, drmSyncobjFDToHandle(fd, syncobj_fd, &hold_in));
	close(syncobj_fd);
	in = (struct vmgpu_sync){ .syncobj = hold_in };
	for (i = 0; i < USERS; i++) {
		struct vmgpu_sync out = { .syncobj = sync[i] };

		ASSERT_EQ(0, vmgpu_context_submit(ctx[i], &quick, 1, &in, 1, &out, 1, NULL));
	}

	/* Each eviction queues its gates behind the held jobs. */
	ASSERT_EQ(0, gates_read(&gates, &ready)) TH_LOG("no gates in debugfs job_reserve");
	ASSERT_EQ(0, vmgpu_bo_evict(bos[0]));
	ASSERT_EQ(0, gates_read(&gates, &per_eviction));
	per_eviction = ready - per_eviction;
	ASSERT_LE(USERS - 1, per_eviction) TH_LOG("an eviction took %u gates", per_eviction);
	ready -= per_eviction;
	for (n = 1; ready >= per_eviction && n + 1 < MAX_BOS; n++) {
		ASSERT_EQ(0, vmgpu_bo_evict(bos[n]));
		ASSERT_EQ(0, gates_read(&gates, &ready));
	}
	ASSERT_GT(per_eviction, ready) TH_LOG("%u evictions left %u gates ready", n, ready);
	ASSERT_EQ(0, reserve_read(&jobs, &ops_ready, &waits, &moves_before));
	ASSERT_LT(0, ops_ready) TH_LOG("no operation job ready: the gates are not what is waited for");
	ASSERT_GT(3000, now_ms() - start) TH_LOG("draining took half of the users' hold");

	ev.handle = vmgpu_bo_handle(bos[n]);
	start = now_ms();
	ASSERT_EQ(0, alarms_on(&old));
	ret = ioctl(fd, DRM_IOCTL_VMGPU_GEM_EVICT, &ev);
	err = errno;
	took = now_ms() - start;
	alarms_off(&old);
	EXPECT_EQ(-1, ret) TH_LOG("the eviction slept through the signals: done after %lld ms",
				  (long long)took);
	EXPECT_EQ(EINTR, err);
	EXPECT_GT(2000, took);
	EXPECT_EQ(1, segment_of(bos[n])) TH_LOG("the interrupted eviction moved the allocation");
	EXPECT_EQ(0, reserve_read(&jobs, &ops_ready, &waits, &moves_after));
	EXPECT_LT(moves_before, moves_after) TH_LOG("the eviction never waited for gates");

	/* The users done, the same eviction goes through. */
	for (i = 0; i < USERS; i++)
		ASSERT_EQ(0, wait_syncobj(fd, sync[i]));
	EXPECT_EQ(0, vmgpu_bo_evict(bos[n]));
	EXPECT_EQ(0, segment_of(bos[n])) TH_LOG("not evicted to the system segment");

	for (i = 0; i < USERS; i++) {
		drmSyncobjDestroy(fd, sync[i]);
		vmgpu_context_unref(ctx[i]);
	}
	drmSyncobjDestroy(fd, hold_in);
	vmgpu_context_unref(hold_ctx);
	vmgpu_device_unref(hold_dev);
	for (i = 0; i < MAX_BOS; i++)
		vmgpu_bo_unref(bos[i]);
}

/*
 * The second hop of a move through a temporary placement is not
 * interrupted: TTM would leave the allocation half-way, in the aperture
 * segment's temporary placement, where it would stay. Made resident from
 * system memory behind a drained reserve, with signals coming, it ends up
 * in segment 1 (or, interrupted before it began, still in system memory).
 */
TEST_F(evict, interrupted_move_is_not_left_half_way)
{
	const struct vmgpu_bo_create_info info = {
		.size = 64 * 1024, .segments = 1u << 1 | 1u << self->aperture,
		.preferred_segment = 1,
	};
	struct drm_vmgpu_gem_make_resident mr = {};
	unsigned int n = 0, max = 256;
	struct drm_vmgpu_gem_info gi;
	unsigned long long moves;
	struct sigaction old;
	vmgpu_bo **bos, *bo;
	int ret, err;

	bos = calloc(max, sizeof(*bos));
	ASSERT_NE(NULL, bos);
	ASSERT_EQ(0, vmgpu_bo_create(self->dev, &info, &bo));
	ASSERT_EQ(0, vmgpu_bo_evict_flags(bo, DRM_VMGPU_EVICT_NONRESIDENT));
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &gi));
	ASSERT_EQ(0, gi.segment_id) TH_LOG("not made non-resident");

	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "3000"));
	ret = drain_reserve(self->dev, &info, bos, max, &n, &moves);
	ASSERT_EQ(0, ret) TH_LOG("draining the job reserve with %u clears: %s", n, strerror(-ret));

	ASSERT_EQ(0, alarms_on(&old));
	mr.handle = vmgpu_bo_handle(bo);
	ret = ioctl(vmgpu_device_fd(self->dev), DRM_IOCTL_VMGPU_GEM_MAKE_RESIDENT, &mr);
	err = errno;
	alarms_off(&old);
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &gi));
	/*
	 * Interrupted before it began, it would still be in system memory,
	 * not resident: a temporary placement counts as resident.
	 */
	EXPECT_EQ(ret ? 0 : 1, gi.segment_id) TH_LOG("make-resident returned %d (errno %d)",
						     ret, ret ? err : 0);
	EXPECT_EQ(ret ? 0 : DRM_VMGPU_RESIDENCY_RESIDENT,
		  gi.residency & DRM_VMGPU_RESIDENCY_RESIDENT)
		TH_LOG("make-resident returned %d (errno %d)", ret, ret ? err : 0);
	vmgpu_bo_unref(bo);
	while (n)
		vmgpu_bo_unref(bos[--n]);
	free(bos);
}

TEST_HARNESS_MAIN
