//! Auth profiles: several API keys per provider, tried in rotation order. A profile that
//! fails with a rate limit, a rejected key or a billing error cools down for a while (longer
//! after each consecutive failure) and is skipped until then.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::classify::FailureKind;

/// One API key for one provider. The key never appears in `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthProfile {
    pub id: String,
    pub provider: String,
    api_key: String,
}

impl AuthProfile {
    pub fn new(
        id: impl Into<String>,
        provider: impl Into<String>,
        api_key: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            provider: provider.into(),
            api_key: api_key.into(),
        }
    }

    /// The secret key; hand it only to the request.
    pub fn api_key(&self) -> &str {
        &self.api_key
    }
}

impl fmt::Debug for AuthProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthProfile")
            .field("id", &self.id)
            .field("provider", &self.provider)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

/// How long a failing profile rests: the base for its failure kind, times 5 for each
/// earlier consecutive failure, capped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CooldownConfig {
    pub rate_limit: Duration,
    pub auth: Duration,
    pub billing: Duration,
    /// Cap for rate-limit and auth cooldowns.
    pub max: Duration,
    /// Cap for billing cooldowns.
    pub billing_max: Duration,
}

impl Default for CooldownConfig {
    fn default() -> Self {
        Self {
            rate_limit: Duration::from_secs(60),
            auth: Duration::from_secs(5 * 60),
            billing: Duration::from_secs(5 * 60 * 60),
            max: Duration::from_secs(60 * 60),
            billing_max: Duration::from_secs(24 * 60 * 60),
        }
    }
}

impl CooldownConfig {
    /// The same cooldown for every kind (handy in tests).
    pub fn uniform(length: Duration) -> Self {
        Self {
            rate_limit: length,
            auth: length,
            billing: length,
            max: length,
            billing_max: length,
        }
    }

    /// The cooldown after the `failures`-th consecutive failure of `kind`; `None` for kinds
    /// that do not cool a profile down.
    pub fn cooldown_for(&self, kind: FailureKind, failures: u32) -> Option<Duration> {
        let (base, cap) = match kind {
            FailureKind::RateLimit => (self.rate_limit, self.max),
            FailureKind::Auth => (self.auth, self.max),
            FailureKind::Billing => (self.billing, self.billing_max),
            _ => return None,
        };
        let factor = 5u32.saturating_pow(failures.saturating_sub(1).min(8));
        Some(base.saturating_mul(factor).min(cap))
    }
}

#[derive(Debug, Default)]
struct ProfileState {
    cooldown_until: Option<Instant>,
    failures: u32,
    last_failure: Option<FailureKind>,
}

#[derive(Debug, Default)]
struct StoreState {
    /// Profiles in rotation order.
    profiles: Vec<AuthProfile>,
    states: HashMap<String, ProfileState>,
}

/// The profiles of every provider with their cooldowns; clones share one store.
#[derive(Debug, Clone, Default)]
pub struct AuthProfileStore {
    state: Arc<Mutex<StoreState>>,
    cooldowns: CooldownConfig,
}

impl AuthProfileStore {
    /// A store with these profiles (their order is the rotation order).
    pub fn new(profiles: Vec<AuthProfile>, cooldowns: CooldownConfig) -> Self {
        let store = Self {
            state: Arc::default(),
            cooldowns,
        };
        for profile in profiles {
            store.add(profile);
        }
        store
    }

    fn lock(&self) -> MutexGuard<'_, StoreState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds a profile at the end of the rotation, or replaces the one with its id in place.
    pub fn add(&self, profile: AuthProfile) {
        let mut state = self.lock();
        match state.profiles.iter().position(|p| p.id == profile.id) {
            Some(at) => state.profiles[at] = profile,
            None => state.profiles.push(profile),
        }
    }

    pub fn cooldown_config(&self) -> CooldownConfig {
        self.cooldowns
    }

    /// Ids of a provider's profiles, in rotation order.
    pub fn profile_ids(&self, provider: &str) -> Vec<String> {
        self.lock()
            .profiles
            .iter()
            .filter(|p| p.provider == provider)
            .map(|p| p.id.clone())
            .collect()
    }

    /// The keys of every profile (to redact them from error texts).
    pub fn api_keys(&self) -> Vec<String> {
        self.lock()
            .profiles
            .iter()
            .map(|p| p.api_key.clone())
            .collect()
    }

    /// Whether the provider has any profile.
    pub fn has_profiles(&self, provider: &str) -> bool {
        self.lock().profiles.iter().any(|p| p.provider == provider)
    }

    /// The first profile of `provider` in rotation order that is not cooling down at `now`.
    pub fn next_available(&self, provider: &str, now: Instant) -> Option<AuthProfile> {
        self.next_available_excluding(provider, now, &[])
    }

    /// Like [`Self::next_available`], skipping the ids in `exclude` (tried in this run).
    pub fn next_available_excluding(
        &self,
        provider: &str,
        now: Instant,
        exclude: &[String],
    ) -> Option<AuthProfile> {
        let state = self.lock();
        state
            .profiles
            .iter()
            .filter(|p| p.provider == provider && !exclude.contains(&p.id))
            .find(|p| {
                state
                    .states
                    .get(&p.id)
                    .and_then(|s| s.cooldown_until)
                    .is_none_or(|until| until <= now)
            })
            .cloned()
    }

    /// When the profile's cooldown ends, if one was ever set.
    pub fn cooldown_until(&self, id: &str) -> Option<Instant> {
        self.lock().states.get(id).and_then(|s| s.cooldown_until)
    }

    /// Whether the profile is cooling down at `now`.
    pub fn in_cooldown(&self, id: &str, now: Instant) -> bool {
        self.cooldown_until(id).is_some_and(|until| until > now)
    }

