//! Systematic block coding with reed-solomon-simd (Leopard-RS, MDS: any `k` distinct symbols
//! of a block restore it, so the code wastes no received symbol).
//!
//! A block is `k` source symbols of equal size (the last zero-padded) plus [`repair_count`]
//! repair symbols. Both ends derive the repair count from `k`, so it never goes on the wire.
//! Encoding symbol ids (ESI) `0..k` are the source symbols, `k..k+r` the repair symbols.

use reed_solomon_simd::{ReedSolomonDecoder, ReedSolomonEncoder};
use thiserror::Error;

/// Largest `k` a receiver accepts (bounds what one peer symbol can make it allocate).
pub const MAX_K: u16 = 1024;

/// Repair symbols a block of `k` source symbols has: half of `k`, at least 8. Repairs past
/// these cycle through all `k + r` symbols again (see [`EncodedBlock::symbol`]).
pub fn repair_count(k: u16) -> u16 {
    (k / 2).max(8)
}

/// A codec failure.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodecError {
    #[error("reed-solomon: {0}")]
    Codec(String),
    #[error("block of k={0} is outside 1..={MAX_K}")]
    BadK(u16),
}

fn codec(e: reed_solomon_simd::Error) -> CodecError {
    CodecError::Codec(e.to_string())
}

/// Pads `data` to whole symbols; gives its length before padding and its symbol count.
fn pad(data: &mut Vec<u8>, symbol_size: usize) -> Result<(usize, u16), CodecError> {
    let block_len = data.len();
    let k = block_len.div_ceil(symbol_size.max(1));
    let k16 = u16::try_from(k).map_err(|_| CodecError::BadK(u16::MAX))?;
    if k16 == 0 || k16 > MAX_K {
        return Err(CodecError::BadK(k16));
    }
    data.resize(k * symbol_size, 0);
    Ok((block_len, k16))
}

/// One block ready to send: its source symbols and all its repair symbols.
#[derive(Debug)]
pub struct EncodedBlock {
    pub index: u32,
    pub k: u16,
    /// Data bytes in the block (the rest of the last symbol is padding).
    pub block_len: u32,
    symbol_size: usize,
    source: Vec<u8>,
    repair: Vec<Vec<u8>>,
}

impl EncodedBlock {
    /// Encodes `data` (at most `k` symbols of `symbol_size` bytes, padded here).
    ///
    /// # Errors
    /// [`CodecError`] for an unsupported `k` or an odd or zero symbol size.
    pub fn encode(index: u32, data: Vec<u8>, symbol_size: usize) -> Result<Self, CodecError> {
        let mut b = Self::plain(index, data, symbol_size)?;
        let k = usize::from(b.k);
        let r = usize::from(repair_count(b.k));
        let mut enc = ReedSolomonEncoder::new(k, r, symbol_size).map_err(codec)?;
        for s in b.source.chunks_exact(symbol_size) {
            enc.add_original_shard(s).map_err(codec)?;
        }
        b.repair = enc
            .encode()
            .map_err(codec)?
            .recovery_iter()
            .map(<[u8]>::to_vec)
            .collect();
        Ok(b)
    }

    /// A block sent as it is, without repair symbols (selective-repeat ARQ): its send cycle
    /// repeats the source symbols.
    ///
    /// # Errors
    /// [`CodecError::BadK`] when `data` is empty or needs more than [`MAX_K`] symbols.
    pub fn plain(index: u32, mut data: Vec<u8>, symbol_size: usize) -> Result<Self, CodecError> {
        let (block_len, k16) = pad(&mut data, symbol_size)?;
        Ok(Self {
            index,
            k: k16,
            block_len: block_len as u32,
            symbol_size,
            source: data,
            repair: Vec::new(),
        })
    }

    /// Symbols in one full cycle: source and repair.
    pub fn cycle(&self) -> u32 {
        u32::from(self.k) + self.repair.len() as u32
    }

    /// The ESI of the `n`-th symbol in send order (wrapping after a full cycle).
    pub fn esi(&self, n: u32) -> u16 {
        (n % self.cycle()) as u16
    }

    /// The payload of symbol `esi`, if it exists.
    pub fn symbol(&self, esi: u16) -> Option<&[u8]> {
        let i = usize::from(esi);
        let k = usize::from(self.k);
        if i < k {
            self.source
                .get(i * self.symbol_size..(i + 1) * self.symbol_size)
        } else {
            self.repair.get(i - k).map(Vec::as_slice)
        }
    }

    /// The block's data bytes.
    pub fn data(&self) -> &[u8] {
        &self.source[..self.block_len as usize]
    }
}

/// Whether a symbol added to a [`BlockDecoder`] was new.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    New,
    Duplicate,
}

/// Collects one block's symbols until `k` distinct ones can restore it.
#[derive(Debug)]
pub struct BlockDecoder {
    k: u16,
    block_len: u32,
    symbol_size: usize,
    have: Vec<bool>,
    distinct: u16,
    source: Vec<(usize, Vec<u8>)>,
    repair: Vec<(usize, Vec<u8>)>,
}

