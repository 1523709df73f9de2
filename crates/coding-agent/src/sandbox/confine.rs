//! Builds the Landlock ruleset of the launcher and applies it to the calling thread (and so
//! to everything it `exec`s or spawns afterwards), with the landlock crate's safe API only.
//!
//! Handled rights: all file-system rights of ABI v3 as a hard requirement (an older or absent
//! Landlock is [`SandboxError::Unavailable`]), plus `IoctlDev` (ABI v5) where the kernel has
//! it. Rights of later ABIs (e.g. v9's `ResolveUnix`) are deliberately not handled, so the
//! sandbox behaves the same on every kernel from v5 on.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, LandlockStatus,
    PathBeneath, PathFd, RestrictSelf, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
};

use super::SandboxError;

/// The oldest Landlock ABI the sandbox accepts (v3 is the first to restrict `truncate(2)`).
pub const MIN_ABI: u8 = 3;

/// The newest ABI whose file-system rights are handled.
const HANDLED_ABI: ABI = ABI::V5;

/// Devices kept readable, writable and ioctl-able so redirections and terminals work.
pub const DEVICE_PATHS: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The Landlock ABI of the running kernel, or [`SandboxError::Unavailable`] when Landlock is
/// missing, disabled or older than [`MIN_ABI`]. Has no effect on the calling process.
pub fn landlock_available() -> Result<u8, SandboxError> {
    // Without flags and without no_new_privs, `apply` only probes the kernel's ABI version.
    let status = RestrictSelf::default()
        .no_new_privs(false)
        .apply()
        .map_err(|e| SandboxError::Unavailable(format!("probing Landlock failed: {e}")))?;
    match status.landlock {
        LandlockStatus::NotEnabled => Err(SandboxError::Unavailable(
            "Landlock is built into the kernel but not enabled; add `landlock` to the `lsm=` \
             boot parameter"
                .to_owned(),
        )),
        LandlockStatus::NotImplemented => Err(SandboxError::Unavailable(
            "the kernel is built without Landlock (CONFIG_SECURITY_LANDLOCK)".to_owned(),
        )),
        LandlockStatus::Available {
            effective_abi,
            kernel_abi,
        } => {
            let abi = match kernel_abi {
                Some(raw) => u8::try_from(raw).unwrap_or(u8::MAX),
                None => abi_number(effective_abi),
            };
            if abi < MIN_ABI {
                Err(SandboxError::Unavailable(format!(
                    "kernel Landlock ABI v{abi}, v{MIN_ABI} (Linux 6.2) or newer is needed"
                )))
            } else {
                Ok(abi)
            }
        }
    }
}

/// The number of a known ABI (0 for `Unsupported`).
fn abi_number(abi: ABI) -> u8 {
    abi.to_string().parse().unwrap_or(0)
}

/// The read paths to use: the given ones, or `/` when none is given.
pub fn effective_read_paths(read: &[PathBuf]) -> Vec<PathBuf> {
    if read.is_empty() {
        vec![PathBuf::from("/")]
    } else {
        read.to_vec()
    }
}

