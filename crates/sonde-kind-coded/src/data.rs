//! Where a coded transfer's bytes come from and go to: sonde's checkable pattern, or a file
//! (`--file`). A file is read at the offsets the sender asks for and written in block order
//! as the receiver hands blocks on; its SHA-256, which both ends compute in the protocol,
//! is what proves it arrived whole.

use sonde_coded::sender::Source;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A file the sender reads its data from, up to a length (`-n` sends a part of it).
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    /// Opens `path` for reading its first `len` bytes (0: all of it).
    ///
    /// # Errors
    /// The file cannot be opened.
    pub fn open(path: &Path, len: u64) -> std::io::Result<Self> {
        Ok(Self {
            file: File::open(path)?,
            len: if len == 0 { u64::MAX } else { len },
        })
    }
}

impl Source for FileSource {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let want = self.len.saturating_sub(offset).min(buf.len() as u64) as usize;
        let buf = &mut buf[..want];
        let mut n = 0;
        while n < buf.len() {
            match self.file.read_at(&mut buf[n..], offset + n as u64) {
                Ok(0) => break,
                Ok(m) => n += m,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
}

/// Where the receiving end puts delivered blocks and how it checks them.
pub struct Sink {
    /// The file the bytes are written to, in order (`-R --file`).
    pub file: Option<std::io::BufWriter<File>>,
    /// Whether the bytes are sonde's pattern, checked byte by byte on arrival.
    pub pattern: bool,
}

impl Sink {
    /// A sink writing into `path` (created or truncated) when given.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn new(path: Option<&Path>, pattern: bool) -> std::io::Result<Self> {
        let file = match path {
            Some(p) => Some(std::io::BufWriter::with_capacity(1 << 20, File::create(p)?)),
            None => None,
        };
        Ok(Self { file, pattern })
    }

    /// Writes the next block's bytes.
    ///
    /// # Errors
    /// The write failed.
    pub fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.write_all(data),
            None => Ok(()),
        }
    }

    /// Flushes what is buffered to the file.
    ///
    /// # Errors
    /// The write failed.
    pub fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}
