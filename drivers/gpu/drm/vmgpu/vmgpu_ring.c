// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright 2026 The vmgpu authors
 */

#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <drm/drm_print.h>

#include "vmgpu_device.h"
#include "vmgpu_fence.h"
#include "vmgpu_ring.h"
#include "vmgpu_trace.h"

/**
 * DOC: paging ring
 *
 * The kernel's paging operations (seed "GPU segments": Fill, Transfer,
 * Discard...) go to the device's privileged paging ring. Jobs pass through
 * a DRM scheduler so that a job waits for its dependencies on the GPU side
 * (scheduler callbacks), never by blocking the CPU thread that queued it,
 * and so that a job that never completes times out. The scheduler's credit
 * limit is the ring size, so run_job always finds room in the ring.
 */

#define VMGPU_PAGING_RING_ORDER	12

static unsigned int paging_timeout_ms = 10000;
module_param(paging_timeout_ms, uint, 0444);
MODULE_PARM_DESC(paging_timeout_ms,
		 "A paging job running longer is declared hung and the ring reset (default 10000)");

struct vmgpu_job {
	struct drm_sched_job base;
	struct vmgpu_ring *ring;
	u32 num_cmds;
	u32 max_cmds;
	union vmgpu_cmd cmds[];
};

static struct vmgpu_job *to_vmgpu_job(struct drm_sched_job *job)
{
	return container_of(job, struct vmgpu_job, base);
}

static struct vmgpu_device *ring_to_vdev(struct vmgpu_ring *ring)
{
	return container_of(ring, struct vmgpu_device, paging);
}

static void vmgpu_ring_write_reg(struct vmgpu_ring *ring, u32 reg, u32 val)
{
	vmgpu_write32(ring_to_vdev(ring), VMGPU_REG_RING(VMGPU_RING_PAGING) + reg, val);
}

static u32 vmgpu_ring_read_reg(struct vmgpu_ring *ring, u32 reg)
{
	return vmgpu_read32(ring_to_vdev(ring), VMGPU_REG_RING(VMGPU_RING_PAGING) + reg);
}

/**
 * vmgpu_job_alloc() - a paging job with room for commands
 * @vdev: the device
 * @max_cmds: how many commands the caller will add, at most
 *
 * Return: the job, or an ERR_PTR: -E2BIG if it could never fit the ring.
 */
struct vmgpu_job *vmgpu_job_alloc(struct vmgpu_device *vdev, u32 max_cmds)
{
	struct vmgpu_job *job;

	if (max_cmds > vmgpu_job_max_cmds(vdev))
		return ERR_PTR(-E2BIG);
	job = kvzalloc(struct_size(job, cmds, max_cmds), GFP_KERNEL);
	if (!job)
		return ERR_PTR(-ENOMEM);
	job->ring = &vdev->paging;
	job->max_cmds = max_cmds;
	return job;
}

/**
 * vmgpu_job_max_cmds() - commands a job can hold
 * @vdev: the device
 *
 * Return: one less than the ring minus the job's own FENCE command.
 */
u32 vmgpu_job_max_cmds(struct vmgpu_device *vdev)
{
	return vdev->paging.num_slots - 2;
}

/**
 * vmgpu_job_add() - append a command
 * @job: a job not yet submitted
 * @cmd: the command, copied
 */
void vmgpu_job_add(struct vmgpu_job *job, const union vmgpu_cmd *cmd)
{
	if (WARN_ON(job->num_cmds == job->max_cmds))
		return;
	job->cmds[job->num_cmds++] = *cmd;
}

/**
 * vmgpu_job_free() - drop a job that was never submitted
 * @job: the job
 */
void vmgpu_job_free(struct vmgpu_job *job)
{
	kvfree(job);
}

/**
 * vmgpu_job_submit() - queue a job after the fences of a reservation object
 * @job: the job; owned by the scheduler from now on
 * @resv: its dependencies (every usage), or NULL
 *
 * Return: the job's finished fence (a reference for the caller), or an
 * ERR_PTR; on error the job is freed.
 */
struct dma_fence *vmgpu_job_submit(struct vmgpu_job *job, struct dma_resv *resv)
{
	struct dma_fence *fence;
	int ret;

