#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Tests must fail when the feature breaks. Each mutant below breaks one
# fix on purpose, in a copy of the committed tree (HEAD); the suite then runs on one device
# configuration and the named test must fail (and the mutant counts as
# killed). Not part of `make test`: a mutant costs a module build and a
# boot. usage: mutants.sh [NAME...]   (default: all)
#
# mutants.sh --check: only that every substitution still changes its file
# in the working tree and that the test it names still exists (no build,
# no boot). make test runs it: a mutant whose code or test has moved on
# would otherwise count as survived only when someone runs it.
set -uo pipefail

. "$(dirname "$0")/common.sh"

# name %% file (under drivers/gpu/drm/vmgpu, or a path from the top) %% perl -0
# substitution %% config %% test that must fail (PROGRAM:CHECK: a check of
# the boot, such as guest-log-clean, with only that test program run)
MUTANTS=(
	"no-redo%%vmgpu_bo_paging.c%%s/\tif \(!error\)\n\t\treturn vbo->needs_scrub;/\tif (true)\n\t\treturn vbo->needs_scrub;/%%rebar%%vmgpu_error_test/global.failed_clear_is_redone"
	"no-lost%%vmgpu_bo_paging.c%%s/if \(copied && vbo->has_contents/if (false \&\& copied \&\& vbo->has_contents/%%rebar%%vmgpu_error_test/global.failed_move_loses_contents"
	"hang-fails-queued%%vmgpu_ring.c%%s/\t\thw->first_slot = vmgpu_ring_write_job\(ring, job, hw->base.seqno\);/\t\tvmgpu_fence_fail(hw, -ETIMEDOUT);\n\t\tcontinue;/%%rebar%%vmgpu_error_test/global.hung_ring_is_reset"
	"reset-reruns-cut-job%%vmgpu_ring.c%%s/\t\tif \(cut_short && !paging\) \{/\t\tif (false) {/%%rebar%%vmgpu_error_test/reset.never_runs_a_user_job_twice"
	"publish-after-signal%%vmgpu_fence.c%%s/\tif \(fence->ctx\)\n\t\tvmgpu_context_job_done\(fence, busy\);\n(.*?dma_fence_signal_locked\(&fence->base\);\n)/\$1\tif (fence->ctx)\n\t\tvmgpu_context_job_done(fence, busy);\n/s%%rootport%%kunit-vmgpu_fence/fence_publishes_before_signalling"
	"blame-oldest%%vmgpu_fence.c%%s/if \(vmgpu_fence_owns_slot\(fence, slot, ring->num_slots - 1\)\)/if (true)/%%rootport%%kunit-vmgpu_fence/fence_blames_owner_of_slot"
	"access-no-wait%%vmgpu_mmap.c%%s/\.access = vmgpu_bo_vm_access/.access = ttm_bo_vm_access/%%rebar%%vmgpu_cpu_access_test/cpu.ptrace_read_waits_for_eviction"
	"mmap-no-rule%%vmgpu_mmap.c%%s/if \(!\(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS\) && !READ_ONCE\(vbo->locked_by\)\)\n\t\treturn -EACCES;//%%rebar%%vmgpu_cpu_access_test/global.mmap_needs_cpu_access"
	"query-exact-size%%vmgpu_query.c%%s/if \(given < size\)/if (given != size)/%%rebar%%vmgpu_query_test/query.larger_buffer"
	"evicted-resident%%vmgpu_gem.c%%s/\t\tif \(resident\)\n//%%rebar%%vmgpu_observe_test/global.fdinfo_evicted_not_resident"
	"gart-wrong-entry%%vmgpu_gart.c%%s/cpu_to_le64\(\(tt->dma_address\[i\]/cpu_to_le64((tt->dma_address[i ^ 1]/%%rebar%%vmgpu_evict_test/evict.physical_allocations_move_through_aperture"
	"gart-evicts-unmapped%%vmgpu_gart.c%%s/\tif \(!place->lpfn \|\| ttm_resource_manager_usage\(man\) \+ size > man->size\)\n\t\treturn true;\n/\treturn true;\n/%%rebar%%vmgpu_evict_test/evict.aperture_pressure"
	"compress-quota-unset%%vmgpu_vm.c%%s/\tvmgpu_write32\(vdev, VMGPU_REG_COMPRESS_QUOTA,\n[^\n]*\n//%%rebar%%vmgpu_compress_test/notify.one_process_cannot_fill_the_compressed_set"
	"pt-fill-cached%%vmgpu_vm.c%%s/\t\t\t\tcmd.fill.hdr.flags = cpu_to_le16\(VMGPU_FILL_FLAG_COHERENT\);\n//%%noncoherent%%vmgpu_coherency_test/coh.unmapped_entries_stay_unmapped_under_moves"
	"system-limit-ignored%%vmgpu_gart.c%%s/\t    ttm_resource_manager_usage\(man\) > man->size\) \{/\t    false) {/%%rebar%%vmgpu_system_limit_test/limit.resident_beyond_the_limit_evicts_lru"
	"display-keeps-pin%%vmgpu_plane.c%%s/(\tttm_bo_reserve\(&vbo->tbo, false, false, NULL\);\n)\tttm_bo_unpin\(&vbo->tbo\);\n/\$1/%%rebar%%vmgpu_kms_test/kms.displayed_primary_is_pinned_until_flipped_away"
	"display-any-fb%%vmgpu_plane.c%%s/\tif \(new->fb && \(gem_to_vmgpu_bo\(new->fb->obj\[0\]\)->flags &\n[^{]*\{/\tif (false) {/%%rebar%%vmgpu_kms_test/kms.test_only_commits_refuse_non_primaries"
	"flip-event-at-once%%vmgpu_display.c%%s/\tif \(event && !now\) \{/\tif (false) {/%%rebar%%vmgpu_modetest_test/global.modetest_sets_a_mode_and_flips_with_vsync"
	"async-waits-vblank%%vmgpu_display.c%%s/\tbool now = crtc_state->async_flip;/\tbool now = false;/%%rebar%%vmgpu_kms_test/kms.async_flips_do_not_wait_for_vblanks"
	"cursor-not-async%%vmgpu_plane.c%%s/\t.atomic_async_update = vmgpu_cursor_atomic_async_update,\n//%%rebar%%vmgpu_kms_test/kms.cursor_moves_do_not_wait_for_vblanks"
	"primary-always-on%%vmgpu_display.c%%s/\t\tlatched \|= VMGPU_HEAD_CTRL_PRIMARY_OFF;/\t\t;/%%rebar%%vmgpu_kms_test/kms.crtc_runs_without_its_primary"
	"no-fbdev%%vmgpu_drv.c%%s/\tdrm_client_setup\(&vdev->drm, NULL\);\n//%%rebar%%vmgpu_fbdev_test/fbdev.console_is_on_the_display"
	"vmap-wrong-page%%vmgpu_mmap.c%%s/\t\tpfns\[page\] = vmgpu_hap_pfn\(vbo, page\);/\t\tpfns[page] = vmgpu_hap_pfn(vbo, page ^ 1);/%%rebar%%vmgpu_fbdev_test/fbdev.fb0_writes_reach_the_head"
	"primary-keeps-aperture%%vmgpu_gart.c%%s/\t\t       !vmgpu_bo_gives_back_aperture\(res->bo\);/\t\t       true;/%%rebar%%vmgpu_kms_test/kms.undisplayed_primaries_take_no_aperture_space"
	"unmapped-never-swapped%%vmgpu_gart.c%%s/\tif \(!place->lpfn \|\|/\tif (!drm_mm_node_allocated(\&gres->node))\n\t\treturn false;\n\tif (!place->lpfn ||/%%rebar%%vmgpu_system_limit_test/limit.idle_system_allocations_swap_out"
	"no-top-down%%vmgpu_bo.c%%s/visible \? flags \| TTM_PL_FLAG_TOPDOWN : flags/flags/%%norebar%%vmgpu_alloc_test/alloc.top_down_beyond_the_bar"
	"timeout-zero-expires%%vmgpu_ring.c%%s/timeout_ms \? msecs_to_jiffies\(timeout_ms\) :\n\t\t\t   MAX_SCHEDULE_TIMEOUT/msecs_to_jiffies(timeout_ms)/%%rebar%%vmgpu_error_test/global.no_timeout_is_no_hang"
	"move-fence-leak%%vmgpu_vram_mgr.c%%s/\t\tttm_resource_manager_cleanup\(&mgr->manager\);\n//%%rootport%%kmemleak-clean"
	"pte-no-follow%%vmgpu_migrate.c%%s/\tvmgpu_vm_bo_invalidate_cmds\(tbo, vmgpu_migrate_add_cb, op, &invalidations\);\n//%%rebar%%vmgpu_submit_test/submit.eviction_waits_for_jobs_on_the_gpu"
	"exec-physical%%vmgpu_exec.c%%s/if \(le32_to_cpu\(a->space\) != VMGPU_SPACE_VIRTUAL \|\| a->vm\)/if (a->vm)/%%rebar%%vmgpu_submit_test/submit.bad_commands_rejected_whole"
	"fault-not-guilty%%vmgpu_context.c%%s/\tif \(fence->base.error\)\n\t\tatomic_set\(&ctx->guilty, 1\);\n//%%rebar%%vmgpu_submit_test/submit.unmapped_va_faults_own_context"
	"no-seqno-page%%vmgpu_context.c%%s/\tvmgpu_seqno_page_advance\(ctx->seqno_page, fence->ctx_seqno\);\n//%%rebar%%vmgpu_submit_test/submit.seqno_page"
	"gem-wait-kernel-only%%vmgpu_bo.c%%s/\tret = dma_resv_wait_timeout\(resv, DMA_RESV_USAGE_BOOKKEEP, true, timeout\);/\tret = dma_resv_wait_timeout(resv, DMA_RESV_USAGE_KERNEL, true, timeout);/%%rebar%%vmgpu_submit_test/submit.gem_wait"
	"in-sync-ignored%%vmgpu_exec.c%%s/\t\tret = drm_sched_job_add_dependency\(&job->base, fence\);/\t\tdma_fence_put(fence);\n\t\tret = 0;/%%rebar%%vmgpu_submit_test/submit.timeline_orders_contexts"
	"exec-vm-zero%%vmgpu_exec.c%%s/\ta->vm = cpu_to_le32\(hw_vm\);/\ta->vm = 0;/%%rootport%%kunit-vmgpu_exec/exec_allows_user_commands"
	"destroy-not-deferred%%vmgpu_destroy.c%%s/\tif \(!assume_not_in_use\) \{\n\t\tret = vmgpu_vm_jobs_fence/\tif (false) {\n\t\tret = vmgpu_vm_jobs_fence/%%rebar%%vmgpu_destroy_test/destroy.deferred_until_queued_jobs_finish"
	"destroy-mapped-jobs-only%%vmgpu_destroy.c%%s/\t\tret = vmgpu_vm_jobs_fence\(vm, &fence\);/\t\tret = dma_resv_get_singleton(obj->resv, DMA_RESV_USAGE_BOOKKEEP, \&fence);/%%rebar%%vmgpu_destroy_test/destroy.deferred_for_jobs_queued_before_the_bind"
	"ghost-gem-device%%vmgpu_ttm.c%%s/!vmgpu_ttm_tt_notifies_unmap\(vmgpu_tbo_device\(tbo\)/!vmgpu_ttm_tt_notifies_unmap(to_vmgpu_device(tbo->base.dev)/%%rebar%%vmgpu_notify_test/notify.iommu_unmap_of_pages_left_by_a_move"
	"slot-lent-busy%%vmgpu_vm_id.c%%s/\tdma_resv_iter_begin\(&cursor, drm_gpuvm_resv/\treturn NULL;\n\tdma_resv_iter_begin(\&cursor, drm_gpuvm_resv/%%rebar%%vmgpu_isolation_test/isolation.held_job_never_reaches_next_slot_owner"
	"slot-search-freed-resv%%vmgpu_vm.c%%s/(&vmgpu_gpuvm_ops\);\n)\treturn vm;/\$1\tdrm_gem_object_put(r_obj);\n\treturn vm;/; s/\tdrm_gem_object_put\(vm->base.r_obj\);\n//%%rootport%%vmgpu_isolation_test/isolation.dying_space_keeps_what_a_slot_search_reads"
	"ctx-holds-nothing%%vmgpu_context.c%%s/\t__module_get\(THIS_MODULE\);\n\tctx->drm = file->minor->dev;\n\tdrm_dev_get\(ctx->drm\);\n//; s/\tdrm_dev_put\(drm\);\n\tmodule_put\(THIS_MODULE\);\n//; s/\tstruct drm_device \*drm = ctx->drm;\n//%%rootport%%vmgpu_unplug_test/last_reference.kept_by_a_killed_job"
	"ctx-release-inline%%vmgpu_context.c%%s/\tvmgpu_queue_release\(&ctx->release_work\);/\tvmgpu_context_release_work(\&ctx->release_work);/%%rebar%%vmgpu_unplug_test/last_reference.dropped_by_a_job_free"
	"lock2-waits-for-jobs%%vmgpu_lock.c%%s/\tif \(lock2\) \{/\tif (false) {/%%rebar%%vmgpu_lock_test/lock.lock2_leaves_user_jobs_to_the_umd"
	"lock-without-handle%%vmgpu_lock.c%%s/\tif \(!vmgpu_lock_handle_alive\(file, args->handle, obj\)\) \{/\tif (false) {/%%rebar%%vmgpu_lock_test/lock.handle_closed_while_waiting_leaves_no_lock"
	"flush-before-invalidate%%vmgpu_ttm.c%%s/\t\tif \(vbo\)\n\t\t\tvmgpu_vm_bo_invalidate\(vbo\);\n(\t\tret = vmgpu_ttm_leave_system_segment\(tbo, evict\);\n\t\tif \(ret\)\n\t\t\treturn ret;\n.*?\t\t\tvmgpu_cache_release_pages\(tbo\);\n)/\$1\t\tif (vbo)\n\t\t\tvmgpu_vm_bo_invalidate(vbo);\n/s%%noncoherent%%vmgpu_coherency_test/coh.late_bound_job_leaves_no_line_behind"
	"ctx-destroy-zero%%vmgpu_context.c%%s/args->ctx_id \? xa_erase\(&vfile->contexts, args->ctx_id\) : NULL/xa_erase(\&vfile->contexts, args->ctx_id)/%%rebar%%vmgpu_context_test/context.context_id_zero_never_exists"
	"unmap-waits-for-paging%%vmgpu_vm.c%%s/\tvmgpu_vm_defer_pt_writes\(vm, va->gem.obj->resv\);/\tdma_resv_wait_timeout(va->gem.obj->resv, DMA_RESV_USAGE_KERNEL, false, MAX_SCHEDULE_TIMEOUT);/%%rebar%%vmgpu_destroy_test/destroy.assume_not_in_use_and_unmap_do_not_wait_for_paging"
	"map-ignores-queued-invalidation%%vmgpu_vm.c%%s/\tret = vmgpu_vm_wait_pt_writes\(vm\);\n\tif \(ret\)\n\t\tgoto out_unlock_vm;\n//%%rebar%%vmgpu_destroy_test/destroy.assume_not_in_use_and_unmap_do_not_wait_for_paging"
	"assume-keeps-fences%%vmgpu_destroy.c%%s/\t\t\tvmgpu_vm_forget_jobs\(vm, obj\);/\t\t\t;/%%rebar%%vmgpu_destroy_test/destroy.assume_not_in_use_frees_at_once"
	"unmap-keeps-ptes%%vmgpu_vm.c%%s/\tvmgpu_vm_clear_ptes\(vm, va->va.addr, va->va.range\);\n\tvmgpu_vm_depopulate\(vm, va->va.addr, va->va.range\);\n//%%rebar%%vmgpu_destroy_test/destroy.assume_not_in_use_frees_at_once"
	"list-any-alloc%%vmgpu_alloc_list.c%%s/\t\tif \(!\(gem_to_vmgpu_bo\(obj\)->flags & DRM_VMGPU_ALLOC_ACCESSED_PHYSICALLY\)\)\n\t\t\treturn -EINVAL;\n//%%rebar%%vmgpu_physical_test/physical.bad_submissions_refused_whole"
	"patch-no-range%%vmgpu_alloc_list.c%%s/ \|\|\n\t\t    end > list->objs\[p->alloc\]->size\)/)/%%rebar%%vmgpu_physical_test/physical.bad_submissions_refused_whole"
	"phys-no-validate%%vmgpu_alloc_list.c%%s/\t\t\tret = vmgpu_bo_validate\(vbo, &ctx\);/\t\t\tret = 0;/%%rebar%%vmgpu_physical_test/physical.evicted_allocation_made_resident_and_patched"
	"bind-no-settle%%vmgpu_vm.c%%s/\t\tret = vmgpu_bo_prepare_access\(vbo, true\);\n\t\tif \(ret\)\n\t\t\tgoto out_unlock_resv;/\t\tret = 0;/%%rebar%%vmgpu_submit_test/submit.bind_never_exposes_uncleared_memory"
	"lock-no-wait%%vmgpu_lock.c%%s/\tif \(flags & DRM_VMGPU_LOCK_IGNORE_SYNC\)/\tif (!(flags \& DRM_VMGPU_LOCK_DO_NOT_WAIT))/%%rebar%%vmgpu_lock_test/lock.waits_for_the_gpu_unless_told_not_to"
	"hap-not-lru%%vmgpu_hap.c%%s/list_for_each_entry_safe\(victim, next, &hap->lru, hap_link\)/list_for_each_entry_safe_reverse(victim, next, \&hap->lru, hap_link)/%%norebar%%vmgpu_host_aperture_test/hap.unlocked_pages_reclaimed_lru_first"
	"hap-no-revoke%%vmgpu_hap.c%%s/\t\t\tttm_bo_unmap_virtual\(&victim->tbo\);\n//%%norebar%%vmgpu_host_aperture_test/hap.unlocked_pages_reclaimed_lru_first"
	"hap-steals-locked%%vmgpu_hap.c%%s/\tif \(locked\)\n\t\tlist_del_init\(&vbo->hap_link\);\n\telse\n\t\t/\t/%%norebar%%vmgpu_host_aperture_test/hap.locked_pages_stay_and_overflow_goes_to_system"
	"lock-not-held-in-system%%vmgpu_bo.c%%s/\treturn vbo->locked_by && !\(vbo->flags & DRM_VMGPU_ALLOC_CPU_ACCESS\);/\treturn false;/%%rebar%%vmgpu_host_aperture_test/hap.not_cpu_accessible_lock_rules"
	"swizzle-no-detile%%vmgpu_hap.c%%s/\t\tpte_flags \|= VMGPU_HAP_PTE_DETILE;//%%rebar%%vmgpu_swizzle_test/swz.lock_detiles_through_the_host_aperture"
	"swizzle-locked-evict-raw%%vmgpu_swizzle.c%%s/return vbo->locked_by \|\| vbo->unswizzle_next_move/return vbo->unswizzle_next_move/%%rebar%%vmgpu_swizzle_test/swz.eviction_during_a_lock_is_invisible"
	"swizzle-no-reswizzle%%vmgpu_swizzle.c%%s/return vbo->unswizzled \? VMGPU_TRANSFER_FLAG_SWIZZLE : 0;/return 0;/%%rebar%%vmgpu_swizzle_test/swz.no_room_unswizzles_to_system"
	"cache-no-closing-flush%%vmgpu_migrate.c%%s/\{\n\tvmgpu_paging_op_flush\(op\);\n\treturn vmgpu_paging_op_end\(op\);/{\n\treturn vmgpu_paging_op_end(op);/%%noncoherent%%vmgpu_coherency_test/coh.moves_need_no_sync"
	"cache-sync-no-flush%%vmgpu_cache.c%%s/if \(!ret && vdev->noncoherent && touched\)/if (false)/%%noncoherent%%vmgpu_coherency_test/coh.gpu_write_then_cpu_read"
	"lock-any-holder%%vmgpu_lock.c%%s/\tif \(vbo->locked_by\) \{/\tif (false) {/%%rebar%%vmgpu_lock_test/lock.one_holder"
	"notify-no-eviction%%vmgpu_ttm.c%%s/\tret = vmgpu_notify_eviction\(to_vmgpu_bo\(tbo\)\);/\tret = 0;/%%rebar%%vmgpu_notify_test/notify.eviction_from_aperture_keeps_compressed_data"
	"notify-one-chunk%%vmgpu_notify.c%%s/chunk = vdev->paging_vm.size, done;/chunk = vdev->paging_vm.size \/ 2, done;/%%onesegment%%vmgpu_notify_test/notify.eviction_from_system_segment_in_chunks"
	"notify-memory-segment%%vmgpu_notify.c%%s/tbo->resource && !\(tbo->resource->placement & TTM_PL_FLAG_TEMPORARY\) &&/tbo->resource \&\&/%%rebar%%vmgpu_notify_test/notify.none_for_eviction_from_memory_segment"
	"notify-no-iommu-unmap%%vmgpu_ttm.c%%s/ && !vmgpu_notify_iommu_unmap\(vdev, tt\)\)/ \&\& false)/%%rebar%%vmgpu_notify_test/notify.iommu_unmap_on_destroy"
	"notify-no-iommu-unmap-noncoherent%%vmgpu_ttm.c%%s/ && !vmgpu_notify_iommu_unmap\(vdev, tt\)\)/ \&\& false)/%%noncoherent%%vmgpu_notify_test/notify.iommu_unmap_leaves_no_dirty_line"
	"notify-no-wait%%vmgpu_notify.c%%s/\tdma_fence_wait\(fence, false\);\n//%%rebar%%vmgpu_notify_test/notify.iommu_unmap_waits_for_earlier_paging"
	"paging-va-fill-half%%vmgpu_migrate.c%%s/u64 chunk = vdev->paging_vm.size, size = tbo->base.size, done;/u64 chunk = vdev->paging_vm.size \/ 2, size = tbo->base.size, done;/%%rebar%%vmgpu_notify_test/notify.paging_ops_in_chunks_of_the_paging_va"
	"paging-va-no-pte-flush%%vmgpu_migrate.c%%s/\t\tvmgpu_paging_op_map\(op, chunk, dst, n, true\);\n\t\tvmgpu_paging_op_flush\(op\);/\t\tvmgpu_paging_op_map(op, chunk, dst, n, true);/%%noncoherent%%vmgpu_coherency_test/coh.moves_need_no_sync"
	"reserve-allocates%%vmgpu_paging_op.c%%s/\tvmgpu_paging_op_start\(op, vdev, prev, vmgpu_paging_op_push_job\);/\tvmgpu_paging_op_start(op, vdev, prev, vmgpu_paging_op_push_job);\n\tkfree(kmalloc(64, GFP_KERNEL));/%%rebar%%vmgpu_reserve_test/reserve.paging_operations_allocate_nothing"
	"reserve-gate-waits-for-nothing%%vmgpu_paging_op.c%%s/\tvmgpu_paging_op_depend\(gate, fence\);\n//%%rebar%%vmgpu_reserve_test/reserve.eviction_waits_for_every_user"
	"umd-discard-waits%%userspace/libvmgpu/vmgpu_buffer.c%%s/\t\t\tret = vmgpu_buffer_rename\(buf\);/\t\t\tret = vmgpu_queue_wait_locked(q, vmgpu_storage_last_use(s), VMGPU_MAP_TIMEOUT_NS);/%%rebar%%vmgpu_umd_test/umd.discard_busy_renames"
	"umd-no-zero%%userspace/libvmgpu/vmgpu_storage.c%%s/\t\tmemset\(s->alloc->cpu \+ s->offset, 0, s->size\);\n//%%rebar%%vmgpu_umd_test/umd.discard_no_write_no_foreign_bytes"
	"umd-batch-not-busy%%userspace/libvmgpu/vmgpu_queue.c%%s/\tuint64_t pending = q->submitted \+ 1;\n\n\tif \(s->batch != q->batch_gen\)/\tuint64_t pending = q->submitted;\n\n\tif (s->batch != q->batch_gen)/%%rebar%%vmgpu_umd_test/umd.several_discards_one_submission"
	"umd-no-budget-wait%%userspace/libvmgpu/vmgpu_buffer.c%%s/\twhile \(\(head = q->retired.head\) &&/\twhile (0 \&\& (head = q->retired.head) \&\&/%%rebar%%vmgpu_umd_test/umd.discard_spam_within_budget"
	"umd-do-not-wait-waits%%userspace/libvmgpu/vmgpu_buffer.c%%s/\t\tif \(flags & VMGPU_MAP_DO_NOT_WAIT\) \{/\t\tif (0) {/%%rebar%%vmgpu_umd_test/umd.do_not_wait_busy"
	"umd-do-not-wait-no-flush%%userspace/libvmgpu/vmgpu_buffer.c%%s/\t\t\tret = vmgpu_queue_submit_async\(q, until\);\n\t\t\treturn ret \?: -EBUSY;/\t\t\treturn -EBUSY;/%%rebar%%vmgpu_umd_test/umd.do_not_wait_pending_flushes"
	"umd-do-not-wait-submits-itself%%userspace/libvmgpu/vmgpu_buffer.c%%s/ret = vmgpu_queue_submit_async\(q, until\);/ret = vmgpu_queue_submit_through(q, until);/%%rebar%%vmgpu_umd_test/umd.do_not_wait_pending_flushes"
	"umd-async-error-lost%%userspace/libvmgpu/vmgpu_queue.c%%s/\t\tif \(ret\)\n\t\t\tq->async_error = ret;\n//%%rebar%%vmgpu_umd_test/umd.do_not_wait_reports_failed_submission"
	"umd-lost-not-marked%%userspace/libvmgpu/vmgpu_queue.c%%s/\t\t\t\tq->listed\[i\]->lost = ret;/\t\t\t\t;/%%rebar%%vmgpu_umd_test/umd.failed_submission_loses_contents"
	"umd-do-not-wait-takes-lock%%userspace/libvmgpu/vmgpu_buffer.c%%s/if \(pthread_mutex_trylock\(&q->lock\)\)\n\t\t\treturn -EBUSY;/pthread_mutex_lock(\&q->lock);/%%rebar%%vmgpu_umd_test/umd.do_not_wait_pending_flushes"
	"umd-spin-wait%%userspace/libvmgpu/vmgpu_queue.c%%s/\tret = vmgpu_syncobj_wait\(q->dev, q->syncobj, seqno, deadline\);/\twhile (vmgpu_context_completed(q->ctx) < seqno)\n\t\t;\n\tret = 0;/%%rebar%%vmgpu_umd_test/umd.wait_wakes_on_signal"
	"umd-read-waits-for-reads%%userspace/libvmgpu/vmgpu_buffer.c%%s/until = mode == VMGPU_MAP_READ \? s->last_write :/until = 0 ? s->last_write :/%%rebar%%vmgpu_umd_test/umd.map_read_waits_for_write_only"
	"umd-no-valid-range%%userspace/libvmgpu/vmgpu_buffer.c%%s/\t\tif \(!vmgpu_map_depends\(s, mode, offset, end\)\)\n\t\t\tbreak;\n//%%rebar%%vmgpu_umd_test/umd.never_written_range_no_wait"
	"umd-write-ignores-gpu-reads%%userspace/libvmgpu/vmgpu_buffer.c%%s/\treturn mode != VMGPU_MAP_READ && vmgpu_range_overlaps\(&s->gpu_read, offset, end\);/\treturn false;/%%rebar%%vmgpu_umd_test/umd.write_waits_for_gpu_reads_of_unwritten_range"
	"umd-release-waits%%userspace/libvmgpu/vmgpu_storage.c%%s/\tif \(!vmgpu_storage_idle\(q, s\)\) \{\n\t\tif \(s->slab\) \{\n\t\t\tvmgpu_storage_retire/\tvmgpu_queue_wait_locked(q, vmgpu_storage_last_use(s), 10000000000ull);\n\tif (!vmgpu_storage_idle(q, s)) {\n\t\tif (s->slab) {\n\t\t\tvmgpu_storage_retire/%%rebar%%vmgpu_umd_test/umd.release_never_blocks"
	"umd-no-sync-to-device%%userspace/libvmgpu/vmgpu_queue.c%%s/\t\tret = vmgpu_queue_sync_to_device\(q\);\n/\t\tret = 0;\n/%%noncoherent%%vmgpu_umd_coherency_test/umd.noncoherent_data"
	"umd-no-sync-to-cpu%%userspace/libvmgpu/vmgpu_buffer.c%%s/\t\treturn vmgpu_queue_sync_to_cpu\(q, s\);/\t\treturn 0;/%%noncoherent%%vmgpu_umd_coherency_test/umd.noncoherent_data"
	"umd-sync-bytes-not-lines%%userspace/libvmgpu/vmgpu_buffer.c%%s/\tif \(mode != VMGPU_MAP_READ\) \{\n\t\toffset &= /\tif (0) {\n\t\toffset \&= /%%noncoherent%%vmgpu_umd_coherency_test/umd.cpu_write_beside_gpu_write_in_one_line"
	"umd-sync-when-coherent%%userspace/libvmgpu/vmgpu_buffer.c%%s/\t\tif \(q->noncoherent\)\n\t\t\tvmgpu_range_add\(&s->cpu_dirty/\t\tif (1)\n\t\t\tvmgpu_range_add(\&s->cpu_dirty/%%rebar%%vmgpu_umd_coherency_test/umd.coherency_sync_calls"
	"prime-clears-import%%vmgpu_prime.c%%s/\tvbo->cleared = true;\n//%%rebar%%vmgpu_prime_test/prime.gpu_writes_a_vgem_buffer_the_exporter_reads"
	"prime-no-implicit-wait%%vmgpu_exec.c%%s/\t\t\t\t\t\t\t  DMA_RESV_USAGE_READ :/\t\t\t\t\t\t\t  DMA_RESV_USAGE_KERNEL :/%%rebar%%vmgpu_prime_test/prime.job_waits_for_the_exporters_write"
	"prime-job-not-a-writer%%vmgpu_exec.c%%s/dma_resv_add_fence\(obj->resv, \*fence, DMA_RESV_USAGE_WRITE\);/dma_resv_add_fence(obj->resv, *fence, DMA_RESV_USAGE_BOOKKEEP);/%%rebar%%vmgpu_prime_test/prime.exporter_sees_the_job_as_a_writer"
	"prime-no-remap%%vmgpu_prime.c%%s/\tvbo->import_sgt = NULL;\n\tvbo->import_moved = false;/\tvbo->import_moved = false;/%%rebar%%vmgpu_prime_test/prime.evicted_import_comes_back_with_its_bytes"
	"prime-no-cache-bracket%%vmgpu_exec.c%%s/\t\t\tjob->cache_bracket \|= vmgpu_bo_is_import\(vbo\) &&/\t\t\tjob->cache_bracket |= false \&\&/%%noncoherent%%vmgpu_prime_test/prime.exporter_and_job_see_each_other_without_cache_sync"
	"prime-move-notify-ignored%%vmgpu_prime.c%%s/\tdma_resv_assert_held\(attach->dmabuf->resv\);\n\tif \(!vbo->import_sgt\)/\tdma_resv_assert_held(attach->dmabuf->resv);\n\tif (true)/%%rootport%%vmgpu_prime_test/prime.dynamic_exporter_moves_the_buffer"
	"copy-magic-no-wait%%qemu-device/vmgpu-regs.c%%s/    if \(addr == VMGPU_REG_MAGIC\) \{/    if (0) {/%%rebar%%vmgpu_submit_test/submit.unmap_stops_a_fill_in_progress"
	"reserve-wait-uninterruptible%%vmgpu_ttm.c%%s/ret = vmgpu_job_reserve_wait\(vdev, ctx, tbo->base.resv\);/ret = 0;/%%rebar%%vmgpu_reserve_test/reserve.a_drained_reserve_wait_is_interruptible"
	"reserve-wait-no-gates%%vmgpu_paging_op.c%%s/\treturn fences \? fences - 1 : 0;/\treturn 0;/%%rebar%%vmgpu_reserve_test/reserve.a_wait_for_gates_is_interruptible"
	"reserve-wait-no-recount%%vmgpu_paging_op.c%%s/\t\tif \(gates\) \{\n\t\t\tif \(dma_fence_add_callback/\t\tif (false) {\n\t\t\tif (dma_fence_add_callback/%%rootport%%kunit-vmgpu_migrate/migrate_reserve_wait_recounts_as_users_end"
	"reserve-wait-in-temporary%%vmgpu_ttm.c%%s/if \(!tbo->resource \|\| !\(tbo->resource->placement & TTM_PL_FLAG_TEMPORARY\)\) \{/if (true) {/%%rebar%%vmgpu_reserve_test/reserve.interrupted_move_is_not_left_half_way"
	"exec-failed-compresses%%vmgpu_exec.c%%s/\tif \(ret\)\n\t\tgoto err_job;\n\tkref_get/\tif (ret \&\& compresses)\n\t\tvmgpu_vm_compresses(ctx->vm);\n\tif (ret)\n\t\tgoto err_job;\n\tkref_get/%%rebar%%vmgpu_observe_test/global.failed_exec_does_not_compress"
	"console-watch-start-only%%userspace/tools/vmgpu-console-watch.c%%s/tcflow\(fd, TCOOFF\) \|\| //%%rebar%%guest_console_test/console.stalled_output_is_restarted"
	"scrub-without-fill%%vmgpu_vram_scrub.c%%s/\tvmgpu_migrate_fill_chunk\(&op, &cur, size\);\n//%%rebar%%vmgpu_clear_test/clear.scrub_wipes_freed_vram"
	"scrub-failure-unseen%%vmgpu_ttm.c%%s/\t\tvmgpu_bo_queue_paging\(vbo, vmgpu_vram_res_clear_fence\(new_mem\), false\);/\t\tdma_resv_add_fence(tbo->base.resv, vmgpu_vram_res_clear_fence(new_mem), DMA_RESV_USAGE_KERNEL);/%%rebar%%vmgpu_clear_test/clear.failed_scrub_is_cleared_again"
	"scrubbed-vram-cleared-again%%vmgpu_vram_mgr.c%%s/\t\tif \(list_entry_is_head\(block, blocks, link\) && mgr->scrub_fence\)/\t\tif (false)/%%rebar%%vmgpu_clear_test/clear.scrubbed_vram_needs_no_fill"
	"topdown-by-tree%%vmgpu_vram_mgr.c%%s/\tif \(\(place->flags & TTM_PL_FLAG_TOPDOWN\) && !start &&/\tif (false \&\& !start \&\&/%%rootport%%kunit-vmgpu_vram_mgr/vram_top_down_beyond_the_bar_whatever_is_clear"
	"topdown-cleared-by-range%%vmgpu_vram_mgr.c%%s/\tif \(\(flags & GPU_BUDDY_CLEAR_ALLOCATION\) && !\(flags/\tif (false \&\& !(flags/%%rootport%%kunit-vmgpu_vram_mgr/vram_top_down_takes_cleared_beyond_the_bar"
	"topdown-cleared-not-first%%vmgpu_vram_mgr.c%%s/\tif \(\(flags & GPU_BUDDY_CLEAR_ALLOCATION\) && !\(flags/\tif (false \&\& !(flags/%%norebar%%vmgpu_clear_test/clear.scrubbed_vram_beyond_the_bar_needs_no_fill"
	"scrub-end-not-awaited%%vmgpu_vram_scrub.c%%s/\tvmgpu_vram_scrub_queue\(vmgpu_vram_mgr_device\(mgr\)\);/\t(void)mgr;/%%rebar%%vmgpu_clear_test/clear.a_large_free_is_scrubbed_to_the_end"
	"display-pin-unchecked%%vmgpu_display.c%%s/ \|\| !vmgpu_plane_shows\(primary\)\)/)/%%rebar%%vmgpu_kms_test/kms.primary_whose_clear_failed_is_shown_black"
	"display-pin-waits%%vmgpu_plane.c%%s/contents \? vmgpu_bo_settle_queued\(vbo, contents\) : //%%rebar%%vmgpu_kms_test/kms.nonblocking_flip_waits_for_the_clear_in_the_commit"
	"rgb565-any-x%%vmgpu_plane.c%%s/\(fb->offsets\[0\] \+ \(new->src.x1 >> 16\) \* fb->format->cpp\[0\]\) % 4/fb->offsets[0] % 4/%%rebar%%vmgpu_kms_commit_test/commit.rgb565_source_at_an_odd_pixel_is_refused"
	"swizzled-framebuffer%%vmgpu_plane.c%%s/\(DRM_VMGPU_ALLOC_PRIMARY \| DRM_VMGPU_ALLOC_SWIZZLED\)\)/DRM_VMGPU_ALLOC_PRIMARY)/%%rebar%%vmgpu_kms_commit_test/commit.swizzled_primary_is_refused"
	"modeset-event-at-disable%%vmgpu_display.c%%s/if \(crtc->state->event && !crtc->state->active\)/if (crtc->state->event)/%%rebar%%vmgpu_kms_commit_test/commit.modeset_event_comes_with_the_new_modes_first_frame"
	"stale-crc-reported%%vmgpu_display_crc.c%%s/\t\tfresh = frame != head->crc_frame &&\n\t\t\tframe == vmgpu_head_read\(head, VMGPU_HEAD_FRAME_COUNT\);/\t\tfresh = true;/%%rebar%%vmgpu_kms_commit_test/commit.crcs_come_only_from_frames_the_device_computed"
	"fault-waits-under-mmap-lock%%vmgpu_mmap.c%%s/\tif \(dma_resv_test_signaled\(resv, DMA_RESV_USAGE_KERNEL\) \|\|\n\t    !fault_flag_allow_retry_first/\tif (true ||\n\t    !fault_flag_allow_retry_first/%%rebar%%vmgpu_cpu_access_test/cpu.fault_waits_without_the_mmap_lock"
	"third-redo-unchecked%%vmgpu_mmap.c%%s/\t\tif \(tries == VMGPU_CPU_ACCESS_TRIES\)/\t\tif (tries == VMGPU_CPU_ACCESS_TRIES - 1)/%%rebar%%vmgpu_error_test/global.third_redo_of_a_failed_clear_counts"
	"flip-timeout-left-armed%%vmgpu_display.c%%s/\tvmgpu_wait_for_flip_done\(state\);/\tdrm_atomic_helper_wait_for_flip_done(drm, state);/%%rebar%%vmgpu_kms_commit_test/commit.flip_with_lost_interrupts_completes_at_its_timeout"
	"flip-late-not-latched%%vmgpu_display.c%%s/\t\tvmgpu_head_commit_write\(head, VMGPU_HEAD_COMMIT_NOW\);\n//%%rebar%%vmgpu_kms_commit_test/commit.flip_never_latched_is_latched_at_its_timeout"
	"prime-unplug-keeps-attachment%%vmgpu_prime.c%%s/\t\tvmgpu_prime_detach\(vbo, attach\);\n\t\tttm_bo_put/\t\tttm_bo_put/%%rootport%%vmgpu_unplug_test:guest-log-clean"
	"pin-not-settled-after%%vmgpu_prime.c%%s/\tret = vmgpu_prime_settle\(vbo\);\n\tif \(ret\)\n\t\tvmgpu_prime_unpin\(vbo\);\n\treturn ret;/\treturn 0;/%%rootport%%vmgpu_kms_commit_test/commit.import_moved_by_its_pin_stays_usable_on_screen"
	"bind-maps-moved-import%%vmgpu_vm.c%%s/ && !vbo->import_moved;/;/%%rootport%%vmgpu_prime_test/prime.bind_after_a_failed_eviction_for_the_exporter_maps_nothing"
	"page-tables-kept%%vmgpu_vm.c%%s/\tvmgpu_vm_depopulate\(vm, va->va.addr, va->va.range\);\n//%%rebar%%vmgpu_destroy_test/destroy.unmap_frees_page_tables"
	"page-tables-freed-under-paging%%vmgpu_vm_pt.c%%s/\tif \(vm->pt_fence && !dma_fence_is_signaled\(vm->pt_fence\)\)\n\t\treturn;\n//%%rebar%%vmgpu_destroy_test/destroy.page_tables_outlive_queued_invalidations"
	"unmap-keeps-shared-ptes%%vmgpu_vm.c%%s/\tvmgpu_vm_clear_ptes\(vm, va->va.addr, va->va.range\);\n\tvmgpu_vm_depopulate/\tvmgpu_vm_depopulate/%%rebar%%vmgpu_destroy_test/destroy.unmap_keeps_tables_other_mappings_need"
	"page-tables-fixed-cap%%vmgpu_vm_pt.c%%s/\tif \(vm->num_tables >= vmgpu_vm_max_tables\(vm->vdev\)\)/\tif (vm->num_tables >= VMGPU_VM_MIN_TABLES)/%%rebar%%vmgpu_destroy_test/destroy.page_tables_cover_the_device_memory"
)

