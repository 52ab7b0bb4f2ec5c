//! Ends one call in flight from another thread: a flag the call's supervise loop reads, and
//! an eventfd that wakes its `poll(2)`, so that only that call's process group, cgroup and
//! namespace are killed (never every group `little` started).

use std::fmt;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Aborts the calls of the sandboxes it is given to ([`Sandbox::abort`](crate::Sandbox::abort)):
/// a call running when [`Abort::abort`] is called is killed at once (as at its deadline) and
/// ends with [`Output::aborted`](crate::Output::aborted); a call started after it does not
/// start. It stays aborted. Clones share one state.
#[derive(Clone)]
pub struct Abort {
    inner: Arc<AbortState>,
}

struct AbortState {
    aborted: AtomicBool,
    /// Readable once aborted; `None` when no eventfd could be made (then the loop asks the
    /// flag every 10 ms).
    wake: Option<OwnedFd>,
}

impl fmt::Debug for Abort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Abort").field("aborted", &self.is_aborted()).finish()
    }
}

impl Default for Abort {
    fn default() -> Abort {
        Abort::new()
    }
}

impl Abort {
    pub fn new() -> Abort {
        // SAFETY: eventfd(2) returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        // SAFETY: a new descriptor, ours alone.
        let wake = (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) });
        Abort { inner: Arc::new(AbortState { aborted: AtomicBool::new(false), wake }) }
    }

    /// Kills the call in flight, if any, and every later one before it starts. Callable from
    /// any thread, any number of times.
    pub fn abort(&self) {
        self.inner.aborted.store(true, Ordering::SeqCst);
        if let Some(wake) = &self.inner.wake {
            let one: u64 = 1;
            // SAFETY: write(2) of 8 bytes we own to our eventfd; it is never read, so the
            // counter only grows, and a full counter (EAGAIN) is still readable.
            unsafe {
                libc::write(wake.as_raw_fd(), (&one as *const u64).cast(), 8);
            }
        }
    }

    pub fn is_aborted(&self) -> bool {
        self.inner.aborted.load(Ordering::SeqCst)
    }

    /// The descriptor that turns readable on abort, for `poll(2)`.
    pub(crate) fn wake_fd(&self) -> Option<RawFd> {
        self.inner.wake.as_ref().map(AsRawFd::as_raw_fd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readable(fd: RawFd) -> bool {
        let mut fds = [libc::pollfd { fd, events: libc::POLLIN, revents: 0 }];
        // SAFETY: a valid array of one pollfd; no wait.
        unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) == 1 }
    }

    #[test]
    fn an_abort_is_seen_by_every_clone_and_wakes_a_poll() {
        let abort = Abort::new();
        let clone = abort.clone();
        let fd = clone.wake_fd().expect("eventfd is available");
        assert!(!clone.is_aborted());
        assert!(!readable(fd));
        abort.abort();
        abort.abort();
        assert!(clone.is_aborted());
        assert!(readable(fd), "the wake descriptor stays readable");
    }
}
