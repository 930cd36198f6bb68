// SPDX-License-Identifier: MIT
/*
 * Paging failures never hand out stale memory and never report success
 * for work that did not run. Through the driver's fault-injection files:
 * - a command the device rejects fails exactly its own job, not the jobs
 *   around it, while other processes' moves keep their data;
 * - a hung ring is reset: the hung job fails, and the clears and moves
 *   queued behind it still happen (new allocations read zero over memory
 *   another process dirtied, moved data is intact);
 * - a clear that did not happen is redone;
 * - a move that did not happen loses the contents visibly: GEM_INFO, the
 *   device counter, MMAP_OFFSET and a fault on the old mapping say so;
 * - a hang reset never runs a user job twice.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB		(1ull << 20)
#define TRACING		"/sys/kernel/tracing"
#define BO_SIZE		(4 * MiB)
#define SMALL_SIZE	(64 * 1024)
/* A child's evict-and-restore rounds while errors are injected. */
#define MOVE_ROUNDS	12
#define MOVE_BOS	3

static uint64_t contents_lost(vmgpu_device *dev)
{
	struct drm_vmgpu_query_device info;

	return vmgpu_query_device(dev, &info) ? ~0ull : info.contents_lost;
}

/*
 * Evict and restore allocations full of a pattern, checking every byte and
 * that none is reported lost. Returns 0, or -EILSEQ for corruption, -EIO
 * for a loss, another -errno for an ioctl that failed.
 */
static int move_rounds(vmgpu_device *dev, uint32_t aperture, int rounds, uint64_t key)
{
	vmgpu_bo *bo[MOVE_BOS];
	void *cpu[MOVE_BOS];
	int i, r, ret = 0, made = 0;

	for (i = 0; i < MOVE_BOS && !ret; i++) {
		ret = vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &bo[i], &cpu[i]);
		if (!ret) {
			vmgpu_test_fill(cpu[i], BO_SIZE, key + i);
			made++;
		}
	}
	for (r = 0; r < rounds && !ret; r++) {
		for (i = 0; i < made && !ret; i++) {
			struct drm_vmgpu_gem_info info;
			uint64_t first;

			ret = r & 1 ? vmgpu_bo_make_resident(bo[i]) : vmgpu_bo_evict(bo[i]);
			if (!ret)
				ret = vmgpu_bo_info_flags(bo[i], DRM_VMGPU_GEM_INFO_WAIT, &info);
			if (!ret && (info.residency & DRM_VMGPU_RESIDENCY_CONTENTS_LOST))
				ret = -EIO;
			if (!ret && vmgpu_test_check(cpu[i], BO_SIZE, key + i, &first))
				ret = -EILSEQ;
		}
	}
	for (i = 0; i < made; i++)
		vmgpu_bo_unref(bo[i]);
	return ret;
}

