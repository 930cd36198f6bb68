/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright 2026 The vmgpu authors
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vmgpu

#if !defined(_VMGPU_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _VMGPU_TRACE_H_

#include <linux/dma-fence.h>
#include <linux/tracepoint.h>

#include "hw/vmgpu_hw.h"

TRACE_EVENT(vmgpu_job_submit,
	    TP_PROTO(struct dma_fence *fence, u32 num_cmds),
	    TP_ARGS(fence, num_cmds),
	    TP_STRUCT__entry(__field(u64, context)
			     __field(u64, seqno)
			     __field(u32, num_cmds)),
	    TP_fast_assign(__entry->context = fence->context;
			   __entry->seqno = fence->seqno;
			   __entry->num_cmds = num_cmds;),
	    TP_printk("fence %llu:%llu, %u commands",
		      __entry->context, __entry->seqno, __entry->num_cmds)
);

/* One paging operation, as it goes into the ring. */
TRACE_EVENT(vmgpu_cmd,
	    TP_PROTO(const union vmgpu_cmd *cmd),
	    TP_ARGS(cmd),
	    TP_STRUCT__entry(__field(u16, opcode)
			     __field(u16, flags)
			     __field(u32, space0)
			     __field(u64, addr0)
			     __field(u32, space1)
			     __field(u64, addr1)
			     __field(u64, size)),
	    TP_fast_assign(__entry->opcode = le16_to_cpu(cmd->hdr.opcode);
			   __entry->flags = le16_to_cpu(cmd->hdr.flags);
			   __entry->space0 = le32_to_cpu(cmd->transfer.src.space);
			   __entry->addr0 = le64_to_cpu(cmd->transfer.src.addr);
			   __entry->space1 = le32_to_cpu(cmd->transfer.dst.space);
			   __entry->addr1 = le64_to_cpu(cmd->transfer.dst.addr);
			   __entry->size = __entry->opcode == VMGPU_OP_TRANSFER ?
					   le64_to_cpu(cmd->transfer.size) :
					   le64_to_cpu(cmd->range.size);),
	    TP_printk("op %u flags 0x%x %u:0x%llx %u:0x%llx size 0x%llx",
		      __entry->opcode, __entry->flags, __entry->space0,
		      __entry->addr0, __entry->space1, __entry->addr1,
		      __entry->size)
);

/* An allocation changes segment; evict says TTM made room for another. */
TRACE_EVENT(vmgpu_bo_move,
	    TP_PROTO(const void *bo, u64 size, u32 from, u32 to, bool evict),
	    TP_ARGS(bo, size, from, to, evict),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u64, size)
			     __field(u32, from)
			     __field(u32, to)
			     __field(bool, evict)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->size = size;
			   __entry->from = from;
			   __entry->to = to;
			   __entry->evict = evict;),
	    TP_printk("bo %p size 0x%llx segment %u -> %u%s", __entry->bo,
		      __entry->size, __entry->from, __entry->to,
		      __entry->evict ? " (eviction)" : "")
);

/* An allocation gets (map) or gives back host-aperture pages. */
TRACE_EVENT(vmgpu_hap,
	    TP_PROTO(const void *bo, u32 pages, bool map),
	    TP_ARGS(bo, pages, map),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u32, pages)
			     __field(bool, map)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->pages = pages;
			   __entry->map = map;),
	    TP_printk("bo %p %s %u host-aperture pages", __entry->bo,
		      __entry->map ? "maps" : "gives back", __entry->pages)
);

/*
 * One chunk of a NotifyAlloc (flags: VMGPU_NOTIFY_FLAG_*) through the
 * paging process GPU VA; bo is the allocation, or its pages for
 * NotifyIoMmuUnmap.
 */
TRACE_EVENT(vmgpu_notify,
	    TP_PROTO(const void *key, u16 flags, u64 size, u64 offset, u64 chunk, int error),
	    TP_ARGS(key, flags, size, offset, chunk, error),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u16, flags)
			     __field(u64, size)
			     __field(u64, offset)
			     __field(u64, chunk)
			     __field(int, error)),
	    TP_fast_assign(__entry->bo = key;
			   __entry->flags = flags;
			   __entry->size = size;
			   __entry->offset = offset;
			   __entry->chunk = chunk;
			   __entry->error = error;),
	    TP_printk("bo %p %s size 0x%llx chunk 0x%llx+0x%llx error %d", __entry->bo,
		      __print_flags(__entry->flags, "|",
				    { VMGPU_NOTIFY_FLAG_EVICTION, "eviction" },
				    { VMGPU_NOTIFY_FLAG_IOMMU_UNMAP, "iommu-unmap" }),
		      __entry->size,
		      __entry->offset, __entry->chunk, __entry->error)
);

/*
 * One chunk of a clear (op 2, Fill) or copy (op 3, Transfer) through the
 * paging process GPU VA: bytes [offset, offset + size) of the allocation.
 */
TRACE_EVENT(vmgpu_paging_chunk,
	    TP_PROTO(const void *bo, u16 op, u64 offset, u64 size),
	    TP_ARGS(bo, op, offset, size),
	    TP_STRUCT__entry(__field(const void *, bo)
			     __field(u16, op)
			     __field(u64, offset)
			     __field(u64, size)),
	    TP_fast_assign(__entry->bo = bo;
			   __entry->op = op;
			   __entry->offset = offset;
			   __entry->size = size;),
	    TP_printk("bo %p op %u chunk 0x%llx+0x%llx", __entry->bo, __entry->op,
		      __entry->offset, __entry->size)
);

