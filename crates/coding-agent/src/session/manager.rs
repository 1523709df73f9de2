//! A session: its file, its entry tree, the current leaf, and the writes.
//!
//! Nothing is written until the session holds an assistant message; then the header and
//! every entry are flushed, and each new entry is appended as one line. Loaded files are
//! never rewritten, except once after a version migration.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use pi_agent_core::AgentMessage;

use super::context::{
    BranchSettings, SessionContext, branch_settings, context_along, parent_index,
};
use super::entry::{
    CURRENT_SESSION_VERSION, EntryKind, FileLine, LineError, SessionEntry, SessionHeader,
    parse_json_object, parse_object,
};
use super::ids::{session_id, short_id};
use super::linear::LinearPrefix;
use super::load::{LoadedSession, load_current};
use super::migrate::migrate;
use super::time::iso_now;

mod branched;
mod restored;

/// Why a session could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("could not read session file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not write session file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not encode a session entry: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("entry {0} not found")]
    UnknownEntry(String),
    #[error("Session file is not a valid pi session: {}", .0.display())]
    NotASession(PathBuf),
}

/// `<agent dir>/sessions/--<cwd with / \ : replaced by ->--`.
pub fn default_session_dir(agent_dir: &Path, cwd: &Path) -> PathBuf {
    let text = cwd.to_string_lossy();
    let trimmed = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    let safe: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    agent_dir.join("sessions").join(format!("--{safe}--"))
}

/// A session held in memory and (unless ephemeral) in its JSONL file.
#[derive(Debug)]
pub struct SessionManager {
    header: SessionHeader,
    file: Option<PathBuf>,
    entries: Vec<SessionEntry>,
    by_id: HashMap<String, usize>,
    /// How far the entries form one chain from the root (walks back stop there).
    linear: LinearPrefix,
    leaf: Option<String>,
    flushed: bool,
    /// The file was there before this manager: its last line may lack its newline (a
    /// crash mid-write, another program), which the next append must not run into.
    tail_unchecked: bool,
    warnings: Vec<LineError>,
    /// Sees every line written to the file.
    sink: Option<super::line_sink::LineSink>,
}

/// A `compaction` entry to append: the summary and what it replaces, its file lists, what
/// the summary calls cost, who made it and the system state it starts from.
#[derive(Debug, Clone, Default)]
pub struct NewCompaction<'a> {
    pub summary: &'a str,
    pub first_kept_entry_id: &'a str,
    pub tokens_before: u64,
    pub details: Option<Value>,
    pub usage: Option<Value>,
    pub from_hook: Option<bool>,
    pub system_message: Option<Value>,
}

impl SessionManager {
    fn fresh(cwd: &Path, file: Option<PathBuf>, parent: Option<String>) -> Self {
        let header = SessionHeader {
            kind: "session".into(),
            version: Some(CURRENT_SESSION_VERSION),
            id: session_id(),
            timestamp: iso_now(),
            cwd: cwd.to_string_lossy().into_owned(),
            parent_session: parent,
        };
        Self {
            header,
            file,
            entries: Vec::new(),
            by_id: HashMap::new(),
            linear: LinearPrefix::default(),
            leaf: None,
            flushed: false,
            tail_unchecked: false,
            warnings: Vec::new(),
            sink: None,
        }
    }

    /// A new session whose file will be `<dir>/<timestamp>_<id>.jsonl`.
    pub fn create(cwd: &Path, dir: &Path) -> Self {
        let mut session = Self::fresh(cwd, None, None);
        let stamp = session.header.timestamp.replace([':', '.'], "-");
        session.file = Some(dir.join(format!("{stamp}_{}.jsonl", session.header.id)));
        session
    }

    /// A session kept in memory only (`--no-session`).
    pub fn in_memory(cwd: &Path) -> Self {
        Self::fresh(cwd, None, None)
    }

    /// Gives a session that has not been written yet the id `id` (`--session-id`): its
    /// header and, for a file session, the file name `<timestamp>_<id>.jsonl`.
    pub fn with_id(mut self, id: &str) -> Self {
        self.header.id = id.to_owned();
        if let Some(file) = &self.file
            && !self.flushed
        {
            let stamp = self.header.timestamp.replace([':', '.'], "-");
            self.file = Some(file.with_file_name(format!("{stamp}_{id}.jsonl")));
        }
        self
    }