/* Exit status of a child: 0, or the positive errno of what failed. */
static int child_status(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The device rejects one command of three back-to-back jobs, over and
 * over: only that job fails, every time (the fence interrupt of the job
 * before it may still be pending when the error interrupt runs). Another
 * process's moves, queued in between, keep all their data.
 */
/* Range errors (3) the device reported on the paging ring, traced. */
static int range_errors_traced(void)
{
	FILE *trace = fopen(TRACING "/trace", "r");
	char line[512];
	int n = 0;

	if (!trace)
		return -errno;
	while (fgets(line, sizeof(line), trace))
		n += strstr(line, "vmgpu_device_error: ring 0 ") && strstr(line, " error 3 at ");
	fclose(trace);
	return n;
}

TEST(rejected_command_fails_its_job_only)
{
	vmgpu_device *dev;
	uint32_t aperture;
	char results[64];
	long before, bad, after;
	int i, status = -1, done = 0;
	pid_t mover;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	aperture = vmgpu_test_aperture(dev);
	ASSERT_NE(0, aperture);
	/* A missing tracefs or event is a failure: the feature is not there. */
	ASSERT_EQ(0, vmgpu_test_write_file(TRACING "/trace", ""));
	ASSERT_EQ(0, vmgpu_test_write_file(TRACING "/events/vmgpu/vmgpu_device_error/enable",
					   "1"));

	fflush(stdout);
	mover = fork();
	ASSERT_LE(0, mover);
	if (!mover)
		_exit(-move_rounds(dev, aperture, MOVE_ROUNDS, 0x1234));

	for (i = 0; i < 200 && (i < 8 || !done); i++) {
		EXPECT_EQ(-EIO, vmgpu_test_debugfs_write("inject_paging_error", "1"));
		ASSERT_EQ(0, vmgpu_test_debugfs_read("inject_paging_error", results,
						     sizeof(results)));
		ASSERT_EQ(3, sscanf(results, "before %ld bad %ld after %ld",
				    &before, &bad, &after));
		EXPECT_EQ(0, before) TH_LOG("round %d: %s", i, results);
		EXPECT_EQ(-EIO, bad) TH_LOG("round %d: %s", i, results);
		EXPECT_EQ(0, after) TH_LOG("round %d: %s", i, results);
		if (!done && waitpid(mover, &status, WNOHANG) == mover)
			done = 1;
	}
	if (!done)
		waitpid(mover, &status, 0);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the mover's data did not survive %d injected errors: status %#x",
		       i, status);
	/* The kernel log rate-limits its line; the tracepoint sees them all. */
	ASSERT_EQ(0, vmgpu_test_write_file(TRACING "/events/vmgpu/vmgpu_device_error/enable",
					   "0"));
	EXPECT_EQ(i, range_errors_traced()) TH_LOG("the device's range errors, one per injection");
	vmgpu_device_unref(dev);
}

/*
 * Reloads the driver with a 1 s paging timeout, and back after. While a
 * job hangs the ring, another process allocates over memory left dirty and
 * evicts an allocation: those clears and that move are queued behind the
 * hung job, and must still happen once the ring is reset.
 */
TEST(hung_ring_is_reset)
{
	const struct timespec hang_started = { .tv_nsec = 300 * 1000 * 1000 };
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *fresh[4], *moved;
	void *fresh_cpu[4], *moved_cpu;
	uint64_t first = 0, dirty;
	vmgpu_device *dev;
	uint32_t aperture;
	pid_t hang;
	int i;

	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu paging_timeout_ms=1000"));
	ASSERT_EQ(0, vmgpu_device_open(&dev));
	aperture = vmgpu_test_aperture(dev);
	ASSERT_EQ(0, vmgpu_test_dirty_segment(dev, 1, aperture, 32 * MiB));
	ASSERT_EQ(0, vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &moved, &moved_cpu));
	vmgpu_test_fill(moved_cpu, BO_SIZE, 77);

	fflush(stdout);
	hang = fork();
	ASSERT_LE(0, hang);
	if (!hang)
		_exit(-vmgpu_test_debugfs_write("inject_paging_hang", "1"));
	nanosleep(&hang_started, NULL);

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &fresh[i],
							&fresh_cpu[i]));
	ASSERT_EQ(0, vmgpu_bo_evict(moved));

	/* The first read waits for the reset and the clears run again. */
	for (i = 0; i < 4; i++) {
		dirty = vmgpu_test_nonzero(fresh_cpu[i], BO_SIZE, &first);
		EXPECT_EQ(0, dirty) TH_LOG("allocation %d: %llu bytes of another's data, first at %#llx",
					   i, (unsigned long long)dirty,
					   (unsigned long long)first);
	}
	ASSERT_EQ(0, vmgpu_bo_info_flags(moved, DRM_VMGPU_GEM_INFO_WAIT, &info));
	EXPECT_EQ(0, info.segment_id);
	EXPECT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_CONTENTS_LOST);
	EXPECT_EQ(0, vmgpu_test_check(moved_cpu, BO_SIZE, 77, &first))
		TH_LOG("the move queued behind the hang lost data at %#llx",
		       (unsigned long long)first);

	EXPECT_EQ(ETIMEDOUT, child_status(hang));
	EXPECT_EQ(0, vmgpu_test_run("dmesg | grep -q 'paging ring hung'"))
		TH_LOG("the hang is not in the kernel log");
	for (i = 0; i < 4; i++)
		vmgpu_bo_unref(fresh[i]);
	vmgpu_bo_unref(moved);
	vmgpu_device_unref(dev);
	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu"));
}

