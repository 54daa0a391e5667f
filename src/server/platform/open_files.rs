//! The process's open-file limit, raised at start to the most the system
//! allows.
//!
//! Every watcher of a live session holds a socket. A login shell's usual
//! soft limit (1,024) would make the 1,025th connection an accept error
//! while the hard limit allows hundreds of times more, and the soft limit
//! is the process's own to raise: the server raises it to the hard one
//! (as Go's runtime does for every Go program) and logs what it got, so an
//! operator sees when the machine, not `MAX_STREAMS_PER_SESSION`, is what
//! bounds an audience.

/// Descriptors kept aside for what is not a watcher: the database and its
/// journal, the listener, logs, the requests that are not streams. Used
/// only to say how many connections the limit leaves.
pub const RESERVED: u64 = 512;

/// The open-file limit before and after [`raise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit the process started with.
    pub before: u64,
    /// The soft limit now.
    pub now: u64,
}

impl OpenFiles {
    /// About how many connections the limit leaves room for.
    pub fn connections(self) -> u64 {
        self.now.saturating_sub(RESERVED)
    }
}

/// Raises the soft open-file limit to the hard limit. An error (the limit
/// cannot be read or set) leaves the limit as it was; the caller logs it
/// and serves anyway.
pub fn raise() -> std::io::Result<OpenFiles> {
    let (before, _) = rlimit::getrlimit(rlimit::Resource::NOFILE)?;
    let now = rlimit::increase_nofile_limit(u64::MAX)?;
    Ok(OpenFiles { before, now })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_limit_ends_at_the_hard_one() {
        let raised = raise().unwrap();
        let (soft, hard) = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
        assert_eq!(raised.now, soft);
        assert_eq!(soft, hard);
        assert!(raised.now >= raised.before);
        // Raising again changes nothing.
        assert_eq!(
            raise().unwrap(),
            OpenFiles {
                before: soft,
                now: soft
            }
        );
    }

    #[test]
    fn connections_leave_the_reserve_aside() {
        let files = OpenFiles {
            before: 1_024,
            now: 20_000,
        };
        assert_eq!(files.connections(), 19_488);
        let tiny = OpenFiles {
            before: 64,
            now: 256,
        };
        assert_eq!(tiny.connections(), 0);
    }
}
