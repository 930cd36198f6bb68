// SPDX-License-Identifier: MIT
/*
 * Isolation between processes through the device's VM slots. The device
 * has 15 VMs for user address spaces; the kernel lends them to any number
 * of spaces. A slot must not change hands while a job of its space can
 * still run, and the device itself refuses a job whose slot was lent
 * again (contract v1.4: SET_VM and VM generations).
 *
 * The attack: one process has two contexts on one engine. Its first job,
 * a FILL, is held by an in-fence from another file (jobs of seconds on
 * the physical engine, which holds no VM slot that the victims could
 * take); its second completes.
 * Sixteen other processes then each submit, so that every slot is wanted,
 * each having mapped its secret at the very address the held FILL writes.
 * The gate opens: the FILL must land in its own process's memory, and
 * every secret must be intact.
 *
 * And a dying space (its file closed) keeps what a slot search reads of
 * it for as long as it holds its slot.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xf86drm.h>

#include "kselftest_harness.h"
#include "vmgpu_submit.h"
#include "vmgpu_testlib.h"

#define SIZE		(64 * 1024ull)
#define VA_X		0x500000000ull
/* The gate: jobs of one longest NOP each (under the job timeout) in a row. */
#define GATE_JOBS	6
#define NUM_VICTIMS	16
/* The device's VMs for user spaces (VM 0 is the paging process's). */
#define USER_SLOTS	15
#define SECRET		0x5ec4e7
#define ATTACK		0x0a77ac4u

FIXTURE(isolation) {
	vmgpu_device *dev;
	uint32_t aperture;
	uint32_t segment;
};

FIXTURE_SETUP(isolation)
{
	struct drm_vmgpu_segment seg;

	ASSERT_EQ(0, vmgpu_device_open(&self->dev));
	ASSERT_EQ(0, find_segments(self->dev, 4 * SIZE, &self->aperture, &seg));
	self->segment = seg.id;
	ASSERT_NE(0, self->segment);
}

FIXTURE_TEARDOWN(isolation)
{
	vmgpu_test_debugfs_write("inject_vm_free_delay_ms", "0");
	vmgpu_device_unref(self->dev);
}

/*
 * A victim: its secret at VA_X, one job to take a slot, then it says so
 * on ready and waits for a byte on check. Exits 0 if the secret is intact,
 * 2 if it was overwritten, 1 if something else failed.
 */
static int victim(uint32_t segment, uint32_t aperture, int ready, int check)
{
	union vmgpu_cmd nop = cmd_nop(0);
	vmgpu_context *ctx;
	vmgpu_device *dev;
	uint64_t first;
	vmgpu_bo *bo;
	void *cpu;
	char c = 0;

	if (vmgpu_device_open(&dev) ||
	    vmgpu_context_create(dev, DRM_VMGPU_ENGINE_GPU_VA0, &ctx) ||
	    make_mapped(dev, segment, aperture, VA_X, SIZE, &bo, &cpu))
		return 1;
	vmgpu_test_fill(cpu, SIZE, SECRET);
	if (run(ctx, vmgpu_device_fd(dev), &nop, 1))
		return 1;
	if (write(ready, &c, 1) != 1 || read(check, &c, 1) != 1)
		return 1;
	return vmgpu_test_check(cpu, SIZE, SECRET, &first) ? 2 : 0;
}