#define CUT_SIZE	(64 * 1024ull)
#define CUT_SRC		0x300000000ull
#define CUT_DST		0x310000000ull
#define CUT_GATE	0x320000000ull
#define CUT_PATTERN	0xc07c07u

/* A syncobj's fence: 1 signalled, 0 pending, or its error; -errno on failure. */
static int fence_status(int fd, uint32_t syncobj)
{
	struct sync_file_info info = { 0 };
	int sync_file, ret;

	if (drmSyncobjExportSyncFile(fd, syncobj, &sync_file))
		return -errno;
	ret = ioctl(sync_file, SYNC_IOC_FILE_INFO, &info) ? -errno : info.status;
	close(sync_file);
	return ret;
}

FIXTURE(reset) {
	int unused;
};

FIXTURE_SETUP(reset)
{
}

FIXTURE_TEARDOWN(reset)
{
	vmgpu_test_debugfs_write("inject_reset_delay_ms", "0");
}

/*
 * A hang reset must never run a user job twice. The job it was called for
 * (four 0.9 s NOPs against the 2 s job timeout) finishes while the reset
 * waits (inject_reset_delay_ms, 4 s), and the job queued behind it,
 * another file's, starts: it copies its source, clears the source, then
 * waits on a gate that never opens until the reset stops the ring (the
 * scheduler is stopped meanwhile: no timeout of its own). Run again from
 * its first command, the job would copy the cleared source over its copy
 * and hang a second time; it must fail instead (its context is lost), and
 * its copy must hold the data. The job the reset was for did finish: its
 * context stays usable.
 */