    /// Opens `path`; a missing file starts a new session there. Malformed lines are
    /// reported in [`Self::warnings`] and skipped; the file keeps them.
    pub fn open(path: &Path, cwd: &Path) -> Result<Self, SessionError> {
        match load_current(path) {
            Ok(Some(loaded)) => Ok(Self::loaded(path, loaded)),
            Ok(None) => Self::open_general(path, cwd),
            Err(e) => Self::unreadable(path, cwd, e),
        }
    }

    /// A missing file starts a new session there; any other read error is the caller's.
    fn unreadable(path: &Path, cwd: &Path, error: std::io::Error) -> Result<Self, SessionError> {
        if error.kind() == std::io::ErrorKind::NotFound {
            return Ok(Self::fresh(cwd, Some(path.to_path_buf()), None));
        }
        Err(SessionError::Read {
            path: path.to_path_buf(),
            source: error,
        })
    }

    /// A session from a file read by [`load_current`].
    fn loaded(path: &Path, loaded: LoadedSession) -> Self {
        let LoadedSession {
            header,
            entries,
            warnings,
        } = loaded;
        let by_id = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.clone(), i))
            .collect();
        let leaf = entries.last().map(|e| e.id.clone());
        Self {
            header,
            file: Some(path.to_path_buf()),
            entries,
            by_id,
            linear: LinearPrefix::default(),
            leaf,
            flushed: true,
            tail_unchecked: true,
            warnings,
            sink: None,
        }
    }

    /// Opens a file of an older version (migrated, then rewritten once) or without a valid
    /// header (a new session beside it), reading it whole.
    fn open_general(path: &Path, cwd: &Path) -> Result<Self, SessionError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => return Self::unreadable(path, cwd, e),
        };
        let mut warnings = Vec::new();
        let mut objects: Vec<(usize, Map<String, Value>)> = Vec::new();
        for (index, line) in text.split('\n').enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match parse_json_object(line) {
                Ok(object) => objects.push((index + 1, object)),
                Err(e) => warnings.push(LineError {
                    line: index + 1,
                    reason: format!("not a JSON object: {e}"),
                }),
            }
        }
        let header_ok = objects.first().is_some_and(|(_, o)| {
            o.get("type").and_then(Value::as_str) == Some("session")
                && o.get("id").is_some_and(Value::is_string)
        });
        if !header_ok {
            // An empty file becomes a new session there; anything else that is not a pi
            // session is refused and left as it is (pi 0.80.3).
            if text.is_empty() {
                return Ok(Self::fresh(cwd, Some(path.to_path_buf()), None));
            }
            return Err(SessionError::NotASession(path.to_path_buf()));
        }
        let mut maps: Vec<Map<String, Value>> = objects.iter().map(|(_, o)| o.clone()).collect();
        let migrated = migrate(&mut maps);
        let lines = objects
            .iter()
            .map(|(line, _)| *line)
            .zip(maps.iter().cloned());
        let (header, entries) = parse_lines(lines, &mut warnings);
        let Some(header) = header else {
            return Err(SessionError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::other("missing session header"),
            });
        };
        let mut session = Self::loaded(
            path,
            LoadedSession {
                header,
                entries,
                warnings,
            },
        );
        if migrated {
            session.rewrite_after_migration(&maps, &text)?;
        }
        Ok(session)
    }

    /// The newest `*.jsonl` (by modification time) with a valid header in `dir`, opened;
    /// or a new session when there is none.
    pub fn continue_recent(cwd: &Path, dir: &Path) -> Result<Self, SessionError> {
        Self::continue_recent_in(cwd, dir, false)
    }

    /// [`Self::continue_recent`]; with `only_cwd` (a custom session dir that several
    /// folders share) the newest session whose header names `cwd`.
    pub fn continue_recent_in(
        cwd: &Path,
        dir: &Path,
        only_cwd: bool,
    ) -> Result<Self, SessionError> {
        match super::discover::find_most_recent_in(dir, only_cwd.then_some(cwd)) {
            Some(path) => Self::open(&path, cwd),
            None => Ok(Self::create(cwd, dir)),
        }
    }

    /// A new session in `dir` holding a copy of `source`'s entries, its header naming the
    /// source as `parentSession`.
    pub fn fork_from(source: &Path, cwd: &Path, dir: &Path) -> Result<Self, SessionError> {
        Self::fork_from_as(source, cwd, dir, None)
    }

    /// [`Self::fork_from`], the new session taking the id `id` when given.
    pub fn fork_from_as(
        source: &Path,
        cwd: &Path,
        dir: &Path,
        id: Option<&str>,
    ) -> Result<Self, SessionError> {
        let original = Self::open(source, cwd)?;
        let mut fork = Self::create(cwd, dir);
        if let Some(id) = id {
            fork = fork.with_id(id);
        }
        fork.header.parent_session = Some(source.to_string_lossy().into_owned());
        fork.by_id = original.by_id;
        fork.leaf = original.leaf;
        fork.entries = original.entries;
        fork.warnings = original.warnings;
        fork.persist()?;
        Ok(fork)
    }

    fn rewrite_after_migration(
        &mut self,
        maps: &[Map<String, Value>],
        original: &str,
    ) -> Result<(), SessionError> {
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        // Lines that did not parse are kept, after the migrated ones.
        let mut text = String::new();
        for map in maps {
            text.push_str(&serde_json::to_string(map)?);
            text.push('\n');
        }
        for line in original.split('\n') {
            if !line.trim().is_empty() && parse_json_object(line).is_err() {
                text.push_str(line);
                text.push('\n');
            }
        }
        std::fs::write(&path, text).map_err(|source| SessionError::Write { path, source })
    }

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    pub fn session_id(&self) -> &str {
        &self.header.id
    }

    /// The file, unless the session is ephemeral.
    pub fn session_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    pub fn cwd(&self) -> &str {
        &self.header.cwd
    }

    /// Problems found while loading (skipped or unusable lines).
    pub fn warnings(&self) -> &[LineError] {
        &self.warnings
    }

    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    pub fn entry(&self, id: &str) -> Option<&SessionEntry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    /// The context along the current branch.
    pub fn build_context(&self) -> SessionContext {
        match &self.leaf {
            Some(_) => context_along(&self.branch_entries()),
            None => SessionContext {
                thinking_level: "off".into(),
                ..Default::default()
            },
        }
    }

    /// The model and thinking level in effect on the current branch, and whether it holds
    /// messages (what resuming needs before the context is built).
    pub fn branch_settings(&self) -> BranchSettings {
        branch_settings(&self.branch_entries())
    }

    /// Continues from `id`: the next entry becomes its child (a new branch).
    pub fn branch(&mut self, id: &str) -> Result<(), SessionError> {
        if !self.by_id.contains_key(id) {
            return Err(SessionError::UnknownEntry(id.to_owned()));
        }
        self.leaf = Some(id.to_owned());
        Ok(())
    }

    /// The children of an entry, in file order.
    pub fn children(&self, id: &str) -> Vec<&SessionEntry> {
        self.entries
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(id))
            .collect()
    }

    /// The session's name (the last `session_info` entry's).
    pub fn name(&self) -> Option<&str> {
        // The latest `session_info` entry decides, even when it clears the name (pi 1.6).
        self.entries
            .iter()
            .rev()
            .find_map(|e| match &e.kind {
                EntryKind::SessionInfo { name } => Some(name.as_deref()),
                _ => None,
            })
            .flatten()
            .map(str::trim)
            .filter(|name| !name.is_empty())
    }

    /// The label of an entry (the last label entry targeting it).
    pub fn label(&self, id: &str) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.kind {
            EntryKind::Label { target_id, label } if target_id == id => Some(label.as_deref()),
            _ => None,
        })?
    }

    /// Sends every line written from now on to `sink` too (a session not written yet sends
    /// its header and every entry at its first write).
    pub fn set_line_sink(&mut self, sink: super::line_sink::LineSink) {
        self.sink = Some(sink);
    }

    /// Appends an entry under the current leaf, persists it, and returns its id.
    pub fn append(&mut self, kind: EntryKind) -> Result<String, SessionError> {
        self.append_with(|_| kind)
    }

    /// [`Self::append`] of an entry built from its new id.
    fn append_with(
        &mut self,
        kind: impl FnOnce(&str) -> EntryKind,
    ) -> Result<String, SessionError> {
        let id = short_id(|candidate| self.by_id.contains_key(candidate));
        let previous_leaf = self.leaf.clone();
        let entry = SessionEntry {
            id: id.clone(),
            parent_id: previous_leaf.clone(),
            timestamp: iso_now(),
            kind: kind(&id),
        };
        self.by_id.insert(id.clone(), self.entries.len());
        self.entries.push(entry);
        self.leaf = Some(id.clone());
        if let Err(error) = self.persist() {
            // Memory stays in line with the file (pi 1.5): an entry that was not written
            // must not become the parent of later ones.
            self.entries.pop();
            self.by_id.remove(&id);
            self.leaf = previous_leaf;
            return Err(error);
        }
        Ok(id)
    }

    pub fn append_message(&mut self, message: AgentMessage) -> Result<String, SessionError> {
        self.append(EntryKind::Message { message })
    }

    pub fn append_model_change(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<String, SessionError> {
        self.append(EntryKind::ModelChange {
            provider: provider.into(),
            model_id: model_id.into(),
        })
    }

    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, SessionError> {
        self.append(EntryKind::ThinkingLevelChange {
            thinking_level: level.into(),
        })
    }

    /// Names the session; line breaks become one space each run and the ends are trimmed,
    /// as pi 1.6 stores names (a name is one line in every list that shows it).
    pub fn append_session_info(&mut self, name: &str) -> Result<String, SessionError> {
        let name = name
            .split(['\r', '\n'])
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        self.append(EntryKind::SessionInfo {
            name: Some(name.trim().into()),
        })
    }

    pub fn append_label(
        &mut self,
        target_id: &str,
        label: Option<&str>,
    ) -> Result<String, SessionError> {
        if !self.by_id.contains_key(target_id) {
            return Err(SessionError::UnknownEntry(target_id.to_owned()));
        }
        self.append(EntryKind::Label {
            target_id: target_id.into(),
            label: label.map(str::to_owned),
        })
    }

    /// Appends a `compaction` entry: the summary replaces what precedes `first_kept`.
    /// An empty `first_kept_entry_id` keeps nothing from before the compaction: the entry
    /// names its own id as its kept boundary (pi 0.87's retain-none compaction).
    pub fn append_compaction(&mut self, entry: NewCompaction<'_>) -> Result<String, SessionError> {
        self.append_with(|id| EntryKind::Compaction {
            summary: entry.summary.into(),
            first_kept_entry_id: if entry.first_kept_entry_id.is_empty() {
                id.to_owned()
            } else {
                entry.first_kept_entry_id.into()
            },
            tokens_before: entry.tokens_before,
            details: entry.details,
            usage: entry.usage,
            from_hook: entry.from_hook,
            system_message: entry.system_message,
        })
    }

    /// Appends a `custom_message` entry (a message an extension put into the context).
    pub fn append_custom_message(
        &mut self,
        custom_type: &str,
        content: Value,
        display: bool,
        details: Option<Value>,
    ) -> Result<String, SessionError> {
        self.append(EntryKind::CustomMessage {
            custom_type: custom_type.into(),
            content,
            details,
            display,
        })
    }

    /// Moves the leaf to `from` (the root when `None`) and appends a `branch_summary` there
    /// describing the branch that was left.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<Value>,
        usage: Option<Value>,
        from_hook: Option<bool>,
    ) -> Result<String, SessionError> {
        if let Some(id) = from
            && !self.by_id.contains_key(id)
        {
            return Err(SessionError::UnknownEntry(id.to_owned()));
        }
        // `fromId` is the leaf the navigation left (pi 1.6), `root` when there was none.
        let from_id = self.leaf.clone().unwrap_or_else(|| "root".to_owned());
        self.leaf = from.map(str::to_owned);
        self.append(EntryKind::BranchSummary {
            from_id,
            summary: summary.into(),
            details,
            usage,
            from_hook,
        })
    }

    /// Moves the leaf before the first entry: the next entry starts a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// The entries from the root to the current leaf.
    pub fn branch_entries(&self) -> Vec<&SessionEntry> {
        self.path_to(self.leaf.as_deref())
    }

    /// The entries from the root to `id`.
    pub fn path_to(&self, id: Option<&str>) -> Vec<&SessionEntry> {
        let linear = self.linear.of(&self.entries);
        let mut current = id.and_then(|id| self.by_id.get(id)).copied();
        let mut tail: Vec<&SessionEntry> = Vec::new();
        while let Some(index) = current {
            if index < linear {
                // The rest of the way is the first entries, in order.
                let mut path = Vec::with_capacity(index + 1 + tail.len());
                path.extend(&self.entries[..=index]);
                path.extend(tail.into_iter().rev());
                return path;
            }
            // A parent cycle in a damaged file must not loop forever.
            if tail.len() >= self.entries.len() {
                break;
            }
            let entry = &self.entries[index];
            tail.push(entry);
            current = entry
                .parent_id
                .as_deref()
                .and_then(|p| parent_index(&self.entries, index, p, |p| self.by_id.get(p)));
        }
        tail.reverse();
        tail
    }

    /// The entries from `id` back to the root, newest first, without collecting the path
    /// (for questions the last few entries answer). A parent cycle ends the walk.
    pub fn ancestors(&self, id: Option<&str>) -> impl Iterator<Item = &SessionEntry> {
        let mut current = id.and_then(|id| self.by_id.get(id)).copied();
        let mut remaining = self.entries.len();
        std::iter::from_fn(move || {
            let index = current.take()?;
            remaining = remaining.checked_sub(1)?;
            let entry = &self.entries[index];
            current = entry
                .parent_id
                .as_deref()
                .and_then(|p| parent_index(&self.entries, index, p, |p| self.by_id.get(p)));
            Some(entry)
        })
    }

    /// Whether entries are written to a file.
    pub fn is_persisted(&self) -> bool {
        self.file.is_some()
    }

    /// The directory new sessions of this one go to (the file's directory).
    pub fn session_dir(&self) -> Option<&Path> {
        self.file.as_deref().and_then(Path::parent)
    }

    /// Starts over in place as a new, empty session (a new id and, when persisted, a new
    /// file in the same directory), optionally naming a parent session.
    pub fn new_session(&mut self, parent_session: Option<String>) {
        let dir = self.session_dir().map(Path::to_path_buf);
        let cwd = PathBuf::from(&self.header.cwd);
        *self = match dir {
            Some(dir) => Self::create(&cwd, &dir),
            None => Self::in_memory(&cwd),
        };
        self.header.parent_session = parent_session;
    }

    /// Whether a user or assistant message is there: pi 1.6 writes the file from the first
    /// user message on, so a session is not lost when pi exits before the reply.
    fn has_conversation(&self) -> bool {
        self.entries.iter().any(|e| {
            e.message()
                .is_some_and(|m| matches!(m.role(), "user" | "assistant"))
        })
    }

    /// Writes what is due: nothing before the first user or assistant message, then
    /// everything once, then the newest entry.
    fn persist(&mut self) -> Result<(), SessionError> {
        let Some(path) = self.file.clone() else {
            return Ok(());
        };
        let write_error = |source| SessionError::Write {
            path: path.clone(),
            source,
        };
        if !self.flushed {
            if !self.has_conversation() {
                return Ok(());
            }
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(write_error)?;
            }
            let mut text = serde_json::to_string(&self.header)?;
            text.push('\n');
            for entry in &self.entries {
                text.push_str(&entry.to_line()?);
                text.push('\n');
            }
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(write_error)?;
            file.write_all(text.as_bytes()).map_err(write_error)?;
            self.flushed = true;
            if let Some(sink) = &self.sink {
                text.lines().for_each(|line| (sink.0)(line));
            }
            return Ok(());
        }
        let Some(entry) = self.entries.last() else {
            return Ok(());
        };
        let mut line = entry.to_line()?;
        line.push('\n');
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&path)
            .map_err(write_error)?;
        let mut bytes = line.clone().into_bytes();
        if std::mem::take(&mut self.tail_unchecked) && !ends_with_newline(&mut file) {
            bytes.insert(0, b'\n');
        }
        file.write_all(&bytes).map_err(write_error)?;
        if let Some(sink) = &self.sink {
            (sink.0)(line.trim_end_matches('\n'));
        }
        Ok(())
    }
}

