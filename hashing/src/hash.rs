//! sha256 identities: `sha256:<64 lowercase hex>` and their 16-hex short form.

use sha2::{Digest, Sha256};

const PREFIX: &str = "sha256:";

/// The sha256 digest of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // sha2 0.11 digests are hybrid-arrays without `LowerHex`, so encode by hand.
    Sha256::digest(bytes)
        .iter()
        .flat_map(|&b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]])
        .map(char::from)
        .collect()
}

/// `sha256:<64 lowercase hex>` of a finished digest.
pub(crate) fn identity_of_digest(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(PREFIX.len() + 64);
    out.push_str(PREFIX);
    out.extend(digest.iter().flat_map(|&b| [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]).map(char::from));
    out
}

/// `sha256:<64 lowercase hex>` of `bytes`.
pub fn sha256_identity(bytes: &[u8]) -> String {
    format!("{PREFIX}{}", sha256_hex(bytes))
}

/// The first 16 hex digits of an identity (after `sha256:`, or of the whole string when
/// it has no prefix). A shorter input is returned whole.
pub fn short_id(identity: &str) -> &str {
    let hex = identity.strip_prefix(PREFIX).unwrap_or(identity);
    hex.get(..16).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn sha256_of_empty_input() {
        assert_eq!(sha256_hex(b""), EMPTY);
        assert_eq!(sha256_identity(b""), format!("sha256:{EMPTY}"));
    }

    #[test]
    fn sha256_of_abc() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn short_ids() {
        assert_eq!(short_id(&sha256_identity(b"")), "e3b0c44298fc1c14");
        assert_eq!(short_id(EMPTY), "e3b0c44298fc1c14");
        assert_eq!(short_id("sha256:abc"), "abc");
        assert_eq!(short_id(""), "");
    }
}