TEST_F_TIMEOUT(reset, never_runs_a_user_job_twice, 90)
{
	union vmgpu_cmd slow[4] = { cmd_nop(900000), cmd_nop(900000), cmd_nop(900000),
				    cmd_nop(900000) };
	union vmgpu_cmd cut[3] = { cmd_transfer(CUT_SRC, CUT_DST, CUT_SIZE),
				   cmd_fill(CUT_SRC, CUT_SIZE, 0), cmd_wait(CUT_GATE, 1) };
	union vmgpu_cmd nop = cmd_nop(0);
	vmgpu_context *slow_ctx, *cut_ctx;
	vmgpu_device *slow_dev, *cut_dev;
	uint32_t slow_done, cut_done;
	uint32_t *src_cpu, *dst_cpu;
	vmgpu_bo *src, *dst, *gate;
	uint64_t first = 0;
	uint32_t aperture;
	void *gate_cpu;
	int hangs;

	ASSERT_EQ(0, vmgpu_device_open(&slow_dev));
	ASSERT_EQ(0, vmgpu_device_open(&cut_dev));
	aperture = vmgpu_test_aperture(cut_dev);
	ASSERT_EQ(0, vmgpu_context_create(slow_dev, DRM_VMGPU_ENGINE_GPU_VA0, &slow_ctx));
	ASSERT_EQ(0, vmgpu_context_create(cut_dev, DRM_VMGPU_ENGINE_GPU_VA0, &cut_ctx));
	ASSERT_EQ(0, make_mapped_in_aperture(cut_dev, aperture, CUT_SRC, CUT_SIZE, &src,
					     (void **)&src_cpu));
	ASSERT_EQ(0, make_mapped_in_aperture(cut_dev, aperture, CUT_DST, CUT_SIZE, &dst,
					     (void **)&dst_cpu));
	/* New memory reads zero: the WAIT's value is never met. */
	ASSERT_EQ(0, make_mapped_in_aperture(cut_dev, aperture, CUT_GATE, 4096, &gate,
					     &gate_cpu));
	vmgpu_test_fill(src_cpu, CUT_SIZE, CUT_PATTERN);
	memset(dst_cpu, 0, CUT_SIZE);
	ASSERT_EQ(0, vmgpu_bo_cache_sync(src, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, CUT_SIZE));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(dst, DRM_VMGPU_CACHE_SYNC_TO_DEVICE, 0, CUT_SIZE));

	hangs = vmgpu_test_dmesg_count("gpuva0 ring hung");
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_reset_delay_ms", "4000"));
	ASSERT_EQ(0, submit_signal(slow_ctx, vmgpu_device_fd(slow_dev), slow, 4, &slow_done,
				   NULL));
	ASSERT_EQ(0, submit_signal(cut_ctx, vmgpu_device_fd(cut_dev), cut, 3, &cut_done, NULL));
	EXPECT_EQ(0, wait_syncobj(vmgpu_device_fd(slow_dev), slow_done));
	EXPECT_EQ(0, wait_syncobj(vmgpu_device_fd(cut_dev), cut_done));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_reset_delay_ms", "0"));

	EXPECT_EQ(hangs + 1, vmgpu_test_dmesg_count("gpuva0 ring hung"))
		TH_LOG("not one hang reset: the test proves nothing, or the job ran twice");
	/* Cut short by the reset, not timed out on its own WAIT later. */
	EXPECT_EQ(-ECANCELED, fence_status(vmgpu_device_fd(cut_dev), cut_done));
	EXPECT_EQ(1, fence_status(vmgpu_device_fd(slow_dev), slow_done));
	EXPECT_EQ(-ECANCELED, vmgpu_context_submit(cut_ctx, &nop, 1, NULL, 0, NULL, 0, NULL))
		TH_LOG("the job the reset cut short reported success");
	EXPECT_EQ(0, vmgpu_context_submit(slow_ctx, &nop, 1, NULL, 0, NULL, 0, NULL))
		TH_LOG("the job that finished was blamed");
	ASSERT_EQ(0, vmgpu_bo_cache_sync(dst, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0, CUT_SIZE));
	EXPECT_EQ(0, vmgpu_test_check(dst_cpu, CUT_SIZE, CUT_PATTERN, &first))
		TH_LOG("the copy was overwritten at %#llx: the job ran twice",
		       (unsigned long long)first);

	drmSyncobjDestroy(vmgpu_device_fd(slow_dev), slow_done);
	drmSyncobjDestroy(vmgpu_device_fd(cut_dev), cut_done);
	vmgpu_bo_unref(gate);
	vmgpu_bo_unref(dst);
	vmgpu_bo_unref(src);
	vmgpu_context_unref(cut_ctx);
	vmgpu_context_unref(slow_ctx);
	vmgpu_device_unref(cut_dev);
	vmgpu_device_unref(slow_dev);
}

/*
 * paging_timeout_ms=0 means no hang check, not "every job is late": clears
 * and moves work, and nothing is declared hung.
 */
TEST(no_timeout_is_no_hang)
{
	int hangs = vmgpu_test_dmesg_count("ring hung");
	uint64_t first = 0, dirty;
	vmgpu_device *dev;
	uint32_t aperture;
	vmgpu_bo *bo;
	void *cpu;

	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu paging_timeout_ms=0"));
	ASSERT_EQ(0, vmgpu_device_open(&dev));
	aperture = vmgpu_test_aperture(dev);
	ASSERT_EQ(0, vmgpu_test_dirty_segment(dev, 1, aperture, 8 * MiB));
	ASSERT_EQ(0, vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &bo, &cpu));
	dirty = vmgpu_test_nonzero(cpu, BO_SIZE, &first);
	EXPECT_EQ(0, dirty) TH_LOG("%llu stale bytes", (unsigned long long)dirty);
	vmgpu_test_fill(cpu, BO_SIZE, 3);
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	ASSERT_EQ(0, vmgpu_bo_make_resident(bo));
	EXPECT_EQ(0, vmgpu_test_check(cpu, BO_SIZE, 3, &first));
	/* Without a timeout there is no hang to inject. */
	EXPECT_EQ(-EINVAL, vmgpu_test_debugfs_write("inject_paging_hang", "1"));
	EXPECT_EQ(hangs, vmgpu_test_dmesg_count("ring hung")) TH_LOG("a job was declared hung without a timeout");
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
	ASSERT_EQ(0, vmgpu_test_run("rmmod vmgpu && modprobe vmgpu"));
}