	ret = drm_sched_job_init(&job->base, &job->ring->entity,
				 job->num_cmds + 1, NULL, 0);
	if (ret)
		goto err_free;
	if (resv) {
		ret = drm_sched_job_add_resv_dependencies(&job->base, resv,
							  DMA_RESV_USAGE_BOOKKEEP);
		if (ret)
			goto err_cleanup;
	}
	drm_sched_job_arm(&job->base);
	fence = dma_fence_get(&job->base.s_fence->finished);
	trace_vmgpu_job_submit(fence, job->num_cmds);
	drm_sched_entity_push_job(&job->base);
	return fence;

err_cleanup:
	drm_sched_job_cleanup(&job->base);
err_free:
	kvfree(job);
	return ERR_PTR(ret);
}

static struct dma_fence *vmgpu_ring_run_job(struct drm_sched_job *sched_job)
{
	struct vmgpu_job *job = to_vmgpu_job(sched_job);
	struct vmgpu_ring *ring = job->ring;
	u32 mask = ring->num_slots - 1;
	struct dma_fence *fence;
	union vmgpu_cmd fence_cmd = {};
	u64 seqno;
	u32 i;

	fence = vmgpu_fence_emit(ring, &seqno);
	if (!fence)
		return ERR_PTR(-ENOMEM);

	for (i = 0; i < job->num_cmds; i++) {
		trace_vmgpu_cmd(&job->cmds[i]);
		ring->cmds[ring->tail] = job->cmds[i];
		ring->tail = (ring->tail + 1) & mask;
	}
	fence_cmd.fence.hdr.opcode = cpu_to_le16(VMGPU_OP_FENCE);
	fence_cmd.fence.hdr.flags = cpu_to_le16(VMGPU_FENCE_FLAG_IRQ);
	fence_cmd.fence.dst.space = cpu_to_le32(VMGPU_SPACE_SYSTEM);
	fence_cmd.fence.dst.addr = cpu_to_le64(ring->seqno_bus);
	fence_cmd.fence.value = cpu_to_le64(seqno);
	ring->cmds[ring->tail] = fence_cmd;
	ring->tail = (ring->tail + 1) & mask;

	/* Commands must be in memory before the doorbell. */
	dma_wmb();
	vmgpu_ring_write_reg(ring, VMGPU_RING_TAIL, ring->tail);
	return fence;
}

/*
 * Hang recovery for now: pause submission, stop the ring, fail every fence
 * it owes, start it again empty. The jobs complete through their hardware
 * fences' callbacks as usual, carrying -ETIMEDOUT: the moves they held are
 * lost and their fences say so.
 */
static enum drm_gpu_sched_stat vmgpu_ring_timedout_job(struct drm_sched_job *sched_job)
{
	struct vmgpu_job *job = to_vmgpu_job(sched_job);
	struct vmgpu_ring *ring = job->ring;
	struct vmgpu_device *vdev = ring_to_vdev(ring);

	drm_err(&vdev->drm, "paging ring hung: head %u tail %u status 0x%x, seqno %llu of %llu; resetting it\n",
		vmgpu_ring_read_reg(ring, VMGPU_RING_HEAD), ring->tail,
		vmgpu_ring_read_reg(ring, VMGPU_RING_STATUS),
		READ_ONCE(*ring->seqno_cpu), ring->next_seqno);

	drm_sched_wqueue_stop(&ring->sched);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, 0);
	vmgpu_fence_fail_all(ring, -ETIMEDOUT);
	ring->tail = 0;
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, VMGPU_RING_CTRL_ENABLE);
	drm_sched_wqueue_start(&ring->sched);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void vmgpu_ring_free_job(struct drm_sched_job *sched_job)
{
	drm_sched_job_cleanup(sched_job);
	kvfree(to_vmgpu_job(sched_job));
}

static const struct drm_sched_backend_ops vmgpu_ring_sched_ops = {
	.run_job = vmgpu_ring_run_job,
	.timedout_job = vmgpu_ring_timedout_job,
	.free_job = vmgpu_ring_free_job,
};

/**
 * vmgpu_ring_handle_error() - the device halted the paging ring
 * @vdev: the device
 *
 * Called from the error interrupt. The failed command belongs to the
 * oldest unfinished job, whose fence gets -EIO; the ring resumes after the
 * failed command so that later jobs, and that job's FENCE, still run.
 */
void vmgpu_ring_handle_error(struct vmgpu_device *vdev)
{
	struct vmgpu_ring *ring = &vdev->paging;

	if (!(vmgpu_ring_read_reg(ring, VMGPU_RING_STATUS) & VMGPU_RING_STATUS_HALTED))
		return;
	vmgpu_fence_fail_oldest(ring, -EIO);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL,
			     VMGPU_RING_CTRL_ENABLE | VMGPU_RING_CTRL_RESUME);
}

