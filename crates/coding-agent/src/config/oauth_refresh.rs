//! Keeping subscription logins valid: before a request the stored token is checked, and one
//! close to expiry is refreshed under the auth.json lock, so that of several pi processes
//! (ours or the TypeScript pi) only one spends the refresh token and the others read its
//! result.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::watch;

use pi_ai::oauth::{OAuthCredentials, OAuthError, OAuthProvider};

use super::auth::{AuthStorage, oauth_entry, oauth_key, update_auth_file_locked};
use pi_ai::oauth::FileLock as AuthLock;

/// A request refreshes a login whose token has less than five minutes left, so that it does
/// not expire mid-request (pi-ai 1.6's `DEFAULT_OAUTH_MINIMUM_VALIDITY_MS`).
pub const MIN_VALIDITY_MS: i64 = 5 * 60 * 1000;

/// How long a token refresh may take before it fails and lets go of the auth.json lock
/// (pi-ai 1.6's `DEFAULT_OAUTH_REFRESH_TIMEOUT_MS`).
const REFRESH_TIMEOUT: Duration = Duration::from_secs(15);

/// Why no usable key could be had; the text never carries a token.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RefreshError(pub String);

/// The provider's request key from its stored OAuth login, refreshed when it expires
/// within `min_validity_ms`; `Ok(None)` when the provider has no OAuth login stored.
pub async fn fresh_oauth_key(
    auth_path: &Path,
    provider: &str,
    min_validity_ms: i64,
) -> Result<Option<String>, RefreshError> {
    Ok(
        fresh_credentials(auth_path, provider, min_validity_ms, true)
            .await?
            .map(|credentials| oauth_key(provider, &credentials)),
    )
}

/// The stored OAuth credentials of `provider`, refreshed first when they expire within
/// `min_validity_ms` and `refresh` allows it.
pub async fn fresh_credentials(
    auth_path: &Path,
    provider: &str,
    min_validity_ms: i64,
    refresh: bool,
) -> Result<Option<OAuthCredentials>, RefreshError> {
    let stored = AuthStorage::load(auth_path);
    let Some(credentials) = stored.oauth(provider).cloned() else {
        return Ok(None);
    };
    if !credentials.expires_within(min_validity_ms) || !refresh {
        return Ok(Some(credentials));
    }
    let Some(login) = OAuthProvider::from_id(provider) else {
        // A login of a provider this build cannot refresh: use what is stored.
        return Ok(Some(credentials));
    };
    refresh_locked(auth_path.to_path_buf(), provider, login, min_validity_ms)
        .await
        .map(Some)
}

async fn refresh_locked(
    auth_path: PathBuf,
    provider: &str,
    login: OAuthProvider,
    min_validity_ms: i64,
) -> Result<OAuthCredentials, RefreshError> {
    let lock_path = auth_path.clone();
    let lock = tokio::task::spawn_blocking(move || AuthLock::acquire(&lock_path))
        .await
        .map_err(|e| RefreshError(e.to_string()))?
        .map_err(|e| RefreshError(format!("Could not lock {}: {e}", auth_path.display())))?;
    // Another process may have refreshed while this one waited.
    let current = AuthStorage::load(&auth_path).oauth(provider).cloned();
    let Some(current) = current else {
        return Err(RefreshError(refresh_failed(
            provider,
            "the login was removed",
        )));
    };
    if !current.expires_within(min_validity_ms) {
        return Ok(current);
    }
    // From here the refresh runs to its end and is saved even when the request that asked
    // for it is cancelled or pi is stopping: the server may already have spent the old
    // refresh token, so dropping its answer would lose the login (pi 1.5.1, 1.0.3).
    let in_flight = InFlight::enter();
    let provider = provider.to_owned();
    tokio::spawn(async move {
        let _in_flight = in_flight;
        refresh_and_save(&auth_path, &provider, login, &current, lock).await
    })
    .await
    .map_err(|e| RefreshError(e.to_string()))?
}

/// Refreshes `current` under `lock` (kept fresh while the request runs), saves the result to
/// auth.json and lets the lock go.
async fn refresh_and_save(
    auth_path: &Path,
    provider: &str,
    login: OAuthProvider,
    current: &OAuthCredentials,
    lock: AuthLock,
) -> Result<OAuthCredentials, RefreshError> {
    let refreshed = {
        let refresh = tokio::time::timeout(REFRESH_TIMEOUT, login.refresh(current));
        tokio::pin!(refresh);
        // The lock stays fresh (its mtime touched) for as long as the refresh takes.
        let mut keep_alive = tokio::time::interval(Duration::from_secs(2));
        loop {
            tokio::select! {
                result = &mut refresh => break result,
                _ = keep_alive.tick() => lock.touch(),
            }
        }
    };
    let refreshed = match refreshed {
        Ok(Ok(refreshed)) => refreshed,
        Ok(Err(error)) => return Err(RefreshError(refresh_failure(provider, &error))),
        Err(_) => {
            return Err(RefreshError(refresh_failed(
                provider,
                &format!(
                    "the token request took longer than {} seconds",
                    REFRESH_TIMEOUT.as_secs()
                ),
            )));
        }
    };
    update_auth_file_locked(auth_path, |map| {
        map.insert(provider.to_owned(), oauth_entry(&refreshed));
    })
    .map_err(|e| {
        RefreshError(format!(
            "Refreshed the {provider} login but could not save it to {}: {e}",
            auth_path.display()
        ))
    })?;
    drop(lock);
    Ok(refreshed)
}

/// Waits (at most as long as one refresh may take) until no token refresh is running, so
/// that a stopping pi saves the tokens a refresh was issued.
pub async fn settle() {
    let mut running = in_flight().subscribe();
    let _ = tokio::time::timeout(
        REFRESH_TIMEOUT + Duration::from_secs(1),
        running.wait_for(|count| *count == 0),
    )
    .await;
}

/// The number of token refreshes running.
fn in_flight() -> &'static watch::Sender<usize> {
    static IN_FLIGHT: OnceLock<watch::Sender<usize>> = OnceLock::new();
    IN_FLIGHT.get_or_init(|| watch::Sender::new(0))
}

/// Counts one running refresh for as long as it lives.
struct InFlight;

impl InFlight {
    fn enter() -> Self {
        in_flight().send_modify(|count| *count += 1);
        Self
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        in_flight().send_modify(|count| *count = count.saturating_sub(1));
    }
}

/// pi 1.6.0's words: `OAuth refresh failed for <provider>: <cause>` (a revoked refresh token
/// names the provider's answer, so the user sees why).
fn refresh_failed(provider: &str, cause: &str) -> String {
    format!("OAuth refresh failed for {provider}: {cause}")
}

fn refresh_failure(provider: &str, error: &OAuthError) -> String {
    refresh_failed(provider, &error.to_string())
}