/* A new allocation whose clear did not happen is cleared again. */
TEST(failed_clear_is_redone)
{
	struct drm_vmgpu_gem_info info;
	uint64_t dirty, first = 0, lost;
	char left[16];
	vmgpu_device *dev;
	uint32_t aperture;
	vmgpu_bo *bo;
	void *cpu;
	int ret;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	aperture = vmgpu_test_aperture(dev);
	lost = contents_lost(dev);
	/* The new backing's own clear, not a scrub of freed VRAM ahead of it. */
	ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
	ASSERT_EQ(0, vmgpu_test_dirty_segment(dev, 1, aperture, 16 * MiB));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_fault", "1"));
	ret = vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &bo, &cpu);
	vmgpu_test_vram_scrub(1);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, vmgpu_test_debugfs_read("inject_paging_fault", left, sizeof(left)));
	EXPECT_STREQ("0\n", left) TH_LOG("the injected fault was not used by the clear");

	dirty = vmgpu_test_nonzero(cpu, BO_SIZE, &first);
	EXPECT_EQ(0, dirty) TH_LOG("%llu stale bytes, first at %#llx",
				   (unsigned long long)dirty, (unsigned long long)first);
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info));
	EXPECT_EQ(1, info.segment_id);
	/* Nothing was lost: the allocation had no contents yet. */
	EXPECT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_CONTENTS_LOST);
	EXPECT_EQ(lost, contents_lost(dev));
	vmgpu_bo_unref(bo);
	vmgpu_device_unref(dev);
}

static sigjmp_buf fault_jump;

static void on_sigbus(int sig)
{
	siglongjmp(fault_jump, 1);
}

/* Whether reading one byte at p raises SIGBUS. */
static int read_faults(const volatile uint8_t *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	int faulted = 0;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(fault_jump, 1))
		faulted = 1;
	else
		(void)*p;
	sigaction(SIGBUS, &old, NULL);
	return faulted;
}

/*
 * A backing whose clear failed is cleared again, up to three times, each
 * redo waited for: the third one's success is a success.
 */
TEST(third_redo_of_a_failed_clear_counts)
{
	struct drm_vmgpu_gem_info info;
	uint64_t first = 0, dirty;
	long per_redo = 0, used;
	vmgpu_device *dev;
	uint32_t aperture, id, page_size;
	uint64_t seg_size;
	char left[24];
	int i, ret;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	aperture = vmgpu_test_aperture(dev);
	/* A fault beyond the BAR may move it, which takes an injected fault too. */
	id = vmgpu_test_visible_segment(dev, &seg_size, &page_size);
	if (!id) {
		vmgpu_device_unref(dev);
		SKIP(return, "needs a memory segment the BAR shows whole");
	}
	for (i = 0; i < 2; i++) {
		vmgpu_bo *bo;
		void *cpu;
		int faulted;

		/*
		 * The new backing's own clear, and no scrub of freed VRAM to
		 * take one of the injected faults until the redos ran.
		 */
		ASSERT_EQ(0, vmgpu_test_vram_scrub(0));
		ASSERT_EQ(0, vmgpu_test_dirty_segment(dev, id, aperture, 16 * MiB));
		/*
		 * The clear fails (and so does a redo MMAP_OFFSET queues if it
		 * finds the clear failed already). Then the fault redoes it
		 * three times: first with every redo failing, which measures
		 * the faults a redo takes (not the create's: that may have had
		 * other work to do); then with only the first two failing.
		 */
		ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_fault", "1000"));
		ret = vmgpu_test_create_mappable(dev, id, aperture, SMALL_SIZE, &bo, &cpu);
		if (!ret) {
			snprintf(left, sizeof(left), "%ld", i ? 2 * per_redo : 1000);
			ret = vmgpu_test_debugfs_write("inject_paging_fault", left);
		}
		faulted = ret ? -1 : read_faults(cpu);
		if (!ret)
			ret = vmgpu_test_debugfs_read("inject_paging_fault", left, sizeof(left));
		vmgpu_test_debugfs_write("inject_paging_fault", "0");
		vmgpu_test_vram_scrub(1);
		ASSERT_EQ(0, ret);
		used = (i ? 2 * per_redo : 1000) - strtol(left, NULL, 10);
		if (!i) {
			ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
			ASSERT_EQ(id, info.segment_id) TH_LOG("the fault moved the allocation");
			/* The negative: with the third redo failing too, SIGBUS. */
			EXPECT_EQ(1, faulted) TH_LOG("a backing never cleared was readable");
			per_redo = used / 3;
			ASSERT_LE(1, per_redo) TH_LOG("%ld faults taken by three redos", used);
			ASSERT_EQ(0, used % 3) TH_LOG("%ld faults taken by three redos", used);
		} else {
			ASSERT_EQ(0, faulted) TH_LOG("SIGBUS after a redo that worked");
			EXPECT_EQ(2 * per_redo, used) TH_LOG("the redos did not take every fault");
			dirty = vmgpu_test_nonzero(cpu, SMALL_SIZE, &first);
			EXPECT_EQ(0, dirty) TH_LOG("%llu stale bytes, first at %#llx",
						   (unsigned long long)dirty,
						   (unsigned long long)first);
		}
		vmgpu_bo_unref(bo);
	}
	vmgpu_device_unref(dev);
}

