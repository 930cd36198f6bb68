// SPDX-License-Identifier: MIT
/*
 * Hot-unplug with open files, mappings, allocations in every segment, a
 * dma-buf, queued paging work, and submission state: contexts on all three
 * engines with their seqno pages mapped, GPU VA bindings (page tables),
 * a user job running, one held behind another file's fence and a deferred
 * destruction waiting for it, a vgem buffer imported and written by a job,
 * and a head showing a pinned dumb buffer with a flip queued. Removing the PCI device (sysfs remove)
 * fails the work, ioctls return -ENODEV, mappings read a dummy page
 * instead of crashing, rmmod is refused while a file is open, everything
 * closes cleanly (the page tables and the deferred work outlive the
 * device), and a rescan gives a working device again. The kernel log
 * checks (lockdep, KASAN, kmemleak on the debug kernel) watch the
 * lifetimes. A second round removes the rescanned device while other
 * processes close files full of system-memory allocations. Two more
 * let a job's free drop the device's last reference: one of a closed
 * file, one the scheduler killed when its process exited. These tests run
 * last: they leave a rescanned device behind.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define MiB		(1ull << 20)
#define BO_SIZE		(2 * MiB)
#define VA_HELD		0x200000000ull
#define VA_GATE		0x300000000ull
#define VA_IMPORT	0x380000000ull
#define IMPORTED	0x1a4057edu

struct held {
	vmgpu_bo *bo;
	void *cpu;
	const char *what;
};

/* Create, map and fill an allocation; one per kind of backing. */
static int hold(vmgpu_device *dev, struct held *h, const char *what, uint32_t flags,
		uint32_t set, uint32_t preferred, uint64_t key)
{
	int ret = vmgpu_test_create_mapped(dev, BO_SIZE, flags, set, preferred, &h->bo, &h->cpu);

	h->what = what;
	if (!ret)
		vmgpu_test_fill(h->cpu, BO_SIZE, key);
	return ret;
}

/*
 * After unplug a mapping faults in one zeroed dummy page for all of it:
 * no stale VRAM or freed system page behind any address, and a write
 * shows on every page.
 */
static int dummy_page(void *cpu)
{
	volatile uint64_t *words = cpu;
	const uint64_t marker = 0x5a5aa5a5dead0001ull;

	if (words[0] || words[4096 / 8])
		return 0;
	words[0] = marker;
	return words[4096 / 8] == marker;
}

/* A primary on the first head, pinned, and a flip to a second queued. */
struct shown {
	int card;
	uint32_t crtc, connector, fb[2];
	drmModeModeInfo mode;
	uint32_t *cpu;
	uint64_t size;
};

static int show_primary(struct shown *d)
{
	drmModeRes *res;
	drmModeConnector *conn;
	int i;

	d->card = vmgpu_open_card("vmgpu");
	if (d->card < 0)
		return d->card;
	res = drmModeGetResources(d->card);
	if (!res || !res->count_crtcs || !res->count_connectors)
		return -ENODEV;
	d->crtc = res->crtcs[0];
	d->connector = res->connectors[0];
	drmModeFreeResources(res);
	conn = drmModeGetConnector(d->card, d->connector);
	if (!conn || !conn->count_modes)
		return -ENODEV;
	d->mode = conn->modes[conn->count_modes - 1];
	drmModeFreeConnector(conn);
	for (i = 0; i < 2; i++) {
		struct vmgpu_test_fb fb;
		int ret = vmgpu_test_dumb_fb(d->card, d->mode.hdisplay, d->mode.vdisplay,
					     DRM_FORMAT_XRGB8888, &fb);

		if (ret)
			return ret;
		d->fb[i] = fb.id;
		d->cpu = fb.map;
		d->size = fb.size;
		memset(d->cpu, 0x5c, fb.size);
		if (!i && drmModeSetCrtc(d->card, d->crtc, d->fb[0], 0, 0, &d->connector, 1,
					 &d->mode))
			return -errno;
	}
	return drmModePageFlip(d->card, d->crtc, d->fb[1], DRM_MODE_PAGE_FLIP_EVENT, NULL) ?
	       -errno : 0;
}