TEST_F_TIMEOUT(isolation, held_job_never_reaches_next_slot_owner, 300)
{
	union vmgpu_cmd attack = cmd_fill(VA_X, SIZE, ATTACK), nop = cmd_nop(0);
	union vmgpu_cmd gate = cmd_nop(VMGPU_NOP_MAX_DELAY_US);
	int ready[2], check[2], status, fd = vmgpu_device_fd(self->dev);
	uint32_t gate_out, gate_in, attack_out;
	vmgpu_context *first, *second, *gate_ctx;
	struct vmgpu_sync in, out;
	vmgpu_device *gate_dev;
	uint64_t attack_seqno;
	vmgpu_bo *mine;
	pid_t pids[NUM_VICTIMS];
	unsigned int i, intact = 0, overwritten = 0;
	uint8_t *mine_cpu;
	int syncobj_fd;
	char c = 0;

	int64_t t0 = now_ms();

	/* Another file's jobs hold the gate, in no GPU VA space. */
	ASSERT_EQ(0, vmgpu_device_open(&gate_dev));
	ASSERT_EQ(0, vmgpu_context_create(gate_dev, DRM_VMGPU_ENGINE_PHYSICAL, &gate_ctx));
	for (i = 0; i + 1 < GATE_JOBS; i++)
		ASSERT_EQ(0, vmgpu_context_submit(gate_ctx, &gate, 1, NULL, 0, NULL, 0, NULL));
	ASSERT_EQ(0, submit_signal(gate_ctx, vmgpu_device_fd(gate_dev), &gate, 1, &gate_out,
				   NULL));
	ASSERT_EQ(0, drmSyncobjHandleToFD(vmgpu_device_fd(gate_dev), gate_out, &syncobj_fd));
	ASSERT_EQ(0, drmSyncobjFDToHandle(fd, syncobj_fd, &gate_in));
	close(syncobj_fd);

	/* Two contexts on one engine: the first held, the second done. */
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &first));
	ASSERT_EQ(0, vmgpu_context_create(self->dev, DRM_VMGPU_ENGINE_GPU_VA0, &second));
	ASSERT_EQ(0, make_mapped(self->dev, self->segment, self->aperture, VA_X, SIZE,
				 &mine, (void **)&mine_cpu));
	memset(mine_cpu, 0, SIZE);
	ASSERT_EQ(0, drmSyncobjCreate(fd, 0, &attack_out));
	in = (struct vmgpu_sync){ .syncobj = gate_in };
	out = (struct vmgpu_sync){ .syncobj = attack_out };
	ASSERT_EQ(0, vmgpu_context_submit(first, &attack, 1, &in, 1, &out, 1, &attack_seqno));
	ASSERT_EQ(0, run(second, fd, &nop, 1));

	/* Every slot wanted, each by a process with its secret at VA_X. */
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(check));
	for (i = 0; i < NUM_VICTIMS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(victim(self->segment, self->aperture, ready[1], check[0]));
	}
	for (i = 0; i < NUM_VICTIMS; i++)
		ASSERT_EQ(1, read(ready[0], &c, 1)) TH_LOG("victim %u not ready", i);
	/*
	 * Or the test proves nothing: every slot was wanted while it waited.
	 * Victims wait for any slot's jobs, never for the held one's alone.
	 */
	ASSERT_TRUE(vmgpu_context_busy(first, attack_seqno))
		TH_LOG("the gate opened after %lld ms, before the victims took the slots",
		       (long long)(now_ms() - t0));

	/* The gate opens: the held FILL runs. */
	ASSERT_EQ(0, wait_syncobj(fd, attack_out));
	for (i = 0; i < NUM_VICTIMS; i++)
		ASSERT_EQ(1, write(check[1], &c, 1));
	for (i = 0; i < NUM_VICTIMS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		intact += WEXITSTATUS(status) == 0;
		overwritten += WEXITSTATUS(status) == 2;
	}
	EXPECT_EQ(0, overwritten) TH_LOG("another process's secret got the held job's FILL");
	EXPECT_EQ(NUM_VICTIMS, intact);
	/* It ran in its own space, where it belongs: no fault. */
	EXPECT_EQ(0, count_not(mine_cpu, SIZE, ATTACK));
	EXPECT_EQ(0, run(first, fd, &nop, 1));

	drmSyncobjDestroy(fd, attack_out);
	drmSyncobjDestroy(fd, gate_in);
	vmgpu_bo_unref(mine);
	vmgpu_context_unref(second);
	vmgpu_context_unref(first);
	drmSyncobjDestroy(vmgpu_device_fd(gate_dev), gate_out);
	vmgpu_context_unref(gate_ctx);
	vmgpu_device_unref(gate_dev);
}

/* The device VMs held by the spaces of open files (debugfs vms), or -1. */
static int slots_held(void)
{
	static char buf[65536];
	char *line;
	int held = 0, id;

	if (vmgpu_test_debugfs_read("vms", buf, sizeof(buf)))
		return -1;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		held += sscanf(line, "vm %d:", &id) == 1 && id > 0;
	return held;
}

/*
 * A space whose last reference went is released by a worker; until then
 * it keeps its device VM, on the slot LRU, where a slot search reads its
 * reservation to see whether its jobs are done. inject_vm_free_delay_ms
 * holds that window open. Every slot is taken, so the next space's search
 * reaches the dying one first, the least recently used: it must find it
 * idle and take its slot. On the debug kernel, KASAN reports a read of a
 * reservation freed with the space's last reference (make test fails on
 * the report).
 */
TEST_F(isolation, dying_space_keeps_what_a_slot_search_reads)
{
	vmgpu_context *ctxs[USER_SLOTS], *late_ctx;
	vmgpu_device *devs[USER_SLOTS], *late;
	union vmgpu_cmd nop = cmd_nop(0);
	int i;

	ASSERT_EQ(0, vmgpu_test_debugfs_write("inject_vm_free_delay_ms", "3000"));
	for (i = 0; i < USER_SLOTS; i++) {
		ASSERT_EQ(0, vmgpu_device_open(&devs[i]));
		ASSERT_EQ(0, vmgpu_context_create(devs[i], DRM_VMGPU_ENGINE_GPU_VA0, &ctxs[i]));
		ASSERT_EQ(0, run(ctxs[i], vmgpu_device_fd(devs[i]), &nop, 1)) TH_LOG("space %d", i);
	}
	ASSERT_EQ(USER_SLOTS, slots_held()) TH_LOG("not every device VM is taken");
	ASSERT_EQ(0, vmgpu_device_open(&late));
	ASSERT_EQ(0, vmgpu_context_create(late, DRM_VMGPU_ENGINE_GPU_VA0, &late_ctx));

	/* The least recently used space dies, holding its slot. */
	vmgpu_context_unref(ctxs[0]);
	vmgpu_device_unref(devs[0]);
	usleep(200 * 1000);
	EXPECT_EQ(USER_SLOTS - 1, slots_held());
	EXPECT_EQ(0, run(late_ctx, vmgpu_device_fd(late), &nop, 1));
	EXPECT_EQ(USER_SLOTS, slots_held()) TH_LOG("the late space got no slot");

	vmgpu_context_unref(late_ctx);
	vmgpu_device_unref(late);
	for (i = 1; i < USER_SLOTS; i++) {
		vmgpu_context_unref(ctxs[i]);
		vmgpu_device_unref(devs[i]);
	}
}

TEST_HARNESS_MAIN
