//! Cache prefetch hints: asking the CPU to bring the lines a decode will
//! read into cache without waiting for them.
//!
//! A decode of a segment no frame touched lately waits on memory once per
//! cache line it reads unless the lines are requested together; a player
//! that knows its next frame starts a new segment can request them a frame
//! early. Unlike a load, a prefetch never stalls the instructions after it.
#![allow(unsafe_code)]

/// Bytes of a cache line on the targets this runs on.
pub const LINE: usize = 64;

/// Hints that the cache line holding `value` will be read soon.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only hints the cache: it never faults, reads
    // nothing the program can observe and writes nothing, whatever the
    // address; here the address is a live reference anyway. It is `unsafe`
    // only because it takes a raw pointer. SSE is part of the x86_64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Hints that the cache line holding the byte at address `address` will be
/// read soon. Any number will do: the address is never dereferenced, and a
/// prefetch of memory the program does not own (freed, never mapped)
/// neither faults nor reads anything the program sees.
#[inline(always)]
pub fn prefetch_address(address: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `prefetch`: `_mm_prefetch` is a hint that never faults
    // and has no effect the program can observe, whatever the address, and
    // this pointer (without provenance) is never dereferenced.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::without_provenance::<i8>(address));
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Hints that every cache line of `bytes` will be read soon.
#[inline(always)]
pub fn prefetch_bytes(bytes: &[u8]) {
    for line in bytes.chunks(LINE) {
        prefetch(&line[0]);
    }
    // The last byte may sit on one more line than the chunks' starts.
    if let Some(last) = bytes.last() {
        prefetch(last);
    }
}

/// Asks for every cache line of `values`.
#[inline(always)]
pub fn prefetch_slice<T>(values: &[T]) {
    let start = values.as_ptr() as usize;
    let len = std::mem::size_of_val(values);
    for address in (start..start + len).step_by(LINE) {
        prefetch_address(address);
    }
    if len > 0 {
        prefetch_address(start + len - 1);
    }
}
