//! Rehearsal stand-in for `hex`: `encode`, `encode_upper`, `decode` and
//! `FromHexError`.

use std::fmt;

/// Why a string is not hexadecimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromHexError {
    /// A character that is no hexadecimal digit, and where.
    InvalidHexCharacter { c: char, index: usize },
    /// An odd number of digits.
    OddLength,
}

impl fmt::Display for FromHexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FromHexError::InvalidHexCharacter { c, index } => {
                write!(f, "Invalid character {:?} at position {}", c, index)
            }
            FromHexError::OddLength => f.write_str("Odd number of digits"),
        }
    }
}

impl std::error::Error for FromHexError {}

fn encode_with<T: AsRef<[u8]>>(data: T, digits: &[u8; 16]) -> String {
    let bytes = data.as_ref();
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(digits[usize::from(b >> 4)] as char);
        out.push(digits[usize::from(b & 0xf)] as char);
    }
    out
}

/// Lowercase hexadecimal of `data`.
pub fn encode<T: AsRef<[u8]>>(data: T) -> String {
    encode_with(data, b"0123456789abcdef")
}

/// Uppercase hexadecimal of `data`.
pub fn encode_upper<T: AsRef<[u8]>>(data: T) -> String {
    encode_with(data, b"0123456789ABCDEF")
}

fn digit(c: u8, index: usize) -> Result<u8, FromHexError> {
    match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(FromHexError::InvalidHexCharacter { c: c as char, index }),
    }
}

/// The bytes a hexadecimal string stands for.
pub fn decode<T: AsRef<[u8]>>(data: T) -> Result<Vec<u8>, FromHexError> {
    let text = data.as_ref();
    if text.len() % 2 != 0 {
        return Err(FromHexError::OddLength);
    }
    text.chunks(2)
        .enumerate()
        .map(|(i, pair)| Ok(digit(pair[0], 2 * i)? << 4 | digit(pair[1], 2 * i + 1)?))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip() {
        assert_eq!(super::encode(b"vLLM"), "764c4c4d");
        assert_eq!(super::decode("764C4c4d").unwrap(), b"vLLM");
        assert_eq!(super::decode("7"), Err(super::FromHexError::OddLength));
    }
}