static irqreturn_t vmgpu_ring_fence_irq(int irq, void *arg)
{
	struct vmgpu_device *vdev = arg;

	vmgpu_write32(vdev, VMGPU_REG_INT_STATUS, VMGPU_INT_FENCE);
	vmgpu_fence_process(&vdev->paging);
	return IRQ_HANDLED;
}

/**
 * vmgpu_ring_init() - set up the paging ring, its fences and scheduler
 * @vdev: the device, with MSI-X vectors allocated
 *
 * Return: 0 or a negative errno.
 */
int vmgpu_ring_init(struct vmgpu_device *vdev)
{
	struct vmgpu_ring *ring = &vdev->paging;
	struct pci_dev *pdev = vmgpu_pdev(vdev);
	struct drm_gpu_scheduler *sched = &ring->sched;
	const struct drm_sched_init_args args = {
		.ops = &vmgpu_ring_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = (1u << VMGPU_PAGING_RING_ORDER) - 1,
		.timeout = msecs_to_jiffies(paging_timeout_ms),
		.name = "vmgpu-paging",
		.dev = vdev->drm.dev,
	};
	int ret;

	ring->num_slots = 1u << VMGPU_PAGING_RING_ORDER;
	ring->cmds = dmam_alloc_coherent(&pdev->dev, ring->num_slots * VMGPU_CMD_SIZE,
					 &ring->cmds_bus, GFP_KERNEL);
	ring->seqno_cpu = dmam_alloc_coherent(&pdev->dev, sizeof(u64),
					      &ring->seqno_bus, GFP_KERNEL);
	if (!ring->cmds || !ring->seqno_cpu)
		return -ENOMEM;
	vmgpu_fence_init(ring);
	ring->tail = 0;

	vmgpu_ring_write_reg(ring, VMGPU_RING_BASE_LO, lower_32_bits(ring->cmds_bus));
	vmgpu_ring_write_reg(ring, VMGPU_RING_BASE_HI, upper_32_bits(ring->cmds_bus));
	vmgpu_ring_write_reg(ring, VMGPU_RING_SIZE_SHIFT, VMGPU_PAGING_RING_ORDER);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, VMGPU_RING_CTRL_ENABLE);

	ret = request_irq(pci_irq_vector(pdev, VMGPU_MSIX_VEC_FENCE),
			  vmgpu_ring_fence_irq, 0, "vmgpu-fence", vdev);
	if (ret)
		goto err_disable;

	vmgpu_write32(vdev, VMGPU_REG_INT_MASK,
		      vmgpu_read32(vdev, VMGPU_REG_INT_MASK) | VMGPU_INT_FENCE);

	ret = drm_sched_init(sched, &args);
	if (ret)
		goto err_irq;
	ret = drm_sched_entity_init(&ring->entity, DRM_SCHED_PRIORITY_KERNEL,
				    &sched, 1, NULL);
	if (ret)
		goto err_sched;
	return 0;

err_sched:
	drm_sched_fini(sched);
err_irq:
	vmgpu_write32(vdev, VMGPU_REG_INT_MASK,
		      vmgpu_read32(vdev, VMGPU_REG_INT_MASK) & ~VMGPU_INT_FENCE);
	free_irq(pci_irq_vector(pdev, VMGPU_MSIX_VEC_FENCE), vdev);
err_disable:
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, 0);
	return ret;
}

/**
 * vmgpu_ring_fini() - drain and stop the paging ring
 * @vdev: the device
 *
 * Jobs still queued are flushed; fences the device can no longer complete
 * fail with -ENODEV.
 */
void vmgpu_ring_fini(struct vmgpu_device *vdev)
{
	struct vmgpu_ring *ring = &vdev->paging;

	drm_sched_entity_destroy(&ring->entity);
	drm_sched_fini(&ring->sched);
	vmgpu_ring_write_reg(ring, VMGPU_RING_CTRL, 0);
	vmgpu_write32(vdev, VMGPU_REG_INT_MASK,
		      vmgpu_read32(vdev, VMGPU_REG_INT_MASK) & ~VMGPU_INT_FENCE);
	free_irq(pci_irq_vector(vmgpu_pdev(vdev), VMGPU_MSIX_VEC_FENCE), vdev);
	vmgpu_fence_fail_all(ring, -ENODEV);
}
