//! Linear memory for the component backed by transparent huge pages (Linux).
//!
//! Opening a large session fills a fresh linear memory with the file's bytes: with 4 KiB
//! pages that is one page fault per 4 KiB (about 25,000 for 100 MB), which costs more
//! than the copy. This creator reserves the memory exactly as wasmtime's default does
//! (reservation plus guard, inaccessible until grown) and asks the kernel for huge pages
//! on it. Where THP is off the hint is ignored and the memory behaves as usual.
use std::ptr::NonNull;
use wasmtime::{LinearMemory, MemoryCreator, MemoryType};

pub struct HugePageMemoryCreator;

struct HugePageMemory {
    base: NonNull<u8>,
    /// Bytes accessible now.
    size: usize,
    /// Bytes that may become accessible without moving `base`.
    capacity: usize,
    /// Everything mapped (capacity + guard).
    mapped: usize,
}

// SAFETY: the mapping is owned by this value alone; wasmtime serialises access to it.
unsafe impl Send for HugePageMemory {}
unsafe impl Sync for HugePageMemory {}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

fn io_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

// SAFETY: memories are page aligned, zero filled, sized in whole pages, never move
// (the whole reservation is mapped up front) and keep `guard` bytes unmapped-equivalent
// (PROT_NONE) after their capacity.
unsafe impl MemoryCreator for HugePageMemoryCreator {
    fn new_memory(
        &self,
        _ty: MemoryType,
        minimum: usize,
        maximum: Option<usize>,
        reserved_size_in_bytes: Option<usize>,
        guard_size_in_bytes: usize,
    ) -> Result<Box<dyn LinearMemory>, String> {
        let page = page_size();
        let capacity = reserved_size_in_bytes
            .or(maximum)
            .unwrap_or(4 << 30)
            .max(minimum)
            .next_multiple_of(page);
        let mapped = capacity + guard_size_in_bytes.next_multiple_of(page);
        // SAFETY: a fresh anonymous, private, inaccessible mapping; nothing else uses it.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io_error("mmap of the linear memory"));
        }
        // SAFETY: the range is the mapping made above. A failed hint changes nothing.
        unsafe {
            libc::madvise(ptr, capacity, libc::MADV_HUGEPAGE);
        }
        let mut memory = HugePageMemory {
            base: NonNull::new(ptr.cast()).ok_or("mmap returned null")?,
            size: 0,
            capacity,
            mapped,
        };
        memory.grow_to(minimum).map_err(|e| e.to_string())?;
        Ok(Box::new(memory))
    }
}

unsafe impl LinearMemory for HugePageMemory {
    fn byte_size(&self) -> usize {
        self.size
    }

    fn byte_capacity(&self) -> usize {
        self.capacity
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        if new_size > self.capacity {
            wasmtime::bail!(
                "linear memory cannot grow past its reservation of {} bytes",
                self.capacity
            );
        }
        let page = page_size();
        let old = self.size.next_multiple_of(page);
        let new = new_size.next_multiple_of(page);
        if new > old {
            // SAFETY: [old, new) lies inside the reservation owned by this memory.
            let rc = unsafe {
                libc::mprotect(
                    self.base.as_ptr().add(old).cast(),
                    new - old,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
            if rc != 0 {
                wasmtime::bail!(io_error("mprotect while growing the linear memory"));
            }
        }
        self.size = new_size;
        Ok(())
    }

    fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }
}

impl Drop for HugePageMemory {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in new_memory, which nothing uses now.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.mapped);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memories_grow_in_place_zeroed_up_to_their_reservation() {
        let creator = HugePageMemoryCreator;
        let ty = MemoryType::new(1, None);
        let mut m = creator
            .new_memory(ty, 65536, None, Some(64 << 20), 32 << 20)
            .unwrap();
        let base = m.as_ptr();
        assert_eq!(m.byte_size(), 65536);
        m.grow_to(8 << 20).unwrap();
        assert_eq!(m.as_ptr(), base);
        // SAFETY: the first 8 MiB are accessible after the grow.
        let bytes = unsafe { std::slice::from_raw_parts_mut(base, 8 << 20) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[(8 << 20) - 1] = 7;
        assert!(m.grow_to(65 << 20).is_err());
        assert_eq!(m.byte_capacity(), 64 << 20);
    }
}
