//! Package sources as the TypeScript pi writes them in settings and on the command line:
//! `npm:name[@version]`, git repositories (`git:` shorthands, or explicit `https://`,
//! `ssh://`, `git://` URLs, with an optional `@ref` pin), and local paths (anything else).

/// Where a package comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PackageSource {
    /// `npm:<spec>`: `name` without the version; pinned when a version is given.
    Npm {
        spec: String,
        name: String,
        version: Option<String>,
    },
    /// A git repository: `repo` is what `git clone` gets, `host` and `path` (`owner/name`,
    /// without `.git`) where it is installed, `git_ref` the pinned branch, tag or commit.
    Git {
        repo: String,
        host: String,
        path: String,
        git_ref: Option<String>,
    },
    /// A folder or file on this machine, used in place.
    Local { path: String },
}

/// The hosts the `git:` shorthands `github:`, `gitlab:` and `bitbucket:` name.
const HOSTED: [(&str, &str); 3] = [
    ("github", "github.com"),
    ("gitlab", "gitlab.com"),
    ("bitbucket", "bitbucket.org"),
];

impl PackageSource {
    /// Parses a source string (never fails: what is not npm or git is a local path).
    pub fn parse(source: &str) -> Self {
        let trimmed = source.trim();
        if let Some(spec) = trimmed.strip_prefix("npm:") {
            let spec = spec.trim();
            let (name, version) = split_npm_spec(spec);
            return PackageSource::Npm {
                spec: spec.to_owned(),
                name,
                version,
            };
        }
        if is_local_path(trimmed) {
            return PackageSource::Local {
                path: source.to_owned(),
            };
        }
        parse_git(trimmed).unwrap_or_else(|| PackageSource::Local {
            path: source.to_owned(),
        })
    }

    /// Whether a version or ref is pinned (`pi update` leaves pinned packages alone).
    pub fn pinned(&self) -> bool {
        match self {
            // An npm range (`^1.2`) still follows newer releases within it.
            PackageSource::Npm { version, .. } => version
                .as_deref()
                .is_some_and(|v| semver::Version::parse(v.trim_start_matches('=')).is_ok()),
            PackageSource::Git { git_ref, .. } => git_ref.is_some(),
            PackageSource::Local { .. } => false,
        }
    }

    /// The identity two sources share when they name the same package whatever the
    /// version or ref: `npm:<name>`, `git:<host>/<path>`, or the path.
    pub fn identity(&self) -> String {
        match self {
            PackageSource::Npm { name, .. } => format!("npm:{name}"),
            PackageSource::Git { host, path, .. } => format!("git:{host}/{path}"),
            PackageSource::Local { path } => path.clone(),
        }
    }
}

/// Not a package source prefix or URL protocol: a local path (the TypeScript pi's rule;
/// bare names and relative paths without `./` count as local).
fn is_local_path(value: &str) -> bool {
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|prefix| value.starts_with(prefix))
}

/// `name[@version]`, where a scoped name keeps its leading `@`.
fn split_npm_spec(spec: &str) -> (String, Option<String>) {
    let search_from = usize::from(spec.starts_with('@'));
    match spec[search_from..].find('@') {
        Some(at) => {
            let at = at + search_from;
            let version = &spec[at + 1..];
            if version.is_empty() {
                (spec[..at].to_owned(), None)
            } else {
                (spec[..at].to_owned(), Some(version.to_owned()))
            }
        }
        None => (spec.to_owned(), None),
    }
}

