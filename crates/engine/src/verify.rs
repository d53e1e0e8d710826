//! Self-describing written blocks for `--verify`.
//!
//! Every block written under `--verify` starts with a 32-byte header:
//!
//! | bytes  | field                                            |
//! |--------|--------------------------------------------------|
//! | 0..8   | magic `IOLENSV1`                                 |
//! | 8..16  | logical offset of the block (little endian)      |
//! | 16..24 | write sequence number (worker id << 48 \| count) |
//! | 24..28 | block length                                     |
//! | 28..32 | CRC-32C of bytes 0..28 and 32..len               |
//!
//! followed by a pseudo-random payload derived from offset and sequence.
//! A read checks magic, offset, length and checksum, and, for blocks written
//! in this run, that the sequence is the last one written (a lost write).

use crate::rng::Rng;

const MAGIC: &[u8; 8] = b"IOLENSV1";
/// Size of the header at the start of each verified block.
pub const HEADER: usize = 32;

fn crc(buf: &[u8]) -> u32 {
    let c = crc32c::crc32c(&buf[..28]);
    crc32c::crc32c_append(c, &buf[HEADER..])
}

/// Fills `buf` as the block at `offset` written with sequence `seq`.
pub fn stamp(buf: &mut [u8], offset: u64, seq: u64) {
    let len = buf.len();
    Rng::new(offset ^ seq.rotate_left(17), 0x7E51).fill(&mut buf[HEADER..]);
    buf[0..8].copy_from_slice(MAGIC);
    buf[8..16].copy_from_slice(&offset.to_le_bytes());
    buf[16..24].copy_from_slice(&seq.to_le_bytes());
    buf[24..28].copy_from_slice(&(len as u32).to_le_bytes());
    let c = crc(buf);
    buf[28..32].copy_from_slice(&c.to_le_bytes());
}

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Check {
    /// A valid block (with its sequence).
    Good(u64),
    /// No header, and none was expected (never written with --verify).
    Unstamped,
}

/// Checks the block read at `offset`. `expected` is the sequence this run
/// last wrote there, if any. The error says what is wrong, without the location.
pub fn check(buf: &[u8], offset: u64, expected: Option<u64>) -> Result<Check, String> {
    if &buf[0..8] != MAGIC {
        return match expected {
            Some(seq) => Err(format!(
                "no verify header where write #{seq:#x} was made (lost or overwritten block)"
            )),
            None => Ok(Check::Unstamped),
        };
    }
    let le64 = |r: std::ops::Range<usize>| u64::from_le_bytes(buf[r].try_into().unwrap());
    let found_off = le64(8..16);
    let seq = le64(16..24);
    let len = u32::from_le_bytes(buf[24..28].try_into().unwrap()) as usize;
    let stored = u32::from_le_bytes(buf[28..32].try_into().unwrap());
    if len != buf.len() {
        return Err(format!(
            "header says {len} bytes, block is {} bytes",
            buf.len()
        ));
    }
    if found_off != offset {
        return Err(format!(
            "block holds data written for offset {found_off} (misdirected write)"
        ));
    }
    let actual = crc(buf);
    if actual != stored {
        return Err(format!(
            "checksum mismatch: stored {stored:#010x}, computed {actual:#010x} (write #{seq:#x})"
        ));
    }
    if let Some(e) = expected {
        if e != seq {
            return Err(format!(
                "stale block: found write #{seq:#x}, expected #{e:#x} (lost write)"
            ));
        }
    }
    Ok(Check::Good(seq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamped_blocks_check_good() {
        let mut b = vec![0u8; 4096];
        stamp(&mut b, 8192, 7);
        assert_eq!(check(&b, 8192, Some(7)), Ok(Check::Good(7)));
        assert_eq!(check(&b, 8192, None), Ok(Check::Good(7)));
    }

    #[test]
    fn corruption_misplacement_and_staleness_are_caught() {
        let mut b = vec![0u8; 4096];
        stamp(&mut b, 8192, 7);
        let mut flipped = b.clone();
        flipped[1000] ^= 1;
        assert!(check(&flipped, 8192, None)
            .unwrap_err()
            .contains("checksum"));
        assert!(check(&b, 4096, None).unwrap_err().contains("misdirected"));
        assert!(check(&b, 8192, Some(8)).unwrap_err().contains("stale"));
        let zero = vec![0u8; 4096];
        assert_eq!(check(&zero, 0, None), Ok(Check::Unstamped));
        assert!(check(&zero, 0, Some(3)).is_err());
    }
}