/// `path` made absolute against `cwd`; [`SandboxError::BadPath`] when it does not exist.
pub fn rule_path(path: &Path, cwd: &Path) -> Result<PathBuf, SandboxError> {
    let absolute = cwd.join(path);
    match std::fs::metadata(&absolute) {
        Ok(_) => Ok(absolute),
        Err(e) => Err(SandboxError::BadPath {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}

/// The device paths of [`DEVICE_PATHS`] that exist here.
pub fn existing_devices() -> Vec<PathBuf> {
    DEVICE_PATHS
        .iter()
        .map(PathBuf::from)
        .filter(|path| path.exists())
        .collect()
}

/// Read + execute (files and directory listings).
fn read_access() -> BitFlags<AccessFs> {
    AccessFs::from_read(HANDLED_ABI)
}

/// Everything handled: read, execute, write, create, remove, rename, truncate, ioctl.
fn write_access() -> BitFlags<AccessFs> {
    AccessFs::from_all(HANDLED_ABI)
}

/// `access` limited to what a rule on a non-directory may grant.
fn access_for(access: BitFlags<AccessFs>, is_dir: bool) -> BitFlags<AccessFs> {
    if is_dir {
        access
    } else {
        access & AccessFs::from_file(HANDLED_ABI)
    }
}

/// One `path beneath` rule; the path must exist.
fn rule(path: &Path, access: BitFlags<AccessFs>) -> Result<PathBeneath<PathFd>, SandboxError> {
    let bad = |reason: String| SandboxError::BadPath {
        path: path.to_path_buf(),
        reason,
    };
    let is_dir = std::fs::metadata(path)
        .map_err(|e| bad(e.to_string()))?
        .is_dir();
    let fd = PathFd::new(path).map_err(|e| bad(e.to_string()))?;
    Ok(PathBeneath::new(fd, access_for(access, is_dir)))
}

/// The first Landlock ABI that can refuse TCP `connect` and `bind` (Linux 6.7).
pub const NETWORK_ABI: u8 = 4;

/// Confines the calling thread: read + execute below `read` (all of `/` when empty), full
/// access below `write` and on the existing [`DEVICE_PATHS`]; without `network`, no TCP
/// connection or listening socket. Relative paths resolve against the current directory.
/// Never returns `Ok` without the ruleset being enforced.
pub fn confine(read: &[PathBuf], write: &[PathBuf], network: bool) -> Result<u8, SandboxError> {
    let abi = landlock_available()?;
    if !network && abi < NETWORK_ABI {
        return Err(SandboxError::Unavailable(format!(
            "turning the network off needs Landlock ABI v{NETWORK_ABI} (Linux 6.7); this \
             kernel has v{abi}"
        )));
    }
    let mut rules = Vec::new();
    for path in effective_read_paths(read) {
        rules.push(rule(&path, read_access())?);
    }
    for path in write {
        rules.push(rule(path, write_access())?);
    }
    for path in existing_devices() {
        // A device that vanished since the check is simply left out.
        if let Ok(device) = rule(&path, write_access()) {
            rules.push(device);
        }
    }

    let unavailable = |e: landlock::RulesetError| SandboxError::Unavailable(e.to_string());
    let failed = |e: landlock::RulesetError| SandboxError::Ruleset(e.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .map_err(unavailable)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(HANDLED_ABI))
        .map_err(failed)?;
    if !network {
        // Handled with no rule allowing anything: every TCP connect and bind is refused.
        ruleset = ruleset
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::from_all(ABI::V4))
            .map_err(unavailable)?;
    }
    let mut ruleset = ruleset.create().map_err(failed)?;
    for rule in rules {
        ruleset = ruleset.add_rule(rule).map_err(failed)?;
    }
    let status = ruleset.restrict_self().map_err(failed)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(abi),
        RulesetStatus::NotEnforced => Err(SandboxError::Unavailable(
            "the kernel did not enforce the ruleset".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_paths_default_to_root() {
        assert_eq!(effective_read_paths(&[]), vec![PathBuf::from("/")]);
        let given = vec![PathBuf::from("/usr"), PathBuf::from("/etc")];
        assert_eq!(effective_read_paths(&given), given);
    }

    #[test]
    fn rule_paths_resolve_against_cwd_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(
            rule_path(Path::new("sub"), dir.path()).unwrap(),
            dir.path().join("sub")
        );
        // Absolute paths ignore the cwd.
        assert_eq!(
            rule_path(Path::new("/"), dir.path()).unwrap(),
            PathBuf::from("/")
        );
        let missing = rule_path(Path::new("nope"), dir.path()).unwrap_err();
        assert!(
            matches!(&missing, SandboxError::BadPath { path, .. } if path == Path::new("nope")),
            "{missing:?}"
        );
    }

    #[test]
    fn rule_on_missing_path_is_bad_path() {
        let err = rule(Path::new("/definitely/not/here"), read_access()).unwrap_err();
        assert!(matches!(err, SandboxError::BadPath { .. }), "{err:?}");
        assert!(err.to_string().contains("/definitely/not/here"));
    }

    #[test]
    fn file_rules_get_only_file_rights() {
        let dir_access = access_for(write_access(), true);
        assert!(dir_access.contains(AccessFs::MakeReg | AccessFs::RemoveFile | AccessFs::Refer));
        let file_access = access_for(write_access(), false);
        assert!(file_access.contains(AccessFs::WriteFile | AccessFs::Truncate));
        assert!(file_access.contains(AccessFs::IoctlDev | AccessFs::ReadFile));
        assert!(!file_access.contains(AccessFs::MakeReg));
        assert!(!file_access.contains(AccessFs::ReadDir));
        // Read paths never grant writing.
        assert!(!read_access().contains(AccessFs::WriteFile));
        assert!(read_access().contains(AccessFs::Execute | AccessFs::ReadDir));
    }

    #[test]
    fn devices_are_filtered_to_existing_ones() {
        let devices = existing_devices();
        assert!(devices.iter().all(|d| d.exists()));
        // /dev/null exists on every Linux system that runs these tests.
        assert!(devices.contains(&PathBuf::from("/dev/null")));
    }

    #[test]
    fn availability_reports_an_abi_or_why_not() {
        match landlock_available() {
            Ok(abi) => assert!(abi >= MIN_ABI),
            Err(SandboxError::Unavailable(reason)) => assert!(!reason.is_empty()),
            Err(other) => panic!("unexpected error {other:?}"),
        }
    }
}
