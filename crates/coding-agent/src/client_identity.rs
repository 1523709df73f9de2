//! The identity pi's requests carry (`pi_ai::identity`): the pi version this build stands
//! in for, and provider attribution while install telemetry is on (pi 1.x: the
//! `enableInstallTelemetry` setting, overridden by `PI_TELEMETRY`).

use pi_ai::identity::ClientIdentity;

use crate::config::settings::Settings;

/// pi's reading of a flag variable: `1`, `true` or `yes` (any case) is on, anything else off.
fn truthy(value: &str) -> bool {
    value == "1" || value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("yes")
}

/// Whether attribution headers go out: `PI_TELEMETRY` when set, else the setting (default on).
pub fn attribution_enabled(settings: &Settings, telemetry_env: Option<&str>) -> bool {
    match telemetry_env {
        Some(value) => truthy(value),
        None => settings.enable_install_telemetry.unwrap_or(true),
    }
}

/// Sets the process's client identity from the settings and the environment.
pub fn install(settings: &Settings) {
    let env = std::env::var("PI_TELEMETRY").ok();
    pi_ai::identity::set_client_identity(ClientIdentity {
        version: crate::PI_VERSION.to_owned(),
        attribution: attribution_enabled(settings, env.as_deref()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_over_the_setting() {
        let off = Settings {
            enable_install_telemetry: Some(false),
            ..Settings::default()
        };
        assert!(!attribution_enabled(&off, None));
        assert!(attribution_enabled(&off, Some("YES")));
        assert!(attribution_enabled(&Settings::default(), None));
        assert!(!attribution_enabled(&Settings::default(), Some("0")));
        assert!(!attribution_enabled(&Settings::default(), Some("")));
    }
}