/* After a rescan: a new device that allocates, maps and moves data. */
static int device_works(void)
{
	struct drm_vmgpu_query_segments *s;
	vmgpu_device *dev;
	uint64_t first;
	uint32_t aperture;
	vmgpu_bo *bo;
	void *cpu;
	int ret;

	ret = vmgpu_device_open(&dev);
	if (ret)
		return ret;
	ret = vmgpu_query_segments(dev, &s);
	if (ret)
		goto out;
	aperture = vmgpu_aperture_segment_id(s);
	free(s);
	ret = vmgpu_test_create_mappable(dev, 1, aperture, BO_SIZE, &bo, &cpu);
	if (ret)
		goto out;
	vmgpu_test_fill(cpu, BO_SIZE, 99);
	ret = vmgpu_bo_evict(bo);
	if (!ret)
		ret = vmgpu_bo_make_resident(bo);
	if (!ret && vmgpu_test_check(cpu, BO_SIZE, 99, &first))
		ret = -EILSEQ;
	vmgpu_bo_unref(bo);
out:
	vmgpu_device_unref(dev);
	return ret;
}

TEST(unplug_with_open_files)
{
	struct drm_vmgpu_query_segments *s;
	struct drm_vmgpu_query_device info;
	struct held held[4];
	char pci[256], path[300];
	uint32_t aperture, i, gate_sync;
	vmgpu_device *dev, *gate_dev;
	vmgpu_context *ctx[3], *gate_ctx;
	struct vmgpu_sync in = { 0 };
	struct shown shown;
	vmgpu_bo *gate_bo;
	uint64_t *gate_word, seqno;
	union vmgpu_cmd cmd;
	uint8_t *shared;
	int dmabuf, sync_fd, vgem, vgem_dmabuf;
	struct vmgpu_test_fb vgem_buf;
	vmgpu_context *import_ctx;
	vmgpu_bo *imported;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_test_pci_path(dev, pci, sizeof(pci)));
	ASSERT_EQ(0, vmgpu_query_segments(dev, &s));
	aperture = vmgpu_aperture_segment_id(s);
	free(s);

	ASSERT_EQ(0, hold(dev, &held[0], "VRAM", 0, 1u << 1 | 1u << aperture, 1, 10));
	ASSERT_EQ(0, hold(dev, &held[1], "system memory", 0, 1u << aperture, aperture, 11));
	ASSERT_EQ(0, hold(dev, &held[2], "aperture", DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY,
			  1u << aperture, aperture, 12));
	ASSERT_EQ(0, hold(dev, &held[3], "evicted", 0, 1u << 1 | 1u << aperture, 1, 13));
	ASSERT_EQ(0, vmgpu_bo_evict(held[3].bo));
	ASSERT_EQ(0, drmPrimeHandleToFD(vmgpu_device_fd(dev), vmgpu_bo_handle(held[0].bo),
					DRM_CLOEXEC | DRM_RDWR, &dmabuf));
	shared = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
	ASSERT_NE(MAP_FAILED, shared);
	EXPECT_EQ(vmgpu_test_word(10, 0), *(uint64_t *)shared);

	/*
	 * Submission state: a job held behind another file's gate (a WAIT
	 * never met), one running on the other engine, a context on the
	 * physical engine, seqno pages mapped, and the allocation the held
	 * job uses destroyed, deferred until that job is done.
	 */
	ASSERT_EQ(0, vmgpu_device_open(&gate_dev));
	ASSERT_EQ(0, vmgpu_context_create(gate_dev, DRM_VMGPU_ENGINE_GPU_VA1, &gate_ctx));
	ASSERT_EQ(0, make_mapped_in_aperture(gate_dev, aperture, VA_GATE, 4096, &gate_bo,
					     (void **)&gate_word));
	*gate_word = 0;
	cmd = cmd_wait(VA_GATE, 1);
	ASSERT_EQ(0, submit_signal(gate_ctx, vmgpu_device_fd(gate_dev), &cmd, 1, &gate_sync,
				   NULL));
	ASSERT_EQ(0, drmSyncobjHandleToFD(vmgpu_device_fd(gate_dev), gate_sync, &sync_fd));
	ASSERT_EQ(0, drmSyncobjFDToHandle(vmgpu_device_fd(dev), sync_fd, &in.syncobj));
	close(sync_fd);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, vmgpu_context_create(dev, DRM_VMGPU_ENGINE_GPU_VA0 + i, &ctx[i]));
	ASSERT_EQ(0, vmgpu_vm_map(held[1].bo, 0, VA_HELD, BO_SIZE, 0));
	ASSERT_EQ(0, vmgpu_vm_map(held[2].bo, 0, VA_HELD + BO_SIZE, BO_SIZE, 0));
	cmd = cmd_fill(VA_HELD, BO_SIZE, 0x4e1d);
	ASSERT_EQ(0, vmgpu_context_submit(ctx[0], &cmd, 1, &in, 1, NULL, 0, &seqno));
	cmd = cmd_nop(VMGPU_NOP_MAX_DELAY_US);
	ASSERT_EQ(0, vmgpu_context_submit(ctx[1], &cmd, 1, NULL, 0, NULL, 0, NULL));
	EXPECT_TRUE(vmgpu_context_busy(ctx[0], seqno));
	ASSERT_EQ(0, vmgpu_bo_destroy(held[1].bo, 0));
	held[1].bo = NULL;

	/*
	 * Another device's buffer, imported, bound and written: the device's
	 * unplug detaches it (its exporter's mapping for the device goes),
	 * the buffer stays the exporter's, with what the job wrote.
	 */
	vgem = vmgpu_test_open_vgem();
	ASSERT_LE(0, vgem) TH_LOG("no vgem device");
	ASSERT_EQ(0, vmgpu_test_vgem_buffer(vgem, 1024, 16, &vgem_buf, &vgem_dmabuf));
	ASSERT_EQ(0, vmgpu_bo_import(dev, vgem_dmabuf, 0, &imported));
	ASSERT_EQ(0, vmgpu_vm_map(imported, 0, VA_IMPORT, vgem_buf.size, 0));
	cmd = cmd_fill(VA_IMPORT, vgem_buf.size, IMPORTED);
	ASSERT_EQ(0, vmgpu_context_create(dev, DRM_VMGPU_ENGINE_GPU_VA0, &import_ctx));
	ASSERT_EQ(0, run(import_ctx, vmgpu_device_fd(dev), &cmd, 1));
	ASSERT_EQ(0, vmgpu_bo_cache_sync(imported, DRM_VMGPU_CACHE_SYNC_TO_CPU, 0,
					 vgem_buf.size));

	ASSERT_EQ(0, show_primary(&shown)) TH_LOG("no head showing a primary");

	/* Paging work in flight and queued behind it when the device goes. */
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_paging_delay", "2000"));
	ASSERT_EQ(0, vmgpu_bo_evict(held[0].bo));

	snprintf(path, sizeof(path), "%s/remove", pci);
	ASSERT_EQ(0, vmgpu_test_write_file(path, "1"));
	EXPECT_NE(0, access(pci, F_OK)) TH_LOG("%s still there", pci);

	EXPECT_EQ(-ENODEV, vmgpu_query_device(dev, &info));
	for (i = 0; i < 4; i++) {
		struct drm_vmgpu_gem_info gem;

		if (!held[i].bo)
			continue;
		EXPECT_EQ(-ENODEV, vmgpu_bo_info(held[i].bo, &gem)) TH_LOG("%s", held[i].what);
		EXPECT_TRUE(dummy_page(held[i].cpu)) TH_LOG("%s", held[i].what);
	}
	EXPECT_EQ(-ENODEV, vmgpu_vm_unmap(dev, VA_HELD + BO_SIZE, BO_SIZE));
	cmd = cmd_nop(0);
	EXPECT_EQ(-ENODEV, vmgpu_context_submit(ctx[0], &cmd, 1, NULL, 0, NULL, 0, NULL));
	EXPECT_TRUE(dummy_page(shared)) TH_LOG("dma-buf");
	EXPECT_NE(0, drmModeSetCrtc(shown.card, shown.crtc, shown.fb[0], 0, 0, &shown.connector,
				    1, &shown.mode));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_TRUE(dummy_page(shown.cpu)) TH_LOG("dumb buffer");
	EXPECT_EQ(0, count_not(vgem_buf.map, vgem_buf.size, IMPORTED)) TH_LOG("vgem buffer");
	{
		struct drm_vmgpu_gem_info gem;

		EXPECT_EQ(-ENODEV, vmgpu_bo_info(imported, &gem)) TH_LOG("import");
	}

	/* The open file keeps the module; refusing is not an error path. */
	EXPECT_NE(0, vmgpu_test_run("rmmod vmgpu 2>/dev/null"));
	EXPECT_EQ(0, access("/sys/module/vmgpu", F_OK));

	munmap(shared, BO_SIZE);
	close(dmabuf);
	vmgpu_context_unref(import_ctx);
	vmgpu_bo_unref(imported);
	close(vgem_dmabuf);
	munmap(vgem_buf.map, vgem_buf.size);
	close(vgem);
	munmap(shown.cpu, shown.size);
	close(shown.card);
	for (i = 0; i < 3; i++)
		vmgpu_context_unref(ctx[i]);
	for (i = 0; i < 4; i++)
		if (held[i].bo)
			vmgpu_bo_unref(held[i].bo);
	vmgpu_device_unref(dev);
	vmgpu_bo_unref(gate_bo);
	vmgpu_context_unref(gate_ctx);
	vmgpu_device_unref(gate_dev);

	ASSERT_EQ(0, vmgpu_test_write_file("/sys/bus/pci/rescan", "1"));
	EXPECT_EQ(0, access(pci, F_OK)) TH_LOG("%s did not come back", pci);
	EXPECT_EQ(0, device_works());
}

