//! The local wall-clock time as text, for `--timestamps` (strftime, like iperf3's).

/// The current local time formatted with the C library's `strftime`; the format itself when
/// it cannot be rendered (too long, or an empty result).
pub fn local_strftime(format: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    local_strftime_at(now, format)
}

/// The local time of `unix_secs` (seconds since 1970, UTC) formatted with `strftime`; the
/// format itself when it cannot be rendered (too long, an empty result, a time the C library
/// cannot convert).
pub fn local_strftime_at(unix_secs: i64, format: &str) -> String {
    let Ok(fmt) = std::ffi::CString::new(format) else {
        return format.to_string();
    };
    // time_t is 64 bits wide on every platform sonde builds for.
    let t = unix_secs as libc::time_t;
    let mut buf = [0u8; 256];
    // SAFETY: localtime_r/strftime write only into the values and buffer we own, whose sizes
    // we pass.
    let n = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
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

    #[test]
    fn a_given_time_is_formatted_not_the_current_one() {
        // 2001-09-09 01:46:40 UTC: a whole day either side covers every time zone.
        let day = super::local_strftime_at(1_000_000_000, "%Y%m%d");
        assert!(
            ["20010908", "20010909", "20010910"].contains(&day.as_str()),
            "{day}"
        );
    }
}