/// `(repo, ref)`: a trailing `@ref` after the repository path, in scp-like
/// (`git@host:path@ref`), URL (`https://host/path@ref`) and `host/path@ref` forms.
fn split_ref(url: &str) -> (String, Option<String>) {
    let split_path = |path: &str| -> Option<(String, String)> {
        let at = path.find('@')?;
        let (repo_path, git_ref) = (&path[..at], &path[at + 1..]);
        (!repo_path.is_empty() && !git_ref.is_empty())
            .then(|| (repo_path.to_owned(), git_ref.to_owned()))
    };
    if let Some(rest) = url.strip_prefix("git@")
        && let Some((host, path)) = rest.split_once(':')
    {
        return match split_path(path) {
            Some((repo_path, git_ref)) => (format!("git@{host}:{repo_path}"), Some(git_ref)),
            None => (url.to_owned(), None),
        };
    }
    if let Some((scheme, rest)) = url.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        return match split_path(path.trim_start_matches('/')) {
            Some((repo_path, git_ref)) => {
                (format!("{scheme}://{authority}/{repo_path}"), Some(git_ref))
            }
            None => (url.to_owned(), None),
        };
    }
    match url.split_once('/') {
        Some((host, path)) => match split_path(path) {
            Some((repo_path, git_ref)) => (format!("{host}/{repo_path}"), Some(git_ref)),
            None => (url.to_owned(), None),
        },
        None => (url.to_owned(), None),
    }
}

/// A git source: with the `git:` prefix every shorthand form, without it only explicit
/// protocol URLs (`https://`, `http://`, `ssh://`, `git://`).
fn parse_git(source: &str) -> Option<PackageSource> {
    let (url, prefixed) = match source.strip_prefix("git:") {
        Some(rest) => (rest.trim(), true),
        None => (source, false),
    };
    let lower = url.to_ascii_lowercase();
    let explicit = ["https://", "http://", "ssh://", "git://"]
        .iter()
        .any(|p| lower.starts_with(p));
    if !prefixed && !explicit {
        return None;
    }
    // `github:owner/name[#ref]` and friends.
    for (shorthand, host) in HOSTED {
        if let Some(rest) = url.strip_prefix(&format!("{shorthand}:")) {
            let (path, hash_ref) = match rest.split_once('#') {
                Some((path, r)) => (path, Some(r.to_owned())),
                None => (rest, None),
            };
            let (path, at_ref) = split_ref(&format!("{host}/{path}"));
            let path = path
                .strip_prefix(&format!("{host}/"))?
                .trim_end_matches(".git");
            return git_source(
                format!("https://{host}/{path}"),
                host,
                path,
                hash_ref.or(at_ref),
            );
        }
    }
    let (repo, git_ref) = split_ref(url);
    let (repo, hash_ref) = match repo.split_once('#') {
        Some((repo, r)) => (repo.to_owned(), Some(r.to_owned())),
        None => (repo, None),
    };
    let git_ref = git_ref.or(hash_ref);
    if let Some(rest) = repo.strip_prefix("git@") {
        let (host, path) = rest.split_once(':')?;
        return git_source(repo.clone(), host, path, git_ref);
    }
    if let Some((_, rest)) = repo.split_once("://") {
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let (authority, path) = rest.split_once('/')?;
        let host = authority.split(':').next().unwrap_or(authority);
        return git_source(repo.clone(), host, path, git_ref);
    }
    let (host, path) = repo.split_once('/')?;
    if !host.contains('.') && host != "localhost" {
        return None;
    }
    git_source(format!("https://{repo}"), host, path, git_ref)
}

fn git_source(
    repo: String,
    host: &str,
    path: &str,
    git_ref: Option<String>,
) -> Option<PackageSource> {
    let path = path
        .trim_start_matches('/')
        .trim_end_matches('/')
        .trim_end_matches(".git");
    if host.is_empty() || path.split('/').filter(|p| !p.is_empty()).count() < 2 {
        return None;
    }
    // A source naming `..`, a backslash or NUL (also percent-encoded) is no repository
    // pi installs: it becomes a local path, as in pi 0.78.1.
    if unsafe_install_part(host, false) || unsafe_install_part(path, true) {
        return None;
    }
    Some(PackageSource::Git {
        repo: repo.trim_end_matches('/').to_owned(),
        host: host.to_owned(),
        path: path.to_owned(),
        git_ref,
    })
}

