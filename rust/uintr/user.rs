// SPDX-License-Identifier: GPL-2.0

//! Words on the user stack: the delivery frame and UIRET's pops.
//!
//! Both go through the kernel's user-copy routines, so a bad stack is an
//! error here (and a signal for the task), never a kernel fault.

use kernel::prelude::*;
use kernel::uaccess::UserSlice;

/// Bytes of one stack word.
const WORD: usize = core::mem::size_of::<u64>();
/// The most words moved at once (the delivery frame).
const MAX_WORDS: usize = 4;

/// The user slice of `words` words at `address`.
fn slice(address: u64, words: usize) -> Result<UserSlice> {
    if words > MAX_WORDS {
        return Err(EINVAL);
    }
    let address = usize::try_from(address).map_err(|_| EFAULT)?;
    Ok(UserSlice::new(address, words * WORD))
}

/// Writes `words` to user memory at `address`, lowest address first.
pub(crate) fn write_words(address: u64, words: &[u64]) -> Result {
    let user = slice(address, words.len())?;
    let mut bytes = [0u8; MAX_WORDS * WORD];
    for (chunk, word) in bytes.chunks_exact_mut(WORD).zip(words) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    user.writer().write_slice(&bytes[..words.len() * WORD])
}

/// Fills `words` from user memory at `address`, lowest address first.
pub(crate) fn read_words(address: u64, words: &mut [u64]) -> Result {
    let user = slice(address, words.len())?;
    let mut bytes = [0u8; MAX_WORDS * WORD];
    user.reader().read_slice(&mut bytes[..words.len() * WORD])?;
    for (word, chunk) in words.iter_mut().zip(bytes.chunks_exact(WORD)) {
        let mut raw = [0u8; WORD];
        raw.copy_from_slice(chunk);
        *word = u64::from_ne_bytes(raw);
    }
    Ok(())
}