/* A move that did not happen: the data is gone, and everything says so. */
TEST(failed_move_loses_contents)
{
	struct drm_vmgpu_gem_mmap_offset offset = { 0 };
	struct drm_vmgpu_gem_info info;
	vmgpu_bo *bo, *other;
	void *cpu, *other_cpu;
	uint64_t first = 0, lost;
	vmgpu_device *dev;
	uint32_t aperture;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	aperture = vmgpu_test_aperture(dev);
	lost = contents_lost(dev);
	ASSERT_EQ(0, vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &bo, &cpu));
	ASSERT_EQ(0, vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &other, &other_cpu));
	vmgpu_test_fill(cpu, BO_SIZE, 5);
	vmgpu_test_fill(other_cpu, BO_SIZE, 6);

	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_fault", "1"));
	ASSERT_EQ(0, vmgpu_bo_evict(bo));
	/* The move is pipelined: its outcome is known once it ran. */
	ASSERT_EQ(0, vmgpu_bo_info(bo, &info));
	EXPECT_EQ(0, info.segment_id);
	ASSERT_EQ(0, vmgpu_bo_info_flags(bo, DRM_VMGPU_GEM_INFO_WAIT, &info));
	EXPECT_EQ(0, info.segment_id);
	EXPECT_EQ(DRM_VMGPU_RESIDENCY_CONTENTS_LOST,
		  info.residency & DRM_VMGPU_RESIDENCY_CONTENTS_LOST);
	EXPECT_EQ(lost + 1, contents_lost(dev));

	offset.handle = vmgpu_bo_handle(bo);
	EXPECT_EQ(-EIO, vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, &offset));
	EXPECT_TRUE(read_faults(cpu)) TH_LOG("a lost allocation was readable");

	/* Only that allocation. */
	ASSERT_EQ(0, vmgpu_bo_evict(other));
	ASSERT_EQ(0, vmgpu_bo_info_flags(other, DRM_VMGPU_GEM_INFO_WAIT, &info));
	EXPECT_EQ(0, info.residency & DRM_VMGPU_RESIDENCY_CONTENTS_LOST);
	EXPECT_EQ(0, vmgpu_test_check(other_cpu, BO_SIZE, 6, &first));
	EXPECT_EQ(lost + 1, contents_lost(dev));

	vmgpu_bo_unref(bo);
	vmgpu_bo_unref(other);
	vmgpu_device_unref(dev);
}

TEST_HARNESS_MAIN
