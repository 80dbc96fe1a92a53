//! Address validation with Retry (RFC 9000 §8.1.2), asked for only while many handshakes are
//! open at once.
//!
//! An Initial packet from a spoofed address costs the origin a connection slot, and replies of up
//! to three times its size, until the handshake times out: a few hundred such packets a second
//! would fill `--max-connections`. So once `RETRY_ABOVE_HALF_OPEN` connections are still in their
//! handshake, a new client is first sent a Retry carrying a token, and is let in when its next
//! Initial echoes the token from the address it was sent to. Below that threshold nobody pays the
//! extra round trip.
//!
//! The token is stateless: when it was issued, the client's original destination connection id
//! (which the handshake must confirm, RFC 9000 §7.3), and an HMAC over both and the client's
//! address under a key drawn at start-up.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ring::hmac;

/// Unvalidated handshakes in progress beyond which new clients must answer a Retry first.
pub const RETRY_ABOVE_HALF_OPEN: usize = 32;
/// How long a Retry token is accepted: one round trip is all it needs.
const TOKEN_LIFETIME: Duration = Duration::from_secs(10);
/// Bytes of the HMAC-SHA256 tag.
const TAG_LEN: usize = 32;

pub struct RetryTokens {
    key: hmac::Key,
}

impl RetryTokens {
    pub fn new(rng: &dyn ring::rand::SecureRandom) -> anyhow::Result<Self> {
        let key = hmac::Key::generate(hmac::HMAC_SHA256, rng).map_err(|_| anyhow::anyhow!("no randomness for the Retry key"))?;
        Ok(Self { key })
    }

    /// The token of a Retry answering `peer`'s Initial sent to `odcid`:
    /// `issued (u64 seconds, big-endian) | odcid length (u8) | odcid | tag`.
    pub fn mint(&self, peer: SocketAddr, odcid: &[u8], now: SystemTime) -> Vec<u8> {
        let issued = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let mut token = issued.to_be_bytes().to_vec();
        token.push(odcid.len() as u8);
        token.extend_from_slice(odcid);
        let tag = hmac::sign(&self.key, &signed(peer, &token));
        token.extend_from_slice(tag.as_ref());
        token
    }

    /// The original destination connection id in `token` if this origin issued it to `peer`
    /// within the token's lifetime; None otherwise.
    pub fn validate(&self, token: &[u8], peer: SocketAddr, now: SystemTime) -> Option<Vec<u8>> {
        let odcid_len = usize::from(*token.get(8)?);
        if odcid_len > quiche::MAX_CONN_ID_LEN || token.len() != 9 + odcid_len + TAG_LEN {
            return None;
        }
        let (body, tag) = token.split_at(9 + odcid_len);
        hmac::verify(&self.key, &signed(peer, body), tag).ok()?;
        let issued = u64::from_be_bytes(body[..8].try_into().ok()?);
        let now = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        if issued > now || now - issued > TOKEN_LIFETIME.as_secs() {
            return None;
        }
        Some(body[9..].to_vec())
    }
}

/// What the tag covers: the client's address (IP and port) and the token's body.
fn signed(peer: SocketAddr, body: &[u8]) -> Vec<u8> {
    let mut out = match peer.ip() {
        std::net::IpAddr::V4(ip) => ip.octets().to_vec(),
        std::net::IpAddr::V6(ip) => ip.octets().to_vec(),
    };
    out.extend_from_slice(&peer.port().to_be_bytes());
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> RetryTokens {
        RetryTokens::new(&ring::rand::SystemRandom::new()).unwrap()
    }

    #[test]
    fn a_token_is_valid_for_its_address_and_lifetime_only() {
        let t = tokens();
        let peer: SocketAddr = "192.0.2.7:50000".parse().unwrap();
        let now = SystemTime::now();
        let odcid = [9u8; 16];
        let token = t.mint(peer, &odcid, now);
        assert_eq!(t.validate(&token, peer, now).as_deref(), Some(&odcid[..]));
        assert_eq!(t.validate(&token, peer, now + Duration::from_secs(9)).as_deref(), Some(&odcid[..]));
        assert_eq!(t.validate(&token, peer, now + Duration::from_secs(11)), None, "expired");
        assert_eq!(t.validate(&token, "192.0.2.7:50001".parse().unwrap(), now), None, "another port");
        assert_eq!(t.validate(&token, "[2001:db8::7]:50000".parse().unwrap(), now), None, "another address");
        assert_eq!(tokens().validate(&token, peer, now), None, "another origin's key");
        for i in 0..token.len() {
            let mut bad = token.clone();
            bad[i] ^= 1;
            assert_eq!(t.validate(&bad, peer, now), None, "byte {i} flipped");
        }
        for n in 0..token.len() {
            assert_eq!(t.validate(&token[..n], peer, now), None, "cut to {n} bytes");
        }
        let mut longer = token.clone();
        longer.push(0);
        assert_eq!(t.validate(&longer, peer, now), None);
    }
}