# The file a mutant changes, under $1.
mutant_target() {
	case $2 in
	*/*) echo "$1/$2" ;;
	*) echo "$1/drivers/gpu/drm/vmgpu/$2" ;;
	esac
}

if [ "${1:-}" = --check ]; then
	copy=$(mktemp)
	stale=0
	for m in "${MUTANTS[@]}"; do
		IFS=$'\x1f' read -r name file subst config test <<<"${m//%%/$'\x1f'}"
		target=$(mutant_target "$VMGPU_ROOT" "$file")
		if [ ! -f "$target" ]; then
			log "mutant $name: no $file"
			stale=$((stale + 1))
			continue
		fi
		cp "$target" "$copy"
		perl -0pi -e "$subst" "$copy"
		if cmp -s "$target" "$copy"; then
			log "mutant $name: the substitution matched nothing in $file"
			stale=$((stale + 1))
		fi
		# And the test that must fail is still there.
		case $test in
		*_test/*)
			grep -Eq "^TEST[A-Z_]*\(([a-z_]+, )?${test#*.}[,)]" \
				"$VMGPU_ROOT/userspace/tests/${test%%/*}.c" ;;
		kunit-*/*)
			grep -rq "KUNIT_CASE[A-Z_]*(${test#*/})" "$VMGPU_ROOT/drivers/gpu/drm/vmgpu/tests" ;;
		*) true ;;
		esac || {
			log "mutant $name: no test $test"
			stale=$((stale + 1))
		}
	done
	rm -f "$copy"
	log "${#MUTANTS[@]} mutants, $stale matching nothing or naming no test"
	[ "$stale" = 0 ]
	exit
