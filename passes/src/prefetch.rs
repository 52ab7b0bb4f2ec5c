//! Software prefetch for the passes that read a large draft in id order.
//!
//! The hashes write nodes and edges sorted by id, which is far from the order they stand
//! in memory: every element read is a cache miss (at a million nodes also a TLB miss),
//! and the work on one element is too long for the processor to reach the next one's
//! loads by itself. These ask the cache for what an element a few places ahead will
//! read, so that its lines arrive while the elements before it are written
//! (docs/benchmarks.md, session 7).

/// How many elements ahead of the one being written a pass asks for the next lines.
pub const AHEAD: usize = 8;

/// Asks for the first `lines` cache lines of `bytes`, without waiting for them.
#[inline(always)]
pub fn bytes(bytes: &[u8], lines: usize) {
    for line in bytes.chunks(64).take(lines) {
        line_of(line.as_ptr());
    }
}

/// Asks for the cache lines that hold `value` (a struct of a few lines).
#[inline(always)]
pub fn value<T>(value: &T) {
    let start = (value as *const T).cast::<u8>();
    let size = std::mem::size_of::<T>().max(1);
    let mut offset = 0;
    while offset < size {
        line_of(start.wrapping_add(offset));
        offset += 64;
    }
    // The last line, when the value straddles one more boundary than its size suggests.
    line_of(start.wrapping_add(size - 1));
}

#[inline(always)]
fn line_of(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults, whatever the address, and changes no
    // memory; callers pass addresses of live values anyway.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(address.cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