#define CLOSERS			4
#define CLOSER_ALLOCATIONS	96
#define CLOSER_SIZE		(128 << 10)

/* A mapping of its own, which outlives the handle: 0 on failure. */
static void *map_and_close(vmgpu_device *dev, vmgpu_bo *bo)
{
	struct drm_vmgpu_gem_mmap_offset args = { .handle = vmgpu_bo_handle(bo) };
	void *cpu;

	if (vmgpu_test_ioctl(dev, DRM_IOCTL_VMGPU_GEM_MMAP_OFFSET, &args))
		return NULL;
	cpu = mmap(NULL, CLOSER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   vmgpu_device_fd(dev), args.offset);
	vmgpu_bo_unref(bo);
	return cpu == MAP_FAILED ? NULL : cpu;
}

/*
 * Hold populated system-memory allocations, say so on @ready, and exit
 * the moment the device is gone: the releases race the removal's walk of
 * TTM's LRUs, which unmaps their pages. With @by_mappings, each handle is
 * closed at once and only a mapping holds its allocation: the mapping's
 * close is the release, and after the removal a mapping shows the dummy
 * page.
 */
static int closer(int ready, uint32_t aperture, bool by_mappings)
{
	struct drm_vmgpu_query_device info;
	void *cpu, *kept = NULL;
	vmgpu_device *dev;
	vmgpu_bo *bo;
	int i;

	if (vmgpu_device_open(&dev))
		return 1;
	for (i = 0; i < CLOSER_ALLOCATIONS; i++) {
		if (vmgpu_test_create_mappable(dev, aperture, aperture, CLOSER_SIZE, &bo, &cpu))
			return 2;
		vmgpu_test_fill(cpu, CLOSER_SIZE, i);
		if (by_mappings && !(kept = map_and_close(dev, bo)))
			return 4;
	}
	/* Then the parent sees the end of the pipe once every closer is set up. */
	if (write(ready, "r", 1) != 1)
		return 3;
	close(ready);
	while (vmgpu_query_device(dev, &info) != -ENODEV)
		;
	if (kept && !dummy_page(kept))
		return 5;
	/* The exit closes the file and the mappings: every allocation goes at once. */
	return 0;
}

