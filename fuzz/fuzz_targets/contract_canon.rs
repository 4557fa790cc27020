#![no_main]
//! See `cc_fuzz_checks::contract_canon`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cc_fuzz_checks::contract_canon::check(data));
