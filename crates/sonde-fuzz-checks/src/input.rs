//! Splitting one fuzz input into several datagrams or reads.

/// Yields records of the input: a length byte, then that many bytes (or what is left).
/// A state machine target feeds each record as one datagram, so the fuzzer controls
/// datagram boundaries as well as contents.
pub struct Records<'a> {
    rest: &'a [u8],
}

impl<'a> Records<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { rest: data }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let (&n, rest) = self.rest.split_first()?;
        let n = usize::from(n).min(rest.len());
        let (rec, rest) = rest.split_at(n);
        self.rest = rest;
        Some(rec)
    }
}

/// Reads big-endian integers from a record, zero past its end.
pub struct Fields<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Self { b, at: 0 }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.b.get(self.at + i).copied().unwrap_or(0);
        }
        self.at += N;
        out
    }

    pub fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    pub fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.take())
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.take())
    }
    pub fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.take())
    }

    /// What is left after the fields read so far.
    pub fn rest(&self) -> &'a [u8] {
        self.b.get(self.at..).unwrap_or(&[])
    }
}
