//! How failures cross the C boundary: a negative errno as the return value, a message with
//! the detail in a per-thread slot ([`sonde_switch_last_error`]), and never a panic.
//!
//! Every exported function runs its body through [`call`], which catches a panic (a bug in
//! this library) and turns it into `-EIO` instead of unwinding into C, which is undefined.

use sonde_switch::Error;
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A failed call: the errno it returns (positive here, negated at the boundary) and why.
#[derive(Debug)]
pub(crate) struct Failure {
    pub errno: c_int,
    pub message: String,
}

impl Failure {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self {
            errno: libc::EINVAL,
            message: message.into(),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let errno = match &e {
            Error::Io { source, .. } => source.raw_os_error().unwrap_or(libc::EIO),
            Error::NoAddress(_) => libc::EADDRNOTAVAIL,
            Error::Resolve { .. } => libc::EHOSTUNREACH,
            Error::TimedOut(_) => libc::ETIMEDOUT,
            Error::Failed(_) => libc::ECONNABORTED,
            Error::NotClient => libc::EPERM,
            Error::Closed => libc::EPIPE,
            Error::WouldBlock(_) => libc::EAGAIN,
            Error::MptcpUnavailable(_) => libc::EPROTONOSUPPORT,
            Error::PathManager(_) => libc::EOPNOTSUPP,
        };
        Self {
            errno,
            message: e.to_string(),
        }
    }
}

thread_local! {
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last(message: &str) {
    // A message with a NUL inside is cut there rather than lost.
    let bytes: Vec<u8> = message.bytes().take_while(|b| *b != 0).collect();
    let c = CString::new(bytes).unwrap_or_default();
    LAST.with(|l| *l.borrow_mut() = c);
}

/// Runs one exported function's body: `Ok(v)` returns `v`; a failure returns `fail(-errno)`
/// and leaves its message for [`sonde_switch_last_error`]; a panic returns `fail(-EIO)`.
pub(crate) fn call<T>(fail: impl Fn(c_int) -> T, body: impl FnOnce() -> Result<T, Failure>) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(f)) => {
            set_last(&f.message);
            fail(-f.errno)
        }
        Err(_) => {
            set_last("internal error: a panic in sonde-switch was stopped at the C boundary");
            fail(-libc::EIO)
        }
    }
}

/// The message of the last failed call on this thread ("" when none failed yet).
///
/// The string stays valid until the next failing call on the same thread.
#[no_mangle]
pub extern "C" fn sonde_switch_last_error() -> *const c_char {
    LAST.with(|l| l.borrow().as_ptr())
}

/// A short description of an error code this library returns (negative or positive errno).
///
/// The string is static; codes this library never returns give "unknown error".
#[no_mangle]
pub extern "C" fn sonde_switch_strerror(code: c_int) -> *const c_char {
    let s: &'static std::ffi::CStr = match code.saturating_abs() {
        0 => c"success",
        libc::EINVAL => c"invalid argument",
        libc::EADDRNOTAVAIL => c"no address of that family",
        libc::EHOSTUNREACH => c"the name does not resolve",
        libc::ETIMEDOUT => c"timed out",
        libc::ECONNABORTED => c"the session failed",
        libc::ECONNREFUSED => c"connection refused",
        libc::EPERM => c"only the connecting end can switch",
        libc::EPIPE => c"the session is closed",
        libc::EAGAIN => c"would block",
        libc::EIO => c"input/output error",
        libc::EADDRINUSE => c"address in use",
        _ => c"unknown error",
    };
    s.as_ptr()
}
