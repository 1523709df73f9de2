//! The opt-in guard for early features, as pi 1.6's `areExperimentalFeaturesEnabled`.

/// Whether the user opted in to early features with `PI_EXPERIMENTAL=1`.
pub fn experimental_features_enabled() -> bool {
    std::env::var_os("PI_EXPERIMENTAL").is_some_and(|v| v == "1")
}