TEST(unplug_while_files_close)
{
	char pci[256], path[300], byte;
	uint32_t aperture;
	vmgpu_device *dev;
	int ready[2], status, i;
	pid_t pid[CLOSERS];

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_test_pci_path(dev, pci, sizeof(pci)));
	aperture = vmgpu_test_aperture(dev);
	vmgpu_device_unref(dev);

	ASSERT_EQ(0, pipe(ready));
	for (i = 0; i < CLOSERS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(closer(ready[1], aperture, i % 2));
	}
	close(ready[1]);
	for (i = 0; i < CLOSERS; i++) {
		if (read(ready[0], &byte, 1) == 1)
			continue;
		for (i = 0; i < CLOSERS; i++) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], &status, 0);
		}
		ASSERT_TRUE(false) TH_LOG("a closer failed to set up");
	}

	snprintf(path, sizeof(path), "%s/remove", pci);
	ASSERT_EQ(0, vmgpu_test_write_file(path, "1"));
	for (i = 0; i < CLOSERS; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("closer %d: status %#x", i, status);
	}
	close(ready[0]);

	ASSERT_EQ(0, vmgpu_test_write_file("/sys/bus/pci/rescan", "1"));
	EXPECT_EQ(0, access(pci, F_OK)) TH_LOG("%s did not come back", pci);
	EXPECT_EQ(0, device_works());
}

