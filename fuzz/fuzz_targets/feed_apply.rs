#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzzing::feed_apply(data));
