//! Fuzz target for fio's client/server protocol decoder (fiox-netproto): arbitrary bytes as
//! they would arrive on a `fiox --server` connection. Nothing may panic or allocate what a
//! header claims before it arrives, and every message decoded must re-encode to itself
//! (`fiox_netproto::check::decoder`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fiox_netproto::check::decoder(data);
});
