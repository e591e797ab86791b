//! [`PathId`]: how a session names its paths.
//!
//! A leaf: the session and its reorder buffer (`stash`, which notes the path each held piece
//! came on) both name paths, and the session holds the buffer.

/// Identifies one path (one transport connection) of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PathId(pub u32);