#define HUNG_TASK_TIMEOUT	"/proc/sys/kernel/hung_task_timeout_secs"

/*
 * A file closed with a job in flight, then the device removed: the job,
 * failed by the removal, holds the last reference to its context, and
 * the context, with its GPU VA space, the last ones to the DRM device.
 * Freeing the job must not release the device in the scheduler work that
 * frees it: the release stops that scheduler (drm_sched_fini()), which
 * waits for that very work, and the worker would hang for good. The job's
 * free waits (inject_free_job_delay_ms) until the removal is done, and
 * the space is released in the context's release (inject_vm_free_sync).
 * The hung-task detector, at 5 s, watches.
 */
FIXTURE(last_reference) {
	/* The hung-task detector's timeout to put back, if a test set one. */
	char hung_task_timeout[32];
};

FIXTURE_SETUP(last_reference)
{
	self->hung_task_timeout[0] = 0;
}

FIXTURE_TEARDOWN(last_reference)
{
	if (self->hung_task_timeout[0])
		vmgpu_test_write_file(HUNG_TASK_TIMEOUT, self->hung_task_timeout);
	/* Whatever failed: a device on the bus for the tests after. */
	vmgpu_test_run("modprobe vmgpu");
	vmgpu_test_write_file("/sys/bus/pci/rescan", "1");
	vmgpu_test_debugfs_write("inject_vm_free_sync", "0");
	vmgpu_test_debugfs_write("inject_free_job_delay_ms", "0");
}

TEST_F_TIMEOUT(last_reference, dropped_by_a_job_free, 120)
{
	union vmgpu_cmd nop = cmd_nop(VMGPU_NOP_MAX_DELAY_US);
	char pci[256], path[300];
	vmgpu_context *ctx;
	vmgpu_device *dev;
	int fd, n, hung;

	fd = open(HUNG_TASK_TIMEOUT, O_RDONLY);
	ASSERT_LE(0, fd) TH_LOG("no hung-task detector");
	n = read(fd, self->hung_task_timeout, sizeof(self->hung_task_timeout) - 1);
	close(fd);
	ASSERT_LT(0, n);
	self->hung_task_timeout[n] = 0;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_test_pci_path(dev, pci, sizeof(pci)));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_vm_free_sync", "1"));
	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_free_job_delay_ms", "8000"));
	ASSERT_EQ(0, vmgpu_context_create(dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx));
	ASSERT_EQ(0, vmgpu_context_submit(ctx, &nop, 1, NULL, 0, NULL, 0, NULL));
	vmgpu_context_unref(ctx);
	vmgpu_device_unref(dev);

	ASSERT_EQ(0, vmgpu_test_write_file(HUNG_TASK_TIMEOUT, "5"));
	hung = vmgpu_test_dmesg_count("blocked for more than");

	snprintf(path, sizeof(path), "%s/remove", pci);
	ASSERT_EQ(0, vmgpu_test_write_file(path, "1"));
	/* The free, 8 s on, then two rounds of the detector. */
	sleep(20);
	EXPECT_EQ(hung, vmgpu_test_dmesg_count("blocked for more than"))
		TH_LOG("a worker hung releasing the device");

	ASSERT_EQ(0, vmgpu_test_write_file("/sys/bus/pci/rescan", "1"));
	EXPECT_EQ(0, access(pci, F_OK)) TH_LOG("%s did not come back", pci);
	EXPECT_EQ(0, device_works());
}

