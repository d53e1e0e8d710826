//! Page-aligned I/O buffers (direct I/O needs aligned memory).

use std::alloc::{alloc_zeroed, dealloc, Layout};

/// A zeroed, aligned heap buffer that is never moved.
#[derive(Debug)]
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: the buffer is plain memory owned by this value.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// `len` bytes (at least 1) aligned to `align` (a power of two).
    pub fn new(len: usize, align: usize) -> AlignedBuf {
        let layout =
            Layout::from_size_align(len.max(1), align.max(8)).expect("valid buffer layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(
            !ptr.is_null(),
            "out of memory allocating {len} bytes of I/O buffers"
        );
        AlignedBuf { ptr, layout }
    }

    /// Start of the buffer.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Whether the buffer is empty (never: at least one byte is allocated).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The whole buffer as a slice.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated with this layout in new().
        unsafe { dealloc(self.ptr, self.layout) }
    }
}
