//! The local wall-clock time as text, for `--timestamps` (strftime, like iperf3's).

/// The current local time formatted with the C library's `strftime`; the format itself when
/// it cannot be rendered (too long, or an empty result).
pub fn local_strftime(format: &str) -> String {
    let Ok(fmt) = std::ffi::CString::new(format) else {
        return format.to_string();
    };
    let mut buf = [0u8; 256];
    // SAFETY: time/localtime_r/strftime write only into the values and buffer we own, whose
    // sizes we pass.
    let n = unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return format.to_string();
        }
        libc::strftime(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), &tm)
    };
    if n == 0 {
        return format.to_string();
    }
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_the_year_and_keeps_literal_text() {
        let y = super::local_strftime("%Y|");
        assert_eq!(y.len(), 5, "{y}");
        assert!(y.ends_with('|') && y.starts_with("20"), "{y}");
        assert_eq!(super::local_strftime("plain"), "plain");
    }
}
