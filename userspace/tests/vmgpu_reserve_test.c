// SPDX-License-Identifier: MIT
/*
 * The paging job reserve (memory-management.rst; vmgpu_paging_op.c, DOC:
 * paging job reserve): paging operations allocate nothing while they are
 * built and queued, wait for every user of their allocation through gates,
 * and wait for jobs when the ring is busy; a move waits for the jobs and
 * gates it needs before it queues anything, as its TTM context allows.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB			(1ull << 20)

FIXTURE(reserve) {
	vmgpu_device *dev;
	uint32_t aperture;
};

FIXTURE_SETUP(reserve)
{
	struct drm_vmgpu_query_segments *s;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, vmgpu_query_segments(self->dev, &s));
	self->aperture = vmgpu_aperture_segment_id(s);
	free(s);
	ASSERT_NE(0, self->aperture);
	/* Every test here takes jobs with the clears of new VRAM backings. */
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
}

FIXTURE_TEARDOWN(reserve)
{
	vmgpu_test_vram_scrub(1);
	vmgpu_device_unref(self->dev);
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
TEST_F(reserve, paging_operations_allocate_nothing)
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
TEST_F(reserve, eviction_waits_for_every_user)
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
TEST_F(reserve, a_busy_ring_makes_operations_wait_for_jobs)
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
TEST_F(reserve, a_drained_reserve_wait_is_interruptible)
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
TEST_F(reserve, a_wait_for_gates_is_interruptible)
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
TEST_F(reserve, interrupted_move_is_not_left_half_way)
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