/// Whether a host or repository path could lead a checkout out of its install root: as
/// given or percent-decoded it holds NUL, a backslash, a leading `/`, a `..` segment, or
/// (a host) any `/`; an undecodable value counts as unsafe.
fn unsafe_install_part(value: &str, allow_slash: bool) -> bool {
    let Some(decoded) = crate::uri_component::decode(value) else {
        return true;
    };
    [value, decoded.as_str()].iter().any(|candidate| {
        candidate.contains('\0')
            || candidate.contains('\\')
            || candidate.starts_with('/')
            || (!allow_slash && candidate.contains('/'))
            || candidate.split('/').any(|segment| segment == "..")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(repo: &str, host: &str, path: &str, git_ref: Option<&str>) -> PackageSource {
        PackageSource::Git {
            repo: repo.into(),
            host: host.into(),
            path: path.into(),
            git_ref: git_ref.map(Into::into),
        }
    }

    #[test]
    fn npm_specs_with_and_without_versions_and_scopes() {
        let parsed = PackageSource::parse("npm:pi-aliases");
        assert_eq!(
            parsed,
            PackageSource::Npm {
                spec: "pi-aliases".into(),
                name: "pi-aliases".into(),
                version: None
            }
        );
        assert!(!parsed.pinned());
        let scoped = PackageSource::parse("npm:@scope/pkg@1.2.3");
        assert_eq!(
            scoped,
            PackageSource::Npm {
                spec: "@scope/pkg@1.2.3".into(),
                name: "@scope/pkg".into(),
                version: Some("1.2.3".into())
            }
        );
        assert!(scoped.pinned());
        assert_eq!(scoped.identity(), "npm:@scope/pkg");
    }

    #[test]
    fn git_urls_and_shorthands() {
        assert_eq!(
            PackageSource::parse("git:github.com/user/repo@v1"),
            git(
                "https://github.com/user/repo",
                "github.com",
                "user/repo",
                Some("v1")
            )
        );
        assert_eq!(
            PackageSource::parse("https://github.com/user/repo.git"),
            git(
                "https://github.com/user/repo.git",
                "github.com",
                "user/repo",
                None
            )
        );
        assert_eq!(
            PackageSource::parse("git:git@github.com:user/repo@main"),
            git(
                "git@github.com:user/repo",
                "github.com",
                "user/repo",
                Some("main")
            )
        );
        assert_eq!(
            PackageSource::parse("ssh://git@example.org:2222/team/tools.git"),
            git(
                "ssh://git@example.org:2222/team/tools.git",
                "example.org",
                "team/tools",
                None
            )
        );
        assert_eq!(
            PackageSource::parse("git:github:user/repo#abc123"),
            git(
                "https://github.com/user/repo",
                "github.com",
                "user/repo",
                Some("abc123")
            )
        );
        assert_eq!(
            PackageSource::parse("ssh://git@github.com/user/repo@v1"),
            git(
                "ssh://git@github.com/user/repo",
                "github.com",
                "user/repo",
                Some("v1")
            )
        );
        assert_eq!(
            PackageSource::parse("git:localhost/team/repo@v2").identity(),
            "git:localhost/team/repo"
        );
    }

    #[test]
    fn everything_else_is_a_local_path() {
        for source in [
            "./pkg",
            "/abs/pkg",
            "~/pkg",
            "pkg",
            "git@github.com:user/repo",
        ] {
            assert_eq!(
                PackageSource::parse(source),
                PackageSource::Local {
                    path: source.into()
                },
                "{source}"
            );
        }
        // A host or path that could leave the install root (pi 0.78.1).
        for source in [
            "git:git.example.test/user/../../evil",
            "https://git.example.test/a/%2e%2e/b",
            "git:exa%2fmple.test/a/b",
            "git:git.example.test/a/b%zz",
        ] {
            assert!(
                matches!(PackageSource::parse(source), PackageSource::Local { .. }),
                "{source}"
            );
        }
        // Prefixed but not a repository, or a shorthand without `git:`: kept as given.
        for source in ["git:nohost", "github:user/repo"] {
            assert!(
                matches!(PackageSource::parse(source), PackageSource::Local { .. }),
                "{source}"
            );
        }
    }
}
