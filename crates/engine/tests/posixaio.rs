//! posixaio (glibc's thread-based POSIX AIO) against real files.

mod common;

use common::*;
use fiox_job::spec::EngineOptions;

#[test]
fn posixaio_depth_1_and_8() {
    battery("posixaio", 1, EngineOptions::default());
    battery("posixaio", 8, EngineOptions::default());
}
