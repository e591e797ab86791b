//! Who this process acts as: the effective user id a file's owner is checked against (libpq
//! refuses a private key others may read, with a looser rule for root's).

/// This process's effective user id (`geteuid`).
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_file_this_process_creates_is_owned_by_its_effective_user() {
        let path = std::env::temp_dir().join(format!("sonde-euid-{}", std::process::id()));
        std::fs::write(&path, b"").unwrap();
        let owner = std::fs::metadata(&path).unwrap().uid();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(owner, effective_uid());
    }
}
