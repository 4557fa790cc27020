#![no_main]
//! See `cc_fuzz_checks::tool_args`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cc_fuzz_checks::tool_args::check(data));
