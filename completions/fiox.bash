# bash completion for fiox (generated from fiox's option table; do not edit)
_fiox() {
    local cur prev opt words i
    COMPREPLY=()
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    opt=""
    if [[ $cur == "=" ]]; then opt="$prev"; cur="";
    elif [[ $prev == "=" ]]; then opt="${COMP_WORDS[COMP_CWORD-2]}"; fi
    case "${COMP_WORDS[1]}" in
    quick)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            --output-format) COMPREPLY=($(compgen -W "normal json" -- "$cur")); return;;
            esac
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--size= --runtime= --output-format= --no-history --help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    plot)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            --format) COMPREPLY=($(compgen -W "html svg png" -- "$cur")); return;;
            esac
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--output= --format= --quiet --title= --help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    compare)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            --format) COMPREPLY=($(compgen -W "text markdown csv json" -- "$cur")); return;;
            --adjust) COMPREPLY=($(compgen -W "holm bh none" -- "$cur")); return;;
            esac
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--format= --alpha= --metric= --all --latency --threshold= --adjust= --side= --bootstrap= --seed= --help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    testbed)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            --direct_io) COMPREPLY=($(compgen -W "on off 1 0 true false yes no" -- "$cur")); return;;
            --fs) COMPREPLY=($(compgen -W "ext4 xfs btrfs" -- "$cur")); return;;
            esac
            if [[ $COMP_CWORD -eq 2 && $cur != -* ]]; then COMPREPLY=($(compgen -W "up list down cleanup" -- "$cur")); return; fi
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--name= --hold --size= --direct_io= --block_size= --dir= --fs= --mkfs_options= --mount_options= --delay_us= --error_rate= --all --help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    experiment)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            esac
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--repeat= --runtime= --out= --variant= --no-history --help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    env)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            --output-format) COMPREPLY=($(compgen -W "normal json" -- "$cur")); return;;
            esac
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--json --output-format= --help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    history)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            --format) COMPREPLY=($(compgen -W "jsonl csv" -- "$cur")); return;;
            esac
            if [[ $COMP_CWORD -eq 2 && $cur != -* ]]; then COMPREPLY=($(compgen -W "list show tag trend page import export gc regressions compare" -- "$cur")); return; fi
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--job= --experiment= --variant= --host= --kernel= --commit= --target= --tag= --since= --until= --limit= --history-db= --json --remove --chart= --output= --metric= --title= --from-host= --from-kernel= --add-tag= --format= --keep= --older-than= --tagged --dry-run --alpha= --threshold= --window= --all --help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    man)
        if [[ $COMP_CWORD -gt 1 ]]; then
            case "$opt" in
            esac
            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "--help" -- "$cur")); [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace; else COMPREPLY=($(compgen -f -- "$cur")); fi
            return
        fi;;
    esac
    case "$opt" in
    --output-format) COMPREPLY=($(compgen -W "normal json json+ terse" -- "$cur")); return;;
    --eta) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return;;
    --idle-prof) COMPREPLY=($(compgen -W "calibrate system percpu" -- "$cur")); return;;
    --warnings) COMPREPLY=($(compgen -W "report stderr fatal" -- "$cur")); return;;
    --profile) COMPREPLY=($(compgen -W "tiobench act" -- "$cur")); return;;
    --clocksource) COMPREPLY=($(compgen -W "gettimeofday clock_gettime cpu" -- "$cur")); return;;
    --stonewall) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --wait_for_previous) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --new_group) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --group_reporting) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --unified_rw_reporting) COMPREPLY=($(compgen -W "none mixed both 0 1 2" -- "$cur")); return;;
    --kb_base) COMPREPLY=($(compgen -W "1024 1000" -- "$cur")); return;;
    --unit_base) COMPREPLY=($(compgen -W "0 1 8" -- "$cur")); return;;
    --time_based) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --stonewall_ranks) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --thread) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --cgroup_nodelete) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --exitall) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --exit_what) COMPREPLY=($(compgen -W "group stonewall all" -- "$cur")); return;;
    --exitall_on_error) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --error_dump) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --continue_on_error) COMPREPLY=($(compgen -W "none read write io verify all 0 1" -- "$cur")); return;;
    --cpus_allowed_policy) COMPREPLY=($(compgen -W "shared split" -- "$cur")); return;;
    --write_hint) COMPREPLY=($(compgen -W "none short medium long extreme" -- "$cur")); return;;
    --file_service_type) COMPREPLY=($(compgen -W "random roundrobin sequential zipf pareto normal gauss" -- "$cur")); return;;
    --create_on_open) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --create_serialize) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --create_fsync) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --unlink) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --unlink_each_loop) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --create_only) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --allow_file_create) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --fallocate) COMPREPLY=($(compgen -W "none native posix keep truncate 0 1" -- "$cur")); return;;
    --pre_read) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --invalidate) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --fadvise_hint) COMPREPLY=($(compgen -W "0 1 random sequential noreuse" -- "$cur")); return;;
    --overwrite) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --allow_mounted_write) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --lockfile) COMPREPLY=($(compgen -W "none exclusive readwrite" -- "$cur")); return;;
    --fill_device) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --fill_fs) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --file_append) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --rw) COMPREPLY=($(compgen -W "read write trim randread randwrite randtrim rw readwrite randrw trimwrite randtrimwrite" -- "$cur")); return;;
    --readwrite) COMPREPLY=($(compgen -W "read write trim randread randwrite randtrim rw readwrite randrw trimwrite randtrimwrite" -- "$cur")); return;;
    --bs_unaligned) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --blocksize_unaligned) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --latency_run) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --bs_is_seq_rand) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --ioengine) COMPREPLY=($(compgen -W "sync psync vsync pvsync pvsync2 mmap null libaio io_uring posixaio guasi falloc ftruncate filecreate filestat filedelete dircreate dirstat dirdelete page_fault cpuio exec splice net netsplice e4defrag pmemblk" -- "$cur")); return;;
    --io_submit_mode) COMPREPLY=($(compgen -W "inline offload" -- "$cur")); return;;
    --atomic) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --direct) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --buffered) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --sync) COMPREPLY=($(compgen -W "none 0 1 sync dsync" -- "$cur")); return;;
    --end_fsync) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --end_syncfs) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --fsync_on_close) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --randrepeat) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --allrandrepeat) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --norandommap) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --softrandommap) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --rw_sequencer) COMPREPLY=($(compgen -W "sequential identical" -- "$cur")); return;;
    --random_generator) COMPREPLY=($(compgen -W "tausworthe lfsr tausworthe64" -- "$cur")); return;;
    --random_distribution) COMPREPLY=($(compgen -W "random zipf pareto normal gauss zoned zoned_abs sequence" -- "$cur")); return;;
    --zero_buffers) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --refill_buffers) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --scramble_buffers) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --dedupe_mode) COMPREPLY=($(compgen -W "repeat working_set" -- "$cur")); return;;
    --dedupe_global) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --rate_process) COMPREPLY=($(compgen -W "linear poisson" -- "$cur")); return;;
    --thinktime_blocks_type) COMPREPLY=($(compgen -W "complete issue" -- "$cur")); return;;
    --rate_ignore_thinktime) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --zonemode) COMPREPLY=($(compgen -W "none strided zbd" -- "$cur")); return;;
    --mem) COMPREPLY=($(compgen -W "malloc shm shmhuge mmap mmapshared mmaphuge cudamalloc" -- "$cur")); return;;
    --iomem) COMPREPLY=($(compgen -W "malloc shm shmhuge mmap mmapshared mmaphuge cudamalloc" -- "$cur")); return;;
    --replay_no_stall) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --read_iolog_chunked) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --steadystate) COMPREPLY=($(compgen -W "iops iops_slope bw bw_slope lat lat_slope" -- "$cur")); return;;
    --ss) COMPREPLY=($(compgen -W "iops iops_slope bw bw_slope lat lat_slope" -- "$cur")); return;;
    --block_error_percentiles) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --clat_percentiles) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --lat_percentiles) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --slat_percentiles) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --disable_lat) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --disable_clat) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --disable_slat) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --disable_bw_measurement) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --disable_bw) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --gtod_reduce) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --disk_util) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --stats) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --log_store_compressed) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --log_max_value) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --log_window_value) COMPREPLY=($(compgen -W "avg max both 0 1" -- "$cur")); return;;
    --log_unix_epoch) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --log_alternate_epoch) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --per_job_logs) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --log_offset) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --log_issue_time) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --log_prio) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify) COMPREPLY=($(compgen -W "0 none md5 crc64 crc32c crc32c-intel crc32 crc16 crc7 sha1 sha256 sha512 sha3-224 sha3-256 sha3-384 sha3-512 xxhash pattern pattern_hdr null meta" -- "$cur")); return;;
    --do_verify) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_only) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_strict) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_write_sequence) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_header_seed) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_fatal) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_dump) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_state_save) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --verify_state_load) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --experimental_verify) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --trim_verify_zero) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --serialize_overlap) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --hipri) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --nowait) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --fixedbufs) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --registerfiles) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --sqthread_poll) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --libaio_vectored) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --userspace_reap) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --stat_type) COMPREPLY=($(compgen -W "stat lstat statx" -- "$cur")); return;;
    --cpumode) COMPREPLY=($(compgen -W "noop qsort" -- "$cur")); return;;
    --exit_on_io_done) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --std_redirect) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --protocol) COMPREPLY=($(compgen -W "tcp tcpv6 udp udpv6 unix vsock" -- "$cur")); return;;
    --proto) COMPREPLY=($(compgen -W "tcp tcpv6 udp udpv6 unix vsock" -- "$cur")); return;;
    --listen) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --pingpong) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --nodelay) COMPREPLY=($(compgen -W "0 1" -- "$cur")); return;;
    --guasi_submit) COMPREPLY=($(compgen -W "offload inline" -- "$cur")); return;;
    --guasi_kick) COMPREPLY=($(compgen -W "batch each" -- "$cur")); return;;
    esac
    if [[ -n $opt ]]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
    if [[ $cur == -* ]]; then
        words="--parse-only --merge-blktrace-only --showcmd --section= --output= --output-format= --minimal --append-terse --terse-version= --html= --eta= --status-interval= --eta-interval= --eta-newline= --readonly --aux-path= --trigger-file= --trigger-timeout= --trigger= --inflate-log= --alloc-size= --debug= --idle-prof= --max-jobs= --bandwidth-log --latency-log --allow-destructive --explain --history --telemetry --machine-memory= --machine-cpus= --vm= --warnings= --warnings-fatal --profile= --crctest --memcpytest --cpuclock-test --cmdhelp --enghelp --version --help --exec_prerun= --exec_postrun= --clocksource= --description= --comm= --profile= --threads= --name= --wait_for= --stonewall --wait_for_previous --new_group --numjobs= --group_reporting --unified_rw_reporting= --kb_base= --unit_base= --loops= --startdelay= --runtime= --timeout= --time_based --ramp_time= --ramp_size= --stonewall_ranks --thread --gtod_cpu= --numa_cpu_nodes= --numa_mem_policy= --cgroup= --cgroup_weight= --cgroup_nodelete --uid= --gid= --exitall --exit_what= --exitall_on_error --error_dump --continue_on_error= --ignore_error= --nice= --prio= --prioclass= --priohint= --cpus_allowed= --cpumask= --cpus_allowed_policy= --filename= --directory= --opendir= --sync_file_range= --write_hint= --filename_format= --nrfiles= --nr_files= --openfiles= --file_service_type= --filesize= --create_on_open --create_serialize --create_fsync --unlink --unlink_each_loop --ioscheduler= --create_only --allow_file_create --fallocate= --pre_read --invalidate --fadvise_hint= --overwrite --allow_mounted_write --lockfile= --fill_device --fill_fs --file_append --rw= --readwrite= --rwmixread= --rwmixwrite= --bs= --blocksize= --ba= --blockalign= --bsrange= --blocksize_range= --bssplit= --bs_unaligned --blocksize_unaligned --flow= --flow_id= --flow_sleep= --flow_watermark= --latency_target= --latency_window= --latency_percentile= --latency_run --max_latency= --bs_is_seq_rand --size= --io_size= --io_limit= --offset= --fileoffset= --offset_increment= --offset_align= --number_ios= --ioengine= --iodepth= --iodepth_batch_submit= --iodepth_batch= --iodepth_batch_complete_min= --iodepth_batch_complete= --iodepth_batch_complete_max= --iodepth_low= --io_submit_mode= --atomic --write_barrier= --direct --buffered --sync= --fsync= --fdatasync= --end_fsync --end_syncfs --fsync_on_close --randrepeat --allrandrepeat --randseed= --norandommap --softrandommap --rw_sequencer= --random_generator= --random_distribution= --percentage_random= --percentage_sequential= --rwmixcycle= --zero_buffers --refill_buffers --scramble_buffers --buffer_compress_percentage= --buffer_compress_chunk= --buffer_pattern= --dedupe_percentage= --dedupe_mode= --dedupe_working_set_percentage= --dedupe_global --rate= --rate_min= --ratemin= --rate_iops= --rate_iops_min= --rate_process= --rate_cycle= --ratecycle= --thinktime= --thinktime_spin= --thinktime_blocks= --thinktime_blocks_type= --thinktime_iotime= --thinkcycles= --rate_ignore_thinktime --zonemode= --zonesize= --zonerange= --zoneskip= --mem= --iomem= --iomem_align= --mem_align= --hugepage-size= --lockmem= --read_iolog= --replay_no_stall --replay_redirect= --replay_scale= --replay_align= --replay_time_scale= --read_iolog_chunked --replay_skip= --merge_blktrace_file= --merge_blktrace_scalars= --merge_blktrace_iters= --steadystate= --ss= --steadystate_duration= --ss_dur= --steadystate_ramp_time= --ss_ramp= --steadystate_check_interval= --ss_interval= --block_error_percentiles --percentile_list= --clat_percentiles --lat_percentiles --slat_percentiles --disable_lat --disable_clat --disable_slat --disable_bw_measurement --disable_bw --gtod_reduce --bwavgtime= --iopsavgtime= --significant_figures= --disk_util --stats --write_iolog= --log_compression= --log_compression_cpus= --log_store_compressed --write_bw_log --write_lat_log --write_iops_log --write_hist_log --log_avg_msec= --log_hist_msec= --log_hist_coarseness= --log_max_value --log_window_value= --log_unix_epoch --log_alternate_epoch --log_alternate_epoch_clock_id= --job_start_clock_id= --log_entries= --per_job_logs --log_offset --log_issue_time --log_prio --verify= --do_verify --verify_only --verify_strict --verify_write_sequence --verify_header_seed --verify_fatal --verify_dump --verify_async= --verify_async_cpus= --verifysort= --verifysort_nr= --verify_backlog= --verify_backlog_batch= --verify_interval= --verify_offset= --verify_pattern= --verify_state_save --verify_state_load --experimental_verify --trim_percentage= --trim_verify_zero --trim_backlog= --trim_backlog_batch= --serialize_overlap --hipri --hipri_percentage= --uncached= --nowait --fixedbufs --registerfiles --sqthread_poll --sqthread_poll_cpu= --nonvectored= --force_async= --libaio_vectored --userspace_reap --stat_type= --cpuload= --cpuchunks= --cpumode= --exit_on_io_done --program= --arguments= --grace_time= --std_redirect --hostname= --port= --protocol= --proto= --listen --pingpong --nodelay --window_size= --mss= --ttl= --interface= --donorname= --inplace= --guasi_workers= --guasi_submit= --guasi_kick= --guasi_reap_runs= --cmdprio_percentage= --cmdprio_class= --cmdprio= --cmdprio_bssplit="
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
        [[ ${COMPREPLY[0]} == *= ]] && compopt -o nospace
    elif [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "quick plot compare testbed experiment env history man" -- "$cur") $(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}
complete -F _fiox fiox
