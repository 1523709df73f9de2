//! Workspace snapshots: at the end of each run the node running a session stores its cwd as
//! a gzipped tar in the `pi_blobs` object store (one per session, the newest), unless its
//! files weigh more than a limit. A node that takes the session over after its workspace
//! node died, and finds no cwd on its own disk, unpacks the snapshot there: the files are
//! as they were at the end of the last run, and the conversation goes on with them.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::Path;

use async_nats::jetstream::object_store::{GetErrorKind, ObjectMetadata};
use tokio::io::AsyncReadExt;

use super::engine::{ClusterError, Engine};

fn js<E: std::fmt::Display>(e: E) -> ClusterError {
    ClusterError::JetStream(e.to_string())
}

fn object_name(session: &str) -> String {
    format!("{session}/workspace.tar.gz")
}

/// What a snapshot holds: when it was taken (Unix ms) and its files' total size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub taken_at: i64,
    pub bytes: u64,
}

/// The total size of the regular files under `dir`, stopping once it passes `limit`.
fn weight(dir: &Path, limit: u64) -> std::io::Result<u64> {
    let mut total = 0u64;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                pending.push(entry.path());
            } else if kind.is_file() {
                total += entry.metadata()?.len();
                if total > limit {
                    return Ok(total);
                }
            }
        }
    }
    Ok(total)
}

/// `dir` as a gzipped tar (symbolic links kept as links), unless its files weigh over
/// `limit`: then `None`.
fn pack(dir: &Path, limit: u64) -> std::io::Result<Option<(Vec<u8>, u64)>> {
    let bytes = weight(dir, limit)?;
    if bytes > limit {
        return Ok(None);
    }
    let encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(encoder);
    builder.follow_symlinks(false);
    builder.append_dir_all(".", dir)?;
    let packed = builder.into_inner()?.finish()?;
    Ok(Some((packed, bytes)))
}

/// Unpacks a gzipped tar into `dir` (entries reaching outside it are skipped).
fn unpack(packed: &[u8], dir: &Path) -> std::io::Result<()> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(packed));
    archive.set_preserve_permissions(true);
    archive.unpack(dir)
}

impl Engine {
    /// Stores `cwd` as `session`'s workspace snapshot, replacing the one before, unless its
    /// files weigh over `limit` bytes (then nothing is stored: `None`).
    pub async fn snapshot_workspace(
        &self,
        session: &str,
        cwd: &Path,
        limit: u64,
    ) -> Result<Option<Snapshot>, ClusterError> {
        let dir = cwd.to_path_buf();
        let packed = tokio::task::spawn_blocking(move || pack(&dir, limit))
            .await
            .map_err(js)?
            .map_err(|e| ClusterError::JetStream(format!("cannot pack {}: {e}", cwd.display())))?;
        let Some((packed, bytes)) = packed else {
            return Ok(None);
        };
        let taken_at = pi_ai::now_ms();
        let meta = ObjectMetadata {
            name: object_name(session),
            description: Some(format!("the workspace of session {session}")),
            metadata: HashMap::from([
                ("takenAt".to_owned(), taken_at.to_string()),
                ("bytes".to_owned(), bytes.to_string()),
            ]),
            ..Default::default()
        };
        self.blobs
            .put(meta, &mut Cursor::new(packed))
            .await
            .map_err(js)?;
        Ok(Some(Snapshot { taken_at, bytes }))
    }

    /// Unpacks `session`'s last workspace snapshot into `cwd`; `None` when it has none.
    pub async fn restore_workspace(
        &self,
        session: &str,
        cwd: &Path,
    ) -> Result<Option<Snapshot>, ClusterError> {
        let mut object = match self.blobs.get(object_name(session)).await {
            Ok(object) => object,
            Err(e) if e.kind() == GetErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(js(e)),
        };
        let number = |key: &str| object.info.metadata.get(key).and_then(|v| v.parse().ok());
        let snapshot = Snapshot {
            taken_at: number("takenAt").unwrap_or_default(),
            bytes: number("bytes").map_or(0, |b: i64| b.unsigned_abs()),
        };
        let mut packed = Vec::new();
        object.read_to_end(&mut packed).await.map_err(js)?;
        let dir = cwd.to_path_buf();
        tokio::task::spawn_blocking(move || unpack(&packed, &dir))
            .await
            .map_err(js)?
            .map_err(|e| {
                ClusterError::JetStream(format!("cannot unpack into {}: {e}", cwd.display()))
            })?;
        Ok(Some(snapshot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_folder_unpacks_the_same_and_a_heavy_one_is_not_packed() {
        let from = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(from.path().join("src/deep")).unwrap();
        std::fs::write(from.path().join("notes.txt"), "hello\n").unwrap();
        std::fs::write(from.path().join("src/deep/main.rs"), "fn main() {}\n").unwrap();
        std::os::unix::fs::symlink("notes.txt", from.path().join("link")).unwrap();
        let (packed, bytes) = pack(from.path(), 1024).unwrap().unwrap();
        assert_eq!(bytes, 19);
        let to = tempfile::tempdir().unwrap();
        unpack(&packed, to.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(to.path().join("notes.txt")).unwrap(),
            "hello\n"
        );
        assert_eq!(
            std::fs::read_to_string(to.path().join("src/deep/main.rs")).unwrap(),
            "fn main() {}\n"
        );
        assert_eq!(
            std::fs::read_link(to.path().join("link")).unwrap(),
            Path::new("notes.txt")
        );
        assert!(pack(from.path(), 10).unwrap().is_none());
    }
}
