//! AWS credentials and region from the environment and the shared config files, as the AWS
//! SDK's default chain finds static ones: `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` /
//! `AWS_SESSION_TOKEN` (skipped when the request names a profile), then the profile's keys in
//! `~/.aws/credentials` and `~/.aws/config`.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// What the AWS SDK says when no source has credentials.
pub const NO_CREDENTIALS: &str = "Could not load credentials from any providers";

/// Static (possibly temporary) AWS credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    /// Set for temporary credentials (sent as `x-amz-security-token`).
    pub session_token: Option<String>,
}

impl AwsCredentials {
    /// Long-term credentials (no session token).
    pub fn new(access_key_id: impl Into<String>, secret_access_key: impl Into<String>) -> Self {
        Self {
            access_key_id: access_key_id.into(),
            secret_access_key: secret_access_key.into(),
            session_token: None,
        }
    }
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Credentials from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`),
/// each the provider-scoped value (`auth.json` `env`) before the process environment's.
pub fn from_env(scoped: Option<&BTreeMap<String, String>>) -> Option<AwsCredentials> {
    let var = |name| crate::env_keys::provider_env(name, scoped);
    Some(AwsCredentials {
        access_key_id: var("AWS_ACCESS_KEY_ID")?,
        secret_access_key: var("AWS_SECRET_ACCESS_KEY")?,
        session_token: var("AWS_SESSION_TOKEN"),
    })
}

/// The profile to read: the explicit one, else `AWS_PROFILE`.
pub fn configured_profile(explicit: Option<&str>) -> Option<String> {
    explicit
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .or_else(|| env("AWS_PROFILE"))
}

/// Resolves credentials as pi-ai 1.6 with the SDK's default chain does for static keys: a
/// profile named for the request (`explicit`) is used whatever keys the environment holds;
/// otherwise the environment's keys come first (even beside an ambient `AWS_PROFILE`), then
/// the ambient profile, else `default`, from the shared files.
pub fn resolve(
    explicit: Option<&str>,
    scoped: Option<&BTreeMap<String, String>>,
) -> Result<AwsCredentials, String> {
    let explicit = explicit.filter(|p| !p.is_empty());
    if explicit.is_none()
        && let Some(credentials) = from_env(scoped)
    {
        return Ok(credentials);
    }
    let name = configured_profile(explicit).unwrap_or_else(|| "default".to_owned());
    let files = SharedFiles::load();
    files
        .credentials(&name)
        .ok_or_else(|| NO_CREDENTIALS.to_owned())
}

/// The region configured for a profile in `~/.aws/config`.
pub fn profile_region(profile: Option<&str>) -> Option<String> {
    let name = configured_profile(profile).unwrap_or_else(|| "default".to_owned());
    SharedFiles::load().value(&name, "region")
}

/// One INI file: section → key → value.
pub type Ini = BTreeMap<String, BTreeMap<String, String>>;

/// Parses an AWS shared config/credentials file (`[section]`, `key = value`, `#`/`;`
/// comments). Keys are lowercased; indented lines (sub-properties) are skipped.
pub fn parse_ini(text: &str) -> Ini {
    let mut ini = Ini::new();
    let mut section: Option<String> = None;
    for raw in text.lines() {
        let indented = raw.starts_with([' ', '\t']);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_owned();
            ini.entry(name.clone()).or_default();
            section = Some(name);
            continue;
        }
        if indented {
            continue;
        }
        if let (Some(section), Some((key, value))) = (&section, line.split_once('='))
            && let Some(entries) = ini.get_mut(section)
        {
            entries.insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    ini
}

/// The two shared files.
#[derive(Debug, Default)]
pub struct SharedFiles {
    /// `~/.aws/credentials` (`[name]` sections).
    pub credentials: Ini,
    /// `~/.aws/config` (`[default]` and `[profile name]` sections).
    pub config: Ini,
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
}

fn read(path: Option<PathBuf>) -> Ini {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .map(|text| parse_ini(&text))
        .unwrap_or_default()
}

impl SharedFiles {
    /// Reads the files named by `AWS_SHARED_CREDENTIALS_FILE` / `AWS_CONFIG_FILE`, else the
    /// ones in `~/.aws`; a missing file is empty.
    pub fn load() -> Self {
        let aws_dir = home().map(|h| h.join(".aws"));
        let credentials = env("AWS_SHARED_CREDENTIALS_FILE")
            .map(PathBuf::from)
            .or_else(|| aws_dir.as_ref().map(|d| d.join("credentials")));
        let config = env("AWS_CONFIG_FILE")
            .map(PathBuf::from)
            .or_else(|| aws_dir.as_ref().map(|d| d.join("config")));
        Self {
            credentials: read(credentials),
            config: read(config),
        }
    }

    /// A profile's value: the credentials file first, then the config file.
    pub fn value(&self, profile: &str, key: &str) -> Option<String> {
        let config_section = if profile == "default" {
            "default".to_owned()
        } else {
            format!("profile {profile}")
        };
        self.credentials
            .get(profile)
            .and_then(|s| s.get(key))
            .or_else(|| self.config.get(&config_section).and_then(|s| s.get(key)))
            .or_else(|| {
                // Some tools write `[default]`-style names into the config file too.
                self.config.get(profile).and_then(|s| s.get(key))
            })
            .filter(|v| !v.is_empty())
            .cloned()
    }

    /// A profile's static credentials, if it has both keys.
    pub fn credentials(&self, profile: &str) -> Option<AwsCredentials> {
        Some(AwsCredentials {
            access_key_id: self.value(profile, "aws_access_key_id")?,
            secret_access_key: self.value(profile, "aws_secret_access_key")?,
            session_token: self.value(profile, "aws_session_token"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_profiles_from_both_files() {
        let files = SharedFiles {
            credentials: parse_ini(
                "# comment\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key=secret0\n\n\
                 [work]\naws_access_key_id = AKIDWORK\n aws_secret_access_key = ignored-indented\n\
                 aws_secret_access_key = secret1\naws_session_token = tok\n",
            ),
            config: parse_ini(
                "[default]\nregion = eu-west-1\n[profile work]\nregion = us-west-2\n\
                 [profile cfgonly]\naws_access_key_id = AKIDCFG\naws_secret_access_key = s\n",
            ),
        };
        let default = files.credentials("default").unwrap();
        assert_eq!(default.access_key_id, "AKIDDEFAULT");
        assert_eq!(default.session_token, None);
        let work = files.credentials("work").unwrap();
        assert_eq!(
            (
                work.secret_access_key.as_str(),
                work.session_token.as_deref()
            ),
            ("secret1", Some("tok"))
        );
        assert_eq!(files.value("work", "region").as_deref(), Some("us-west-2"));
        assert_eq!(
            files.value("default", "region").as_deref(),
            Some("eu-west-1")
        );
        assert_eq!(
            files.credentials("cfgonly").unwrap().access_key_id,
            "AKIDCFG"
        );
        assert!(files.credentials("missing").is_none());
    }

    #[test]
    fn debug_output_hides_secrets() {
        let mut creds = AwsCredentials::new("AKID", "very-secret");
        creds.session_token = Some("session-secret".into());
        let shown = format!("{creds:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert!(!shown.contains("session-secret"), "{shown}");
    }
}
