#![no_main]
//! See `cc_fuzz_checks::config_layers`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cc_fuzz_checks::config_layers::check(data));
