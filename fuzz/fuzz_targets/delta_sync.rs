#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::delta_sync(data));