/* A scrub of @size bytes of freed VRAM in @segment, queued as @seqno. */
TRACE_EVENT(vmgpu_vram_scrub,
	    TP_PROTO(u32 segment, u64 size, u64 seqno),
	    TP_ARGS(segment, size, seqno),
	    TP_STRUCT__entry(__field(u32, segment)
			     __field(u64, size)
			     __field(u64, seqno)),
	    TP_fast_assign(__entry->segment = segment;
			   __entry->size = size;
			   __entry->seqno = seqno;),
	    TP_printk("segment %u size 0x%llx seqno %llu", __entry->segment,
		      __entry->size, __entry->seqno)
);

/*
 * A paging operation is being built and queued (DOC: paging job reserve):
 * from here to vmgpu_paging_op_end, nothing is allocated.
 */
TRACE_EVENT(vmgpu_paging_op_begin,
	    TP_PROTO(int minor),
	    TP_ARGS(minor),
	    TP_STRUCT__entry(__field(int, minor)),
	    TP_fast_assign(__entry->minor = minor;),
	    TP_printk("card%d", __entry->minor)
);

/* The operation is queued: @jobs jobs (gates included), the last @seqno. */
TRACE_EVENT(vmgpu_paging_op_end,
	    TP_PROTO(int minor, u32 jobs, u64 seqno),
	    TP_ARGS(minor, jobs, seqno),
	    TP_STRUCT__entry(__field(int, minor)
			     __field(u32, jobs)
			     __field(u64, seqno)),
	    TP_fast_assign(__entry->minor = minor;
			   __entry->jobs = jobs;
			   __entry->seqno = seqno;),
	    TP_printk("card%d jobs %u seqno %llu", __entry->minor, __entry->jobs,
		      __entry->seqno)
);

/* A VM_BIND request of a GPU VA space; vm: its device VM, -1 none yet. */
TRACE_EVENT(vmgpu_vm_bind,
	    TP_PROTO(int vm, u32 op, u64 addr, u64 range),
	    TP_ARGS(vm, op, addr, range),
	    TP_STRUCT__entry(__field(int, vm)
			     __field(u32, op)
			     __field(u64, addr)
			     __field(u64, range)),
	    TP_fast_assign(__entry->vm = vm;
			   __entry->op = op;
			   __entry->addr = addr;
			   __entry->range = range;),
	    TP_printk("vm %d %s 0x%llx+0x%llx", __entry->vm,
		      __entry->op ? "unmap" : "map", __entry->addr,
		      __entry->range)
);

/* Page-table entries written: space -1 means invalidated. */
TRACE_EVENT(vmgpu_vm_ptes,
	    TP_PROTO(int vm, u64 addr, u64 range, int space),
	    TP_ARGS(vm, addr, range, space),
	    TP_STRUCT__entry(__field(int, vm)
			     __field(u64, addr)
			     __field(u64, range)
			     __field(int, space)),
	    TP_fast_assign(__entry->vm = vm;
			   __entry->addr = addr;
			   __entry->range = range;
			   __entry->space = space;),
	    TP_printk("vm %d 0x%llx+0x%llx -> space %d", __entry->vm,
		      __entry->addr, __entry->range, __entry->space)
);

/* A user job's hardware fence signalled; error is its fence's. */
TRACE_EVENT(vmgpu_ctx_job_done,
	    TP_PROTO(u32 ctx, u64 seqno, int error),
	    TP_ARGS(ctx, seqno, error),
	    TP_STRUCT__entry(__field(u32, ctx)
			     __field(u64, seqno)
			     __field(int, error)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->seqno = seqno;
			   __entry->error = error;),
	    TP_printk("context %u seqno %llu error %d", __entry->ctx,
		      __entry->seqno, __entry->error)
);

/* An error the device latched: a rejected command, or ring ~0 for a register. */
TRACE_EVENT(vmgpu_device_error,
	    TP_PROTO(u32 ring, u32 slot, u32 code, u64 addr),
	    TP_ARGS(ring, slot, code, addr),
	    TP_STRUCT__entry(__field(u32, ring)
			     __field(u32, slot)
			     __field(u32, code)
			     __field(u64, addr)),
	    TP_fast_assign(__entry->ring = ring;
			   __entry->slot = slot;
			   __entry->code = code;
			   __entry->addr = addr;),
	    TP_printk("ring %u slot %u error %u at 0x%llx", __entry->ring,
		      __entry->slot, __entry->code, __entry->addr)
);

TRACE_EVENT(vmgpu_ring_fault,
	    TP_PROTO(const char *ring, u32 slot, u64 seqno),
	    TP_ARGS(ring, slot, seqno),
	    TP_STRUCT__entry(__string(ring, ring)
			     __field(u32, slot)
			     __field(u64, seqno)),
	    TP_fast_assign(__assign_str(ring);
			   __entry->slot = slot;
			   __entry->seqno = seqno;),
	    TP_printk("ring %s slot %u, job seqno %llu", __get_str(ring),
		      __entry->slot, __entry->seqno)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE vmgpu_trace
#include <trace/define_trace.h>