/// Whether the file is empty or its last byte is a newline (read errors count as yes, so
/// a file that cannot be read back is not changed beyond the append itself).
fn ends_with_newline(file: &mut File) -> bool {
    use std::io::{Seek, SeekFrom};
    let mut last = [0u8; 1];
    match file.seek(SeekFrom::End(-1)) {
        Ok(_) => file.read_exact(&mut last).is_err() || last[0] == b'\n',
        Err(_) => true,
    }
}

/// The header (the first one) and the entries of a session's JSON objects, each with its
/// line number; lines that are no entries are added to `warnings`.
fn parse_lines(
    lines: impl Iterator<Item = (usize, Map<String, Value>)>,
    warnings: &mut Vec<LineError>,
) -> (Option<SessionHeader>, Vec<SessionEntry>) {
    let mut header: Option<SessionHeader> = None;
    let mut entries = Vec::new();
    for (line, object) in lines {
        match parse_object(object, line) {
            Ok((Some(FileLine::Header(h)), _)) => header = header.or(Some(h)),
            Ok((Some(FileLine::Entry(entry)), warning)) => {
                warnings.extend(warning);
                entries.push(entry);
            }
            Ok((None, _)) => {}
            Err(e) => warnings.push(e),
        }
    }
    (header, entries)
}