impl BlockDecoder {
    /// A decoder for a block of `k` symbols carrying `block_len` bytes.
    ///
    /// # Errors
    /// [`CodecError::BadK`] when `k` is 0 or above [`MAX_K`].
    pub fn new(k: u16, block_len: u32, symbol_size: usize) -> Result<Self, CodecError> {
        if k == 0 || k > MAX_K {
            return Err(CodecError::BadK(k));
        }
        let n = usize::from(k) + usize::from(repair_count(k));
        Ok(Self {
            k,
            block_len,
            symbol_size,
            have: vec![false; n],
            distinct: 0,
            source: Vec::new(),
            repair: Vec::new(),
        })
    }

    /// Whether `k`, `block_len` and symbol size match this block's.
    pub fn matches(&self, k: u16, block_len: u32, symbol_size: usize) -> bool {
        self.k == k && self.block_len == block_len && self.symbol_size == symbol_size
    }

    /// Keeps symbol `esi` unless it is a duplicate or out of range (also reported as one).
    pub fn add(&mut self, esi: u16, payload: &[u8]) -> Added {
        let i = usize::from(esi);
        if payload.len() != self.symbol_size || self.have.get(i) != Some(&false) {
            return Added::Duplicate;
        }
        self.have[i] = true;
        self.distinct += 1;
        let k = usize::from(self.k);
        if i < k {
            self.source.push((i, payload.to_vec()));
        } else {
            self.repair.push((i - k, payload.to_vec()));
        }
        Added::New
    }

    /// Distinct symbols still missing before the block can be restored.
    pub fn needed(&self) -> u16 {
        self.k.saturating_sub(self.distinct)
    }

    /// Bytes this decoder holds.
    pub fn held_bytes(&self) -> usize {
        usize::from(self.distinct) * self.symbol_size
    }

    /// Restores the block's data once [`Self::needed`] is 0.
    ///
    /// # Errors
    /// [`CodecError`] when symbols are missing or the codec fails.
    pub fn decode(self) -> Result<Vec<u8>, CodecError> {
        let k = usize::from(self.k);
        let s = self.symbol_size;
        let mut out = vec![0u8; k * s];
        let mut restored = vec![false; k];
        for (i, p) in &self.source {
            out[i * s..(i + 1) * s].copy_from_slice(p);
            restored[*i] = true;
        }
        if restored.iter().any(|r| !r) {
            let r = usize::from(repair_count(self.k));
            let mut dec = ReedSolomonDecoder::new(k, r, s).map_err(codec)?;
            for (i, p) in &self.source {
                dec.add_original_shard(*i, p).map_err(codec)?;
            }
            for (i, p) in &self.repair {
                dec.add_recovery_shard(*i, p).map_err(codec)?;
            }
            let result = dec.decode().map_err(codec)?;
            for (i, p) in result.restored_original_iter() {
                out[i * s..(i + 1) * s].copy_from_slice(p);
                restored[i] = true;
            }
            if restored.iter().any(|r| !r) {
                return Err(CodecError::Codec("decoder left symbols missing".into()));
            }
        }
        out.truncate(self.block_len as usize);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn any_k_symbols_restore_the_block() {
        let d = data(10 * 64 - 5);
        let b = EncodedBlock::encode(3, d.clone(), 64).unwrap();
        assert_eq!((b.k, b.block_len, b.cycle()), (10, 635, 18));
        // Lose the first 8 source symbols: two sources and eight repairs remain.
        let mut dec = BlockDecoder::new(10, 635, 64).unwrap();
        for esi in 8..18 {
            assert_eq!(dec.add(esi, b.symbol(esi).unwrap()), Added::New);
        }
        assert_eq!(dec.add(9, b.symbol(9).unwrap()), Added::Duplicate);
        assert_eq!(dec.needed(), 0);
        assert_eq!(dec.decode().unwrap(), d);
    }

    #[test]
    fn too_few_symbols_do_not_decode() {
        let b = EncodedBlock::encode(0, data(640), 64).unwrap();
        let mut dec = BlockDecoder::new(10, 640, 64).unwrap();
        for esi in 1..10 {
            dec.add(esi + 5, b.symbol(esi + 5).unwrap());
        }
        assert_eq!(dec.needed(), 1);
        assert!(dec.decode().is_err());
    }

    #[test]
    fn out_of_range_and_wrong_size_symbols_are_ignored() {
        let mut dec = BlockDecoder::new(2, 100, 64).unwrap();
        assert_eq!(dec.add(200, &[0; 64]), Added::Duplicate);
        assert_eq!(dec.add(0, &[0; 62]), Added::Duplicate);
        assert_eq!(dec.needed(), 2);
        assert!(BlockDecoder::new(0, 1, 64).is_err());
        assert!(BlockDecoder::new(MAX_K + 1, 1, 64).is_err());
    }
}