    /// The kind of the profile's last failure since its last success.
    pub fn last_failure(&self, id: &str) -> Option<FailureKind> {
        self.lock().states.get(id).and_then(|s| s.last_failure)
    }

    /// Records a failure; kinds that cool down set `cooldown_until`, which is returned.
    pub fn mark_failure(&self, id: &str, kind: FailureKind, now: Instant) -> Option<Instant> {
        let mut state = self.lock();
        let entry = state.states.entry(id.to_owned()).or_default();
        entry.last_failure = Some(kind);
        if !kind.cools_down_profile() {
            return None;
        }
        entry.failures = entry.failures.saturating_add(1);
        let length = self.cooldowns.cooldown_for(kind, entry.failures)?;
        let until = now + length;
        entry.cooldown_until = Some(until);
        Some(until)
    }

    /// Records a success: the failure streak and any cooldown end.
    pub fn mark_success(&self, id: &str) {
        self.lock().states.remove(id);
    }

    /// Ends a cooldown early.
    pub fn clear_cooldown(&self, id: &str) {
        if let Some(state) = self.lock().states.get_mut(id) {
            state.cooldown_until = None;
        }
    }
}

/// What a key in an error text is replaced by.
pub const REDACTED: &str = "<redacted>";
/// Shorter "keys" are not redacted (they would mangle ordinary words); real keys are longer.
const MIN_SECRET_LEN: usize = 8;

/// Keeps the keys of a store (and the session's own) out of texts such as provider errors,
/// which may echo the key they were sent.
#[derive(Clone, Default)]
pub(crate) struct SecretRedactor {
    /// Longest first, so a key containing another is replaced whole.
    secrets: Vec<String>,
}

impl SecretRedactor {
    pub(crate) fn new(store: &AuthProfileStore, session_key: Option<&str>) -> Self {
        let mut secrets: Vec<String> = store
            .api_keys()
            .into_iter()
            .chain(session_key.map(str::to_owned))
            .filter(|key| key.len() >= MIN_SECRET_LEN)
            .collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Self { secrets }
    }

    /// `text` with every known key replaced by [`REDACTED`].
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for secret in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), REDACTED);
            }
        }
        text
    }
}

impl fmt::Debug for SecretRedactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretRedactor({} keys)", self.secrets.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> AuthProfileStore {
        AuthProfileStore::new(
            vec![
                AuthProfile::new("a", "openai", "sk-aaaa"),
                AuthProfile::new("b", "openai", "sk-bbbb"),
                AuthProfile::new("c", "anthropic", "sk-cccc"),
            ],
            CooldownConfig::uniform(Duration::from_millis(50)),
        )
    }

    #[test]
    fn known_keys_are_redacted_whole_and_short_ones_left_alone() {
        let store = AuthProfileStore::new(
            vec![
                AuthProfile::new("a", "p", "sk-short"),
                AuthProfile::new("b", "p", "sk-short-and-longer"),
                AuthProfile::new("c", "q", "k-1"),
            ],
            CooldownConfig::default(),
        );
        let redactor = SecretRedactor::new(&store, Some("sk-session"));
        assert_eq!(
            redactor.redact("bad key sk-short-and-longer, sk-short or sk-session; k-1"),
            "bad key <redacted>, <redacted> or <redacted>; k-1"
        );
        assert!(!format!("{redactor:?}").contains("sk-"));
        let none = SecretRedactor::new(&AuthProfileStore::default(), Some(""));
        assert_eq!(none.redact("text"), "text");
    }

    #[test]
    fn keys_never_reach_debug_output() {
        let s = store();
        let text = format!("{s:?} {:?}", AuthProfile::new("x", "p", "sk-secret"));
        assert!(!text.contains("sk-"), "{text}");
        assert!(text.contains("<redacted>"));
    }

    #[test]
    fn rotation_skips_cooling_profiles_until_they_recover() {
        let s = store();
        let now = Instant::now();
        let first = s.next_available("openai", now).map(|p| p.id);
        assert_eq!(first.as_deref(), Some("a"));
        let until = s.mark_failure("a", FailureKind::RateLimit, now);
        assert_eq!(until, Some(now + Duration::from_millis(50)));
        assert_eq!(
            s.next_available("openai", now).map(|p| p.id).as_deref(),
            Some("b")
        );
        assert!(s.in_cooldown("a", now));
        let later = now + Duration::from_millis(51);
        assert_eq!(
            s.next_available("openai", later).map(|p| p.id).as_deref(),
            Some("a")
        );
        assert_eq!(
            s.next_available_excluding("openai", now, &["b".into()]),
            None
        );
        assert_eq!(s.profile_ids("anthropic"), ["c"]);
    }

    #[test]
    fn timeouts_do_not_cool_down_and_streaks_escalate() {
        let s = store();
        let now = Instant::now();
        assert_eq!(s.mark_failure("a", FailureKind::Timeout, now), None);
        assert!(!s.in_cooldown("a", now));
        assert_eq!(s.last_failure("a"), Some(FailureKind::Timeout));
        let config = CooldownConfig {
            rate_limit: Duration::from_secs(60),
            max: Duration::from_secs(3600),
            ..CooldownConfig::default()
        };
        let lengths: Vec<u64> = (1..=4)
            .filter_map(|n| config.cooldown_for(FailureKind::RateLimit, n))
            .map(|d| d.as_secs())
            .collect();
        assert_eq!(lengths, [60, 300, 1500, 3600]);
        s.mark_failure("b", FailureKind::Billing, now);
        s.mark_success("b");
        assert_eq!(s.cooldown_until("b"), None);
    }
}
