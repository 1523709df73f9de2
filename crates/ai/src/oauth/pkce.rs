//! PKCE (RFC 7636): a random verifier and its S256 challenge, both base64url without padding.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

use super::OAuthError;

/// A verifier and the challenge sent with the authorization request.
#[derive(Debug, Clone)]
pub struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    /// Makes a verifier from 32 random bytes, as pi-ai does.
    pub fn generate() -> Result<Self, OAuthError> {
        let bytes = random_bytes::<32>()?;
        let verifier = URL_SAFE_NO_PAD.encode(bytes);
        Ok(Self {
            challenge: challenge_of(&verifier),
            verifier,
        })
    }
}

/// The S256 challenge of a verifier.
pub fn challenge_of(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// `N` bytes from the system's secure random source.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], OAuthError> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| OAuthError::Failed("No secure random source available".into()))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_matches_rfc7636_example() {
        // RFC 7636 appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_differ_and_are_43_chars() {
        let a = Pkce::generate().unwrap();
        let b = Pkce::generate().unwrap();
        assert_ne!(a.verifier, b.verifier);
        assert_eq!(a.verifier.len(), 43);
        assert_eq!(a.challenge, challenge_of(&a.verifier));
    }
}
