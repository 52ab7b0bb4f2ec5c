//! Ends the commands `little` started when `little` itself is told to stop: on SIGINT,
//! SIGTERM or SIGHUP every registered process group and call cgroup is killed, then the
//! signal's default action ends `little` as it would have. (SIGKILL cannot be caught: for
//! it, children die through `PR_SET_PDEATHSIG` and bubblewrap's `--die-with-parent`.)

use crate::spawn::STOP_SIGNALS;
use crate::supervise::kill_registered_groups;

/// The handlers, installed while this value lives; dropping it restores the previous ones.
pub struct KillChildrenOnSignal {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

extern "C" fn on_signal(signal: libc::c_int) {
    kill_registered_groups();
    // SAFETY: signal(2) and raise(3) are async-signal-safe; with the default action
    // restored, raising the signal again ends the process the way it was asked to.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

impl KillChildrenOnSignal {
    pub fn install() -> KillChildrenOnSignal {
        let mut previous = Vec::new();
        for signal in STOP_SIGNALS {
            // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the handler
            // only calls async-signal-safe functions.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    previous.push((signal, old));
                }
            }
        }
        KillChildrenOnSignal { previous }
    }
}

impl Drop for KillChildrenOnSignal {
    fn drop(&mut self) {
        for (signal, old) in &self.previous {
            // SAFETY: restores a sigaction the kernel handed back for this signal.
            unsafe {
                libc::sigaction(*signal, old, std::ptr::null_mut());
            }
        }
    }
}