/* A child: a physical-engine job held by sync_file's fence, then exit. */
static int killed_job(int sync_file, int ready)
{
	union vmgpu_cmd nop = cmd_nop(0);
	struct vmgpu_sync in = { 0 };
	vmgpu_context *ctx;
	vmgpu_device *dev;
	char c = 0;

	if (vmgpu_device_open(&dev) ||
	    vmgpu_context_create(dev, DRM_VMGPU_ENGINE_PHYSICAL, &ctx) ||
	    drmSyncobjCreate(vmgpu_device_fd(dev), 0, &in.syncobj) ||
	    drmSyncobjImportSyncFile(vmgpu_device_fd(dev), in.syncobj, sync_file) ||
	    vmgpu_context_submit(ctx, &nop, 1, &in, 1, NULL, 0, NULL))
		return 1;
	return write(ready, &c, 1) == 1 ? 0 : 1;
}

/*
 * A process exits with a job held by another driver's fence: the
 * scheduler kills its context's queue and frees the job once the fence
 * signals, from a work item of its own, maybe long after the device was
 * removed. A physical-engine context holds no GPU VA space, so the
 * context itself must keep the device, and the module, until its jobs
 * are freed: without that, the removal released the device and the job's
 * free reached its freed scheduler (KASAN on the debug kernel), and
 * rmmod let the module go under the job.
 */
TEST_F_TIMEOUT(last_reference, kept_by_a_killed_job, 120)
{
	char pci[256], path[300], c;
	struct vgem_fence_signal signal = { 0 };
	struct vmgpu_test_fb buf;
	int vgem, dmabuf, sync_file, ready[2], status, rmmod;
	vmgpu_device *dev;
	bool pending;
	pid_t pid;

	ASSERT_EQ(0, vmgpu_device_open(&dev));
	ASSERT_EQ(0, vmgpu_test_pci_path(dev, pci, sizeof(pci)));
	vmgpu_device_unref(dev);
	vgem = vmgpu_test_open_vgem();
	ASSERT_LE(0, vgem) TH_LOG("no vgem device");
	ASSERT_EQ(0, vmgpu_test_vgem_buffer(vgem, 64, 64, &buf, &dmabuf));
	ASSERT_EQ(0, vmgpu_test_vgem_fence(vgem, buf.handle, dmabuf, &signal.fence, &sync_file));

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(killed_job(sync_file, ready[1]));
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("the job was not queued");
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));

	snprintf(path, sizeof(path), "%s/remove", pci);
	ASSERT_EQ(0, vmgpu_test_write_file(path, "1"));
	rmmod = vmgpu_test_run("rmmod vmgpu 2>/dev/null");
	/* vgem signals its fences itself after 10 s: then this proves nothing. */
	pending = poll(&(struct pollfd){ .fd = sync_file, .events = POLLIN }, 1, 0) == 0;
	if (pending)
		EXPECT_NE(0, rmmod) TH_LOG("the module went with a job still to free");
	/* The job is freed now, and the device with it. */
	if (drmIoctl(vgem, DRM_IOCTL_VGEM_FENCE_SIGNAL, &signal))
		EXPECT_FALSE(pending) TH_LOG("vgem's fence: %s", strerror(errno));
	sleep(1);
	if (!rmmod)
		ASSERT_EQ(0, vmgpu_test_run("modprobe vmgpu"));

	close(ready[0]);
	close(sync_file);
	munmap(buf.map, buf.size);
	close(dmabuf);
	close(vgem);
	ASSERT_EQ(0, vmgpu_test_write_file("/sys/bus/pci/rescan", "1"));
	EXPECT_EQ(0, access(pci, F_OK)) TH_LOG("%s did not come back", pci);
	EXPECT_EQ(0, device_works());
	if (!pending)
		SKIP(return, "vgem's fence signalled before the removal was done");
}

TEST_HARNESS_MAIN