fi

wanted=("$@")
tree="$VMGPU_OUT/mutants/tree"
killed=0 survived=0

for m in "${MUTANTS[@]}"; do
	IFS=$'\x1f' read -r name file subst config test <<<"${m//%%/$'\x1f'}"
	if [ ${#wanted[@]} -gt 0 ] && ! printf '%s\n' "${wanted[@]}" | grep -qx "$name"; then
		continue
	fi
	rm -rf "$tree"
	mkdir -p "$tree"
	git -C "$VMGPU_ROOT" archive HEAD | tar -x -C "$tree"
	target=$(mutant_target "$tree" "$file")
	before=$(sha256sum <"$target")
	perl -0pi -e "$subst" "$target"
	if [ "$(sha256sum <"$target")" = "$before" ]; then
		log "mutant $name: the substitution matched nothing in $file"
		survived=$((survived + 1))
		continue
	fi
	log "mutant $name: $file changed, running $config"
	# Only the test program that must fail (KUnit and kmemleak: all);
	# PROGRAM:CHECK runs that program alone for a check of the boot.
	only=${test%%/*}
	case $test in
	*:*) only=${test%%:*}; test=${test#*:} ;;
	*_test/*) ;;
	*) only= ;;
	esac
	VMGPU_ONLY_TESTS="$only" VMGPU_OUT="$tree/out" make -s -C "$tree" test CONFIGS="$config" \
		>"$VMGPU_OUT/mutants/$name.log" 2>&1
	if grep -q "^FAIL $config/$test\b" "$VMGPU_OUT/mutants/$name.log"; then
		log "mutant $name: killed by $test"
		killed=$((killed + 1))
	else
		log "mutant $name: SURVIVED ($test did not fail; see $VMGPU_OUT/mutants/$name.log)"
		survived=$((survived + 1))
	fi
done
echo "$killed mutants killed, $survived survived"
[ "$survived" = 0 ]
