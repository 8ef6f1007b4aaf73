//! guasi (fiox's thread-pool engine) against real files in each submit/reap mode.

#![allow(clippy::disallowed_methods)] // tests build their own scratch files

mod common;

use common::*;
use fiox_job::spec::EngineOptions;

fn modes() -> Vec<EngineOptions> {
    let mut v = Vec::new();
    for offload in [true, false] {
        for kick in [false, true] {
            for runs in [false, true] {
                v.push(EngineOptions {
                    guasi_submit_offload: offload,
                    guasi_kick_each: kick,
                    guasi_reap_runs: runs,
                    ..Default::default()
                });
            }
        }
    }
    v
}

#[test]
fn guasi_every_mode_depth_1_and_8() {
    for o in modes() {
        battery("guasi", 1, o.clone());
        battery("guasi", 8, o);
    }
}

#[test]
fn guasi_few_workers_and_threads_alias() {
    let o = EngineOptions {
        guasi_workers: Some(2),
        guasi_submit_offload: true,
        ..Default::default()
    };
    battery("guasi", 16, o.clone());
    battery("threads", 4, o);
}

#[test]
fn guasi_with_rwf_flags() {
    let o = EngineOptions {
        hipri: true,
        hipri_percentage: 50,
        guasi_submit_offload: true,
        ..Default::default()
    };
    battery("guasi", 4, o);
}
