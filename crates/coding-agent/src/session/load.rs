//! Reading a current-version session file line by line: the file is never held whole, each
//! entry line is read once (the fast reader, else the general one), short texts stay in
//! their JSON form until something reads them and long ones stay in the file (read back by
//! position when needed).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use pi_ai::types::{FileSource, TextSource, reading_from};

use super::entry::{
    CURRENT_SESSION_VERSION, FileLine, LineError, SessionEntry, SessionHeader, parse_line,
};
use super::entry_line::parse_entry_line;

/// A session file's header, entries and the problems found in its lines.
#[derive(Debug)]
pub struct LoadedSession {
    pub header: SessionHeader,
    pub entries: Vec<SessionEntry>,
    pub warnings: Vec<LineError>,
}

/// Reads `path` when it starts with a header of the current version; `Ok(None)` when it
/// does not (an older version to migrate, or no header), for the caller's general path.
pub fn load_current(path: &Path) -> std::io::Result<Option<LoadedSession>> {
    let file = File::open(path)?;
    let source: Arc<dyn TextSource> = Arc::new(FileSource::open(path)?);
    let mut reader = BufReader::with_capacity(1 << 18, file);
    let mut buffer = Vec::new();
    let mut number = 0;
    let mut offset = 0u64;
    let header = loop {
        buffer.clear();
        let read = reader.read_until(b'\n', &mut buffer)?;
        if read == 0 {
            return Ok(None);
        }
        offset += read as u64;
        number += 1;
        let Ok(text) = std::str::from_utf8(&buffer) else {
            return Ok(None);
        };
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<SessionHeader>(text) {
            Ok(header)
                if header.kind == "session"
                    && header.version.unwrap_or(1) >= CURRENT_SESSION_VERSION =>
            {
                break header;
            }
            _ => return Ok(None),
        }
    };
    let (mut entries, warnings) = read_entries(&mut reader, number, offset, &source)?;
    entries.shrink_to_fit();
    Ok(Some(LoadedSession {
        header,
        entries,
        warnings,
    }))
}

/// Lines are parsed in batches of about this many bytes, on as many threads as there are
/// cores (at most [`MAX_PARSERS`]).
const BATCH_BYTES: usize = 1 << 21;
const MAX_PARSERS: usize = 4;

/// Whole lines read straight from the file, and where in the file they begin.
struct Batch {
    index: usize,
    offset: u64,
    bytes: Vec<u8>,
}

/// The entries and warnings of one batch (warnings numbered from the batch's first line),
/// how many lines it held, and its buffer for the next batch.
struct Parsed {
    index: usize,
    lines: usize,
    entries: Vec<SessionEntry>,
    warnings: Vec<LineError>,
    bytes: Vec<u8>,
}

/// Reads the entry lines after the header (line `number`, ending at byte `offset` of
/// `source`), in file order. The reading thread only reads and cuts at line ends; the
/// parsers find the lines.
fn read_entries(
    reader: &mut impl Read,
    number: usize,
    mut offset: u64,
    source: &Arc<dyn TextSource>,
) -> std::io::Result<(Vec<SessionEntry>, Vec<LineError>)> {
    let parsers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_PARSERS);
    let (sender, receiver) = std::sync::mpsc::sync_channel::<Batch>(parsers * 2);
    let receiver = std::sync::Mutex::new(receiver);
    let (parsed_sender, parsed) = std::sync::mpsc::channel::<Parsed>();
    std::thread::scope(|scope| {
        for _ in 0..parsers {
            let parsed_sender = parsed_sender.clone();
            let receiver = &receiver;
            scope.spawn(move || {
                loop {
                    let next = match receiver.lock() {
                        Ok(receiver) => receiver.recv(),
                        Err(_) => break,
                    };
                    let Ok(batch) = next else { break };
                    if parsed_sender.send(parse_batch(batch, source)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(parsed_sender);
        // Parsed batches join the entries as soon as they are next in file order, so the
        // batches' own lists are freed and their buffers read into again.
        let mut assembly = Assembly {
            line: number,
            ..Assembly::default()
        };
        let mut read = Ok(());
        let mut carry: Vec<u8> = Vec::new();
        let mut index = 0;
        loop {
            let mut bytes = assembly
                .spare
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(BATCH_BYTES + (1 << 16)));
            bytes.clear();
            bytes.append(&mut carry);
            let mut end_of_file = false;
            // Fill the batch, and on past its size until a line ends (a very long line).
            loop {
                let want = BATCH_BYTES.saturating_sub(bytes.len()).max(1 << 16) as u64;
                match (&mut *reader).take(want).read_to_end(&mut bytes) {
                    Ok(n) if (n as u64) < want => end_of_file = true,
                    Ok(_) => {}
                    Err(e) => {
                        read = Err(e);
                        break;
                    }
                }
                if end_of_file || (bytes.len() >= BATCH_BYTES && bytes.contains(&b'\n')) {
                    break;
                }
            }
            if read.is_err() {
                break;
            }
            if !end_of_file && let Some(last) = memchr::memrchr(b'\n', &bytes) {
                carry.extend_from_slice(&bytes[last + 1..]);
                bytes.truncate(last + 1);
            }
            if bytes.is_empty() {
                break;
            }
            let batch_offset = offset;
            offset += bytes.len() as u64;
            if sender
                .send(Batch {
                    index,
                    offset: batch_offset,
                    bytes,
                })
                .is_err()
            {
                break;
            }
            index += 1;
            while let Ok(batch) = parsed.try_recv() {
                assembly.add(batch);
            }
            if end_of_file {
                break;
            }
        }
        drop(sender);
        for batch in parsed {
            assembly.add(batch);
        }
        read?;
        let Assembly {
            mut entries,
            mut warnings,
            waiting,
            ..
        } = assembly;
        // Only a batch lost to a failed parser leaves others waiting; keep what there is.
        for batch in waiting.into_values() {
            entries.extend(batch.entries);
            warnings.extend(batch.warnings);
        }
        Ok((entries, warnings))
    })
}

/// The entries so far in file order, the batches parsed ahead of their turn, the number
/// of the last line joined, and buffers to read the next batches into.
#[derive(Default)]
struct Assembly {
    next: usize,
    line: usize,
    waiting: std::collections::BTreeMap<usize, Parsed>,
    entries: Vec<SessionEntry>,
    warnings: Vec<LineError>,
    spare: Vec<Vec<u8>>,
}

impl Assembly {
    fn add(&mut self, batch: Parsed) {
        self.waiting.insert(batch.index, batch);
        while let Some(batch) = self.waiting.remove(&self.next) {
            self.entries.extend(batch.entries);
            let first = self.line;
            self.warnings
                .extend(batch.warnings.into_iter().map(|mut w| {
                    w.line += first;
                    w
                }));
            self.line += batch.lines;
            self.spare.push(batch.bytes);
            self.next += 1;
        }
    }
}

fn parse_batch(batch: Batch, source: &Arc<dyn TextSource>) -> Parsed {
    let mut parsed = reading_from(source, &batch.bytes, batch.offset, || parse_lines(&batch));
    parsed.bytes = batch.bytes;
    parsed
}

/// Entry point for the fuzz targets (`fuzz/`), not an API: the entry lines `bytes` (whole
/// lines after the header, starting at byte `offset` of `source`) parsed as
/// [`load_current`] parses each batch it reads.
#[doc(hidden)]
pub fn parse_entry_lines(
    bytes: Vec<u8>,
    offset: u64,
    source: &Arc<dyn TextSource>,
) -> (Vec<SessionEntry>, Vec<LineError>) {
    let batch = Batch {
        index: 0,
        offset,
        bytes,
    };
    let parsed = parse_batch(batch, source);
    (parsed.entries, parsed.warnings)
}

/// Parses a batch's lines; warnings carry line numbers counted from the batch's start.
fn parse_lines(batch: &Batch) -> Parsed {
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    let mut lines = 0;
    let bytes = &batch.bytes;
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |n| start + n + 1);
        let line = &bytes[start..end];
        start = end;
        lines += 1;
        let number = lines;
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(e) => {
                warnings.push(LineError {
                    line: number,
                    reason: format!("not UTF-8: {e}"),
                });
                continue;
            }
        };
        if text.trim().is_empty() {
            continue;
        }
        if let Some(entry) = parse_entry_line(text) {
            entries.push(entry);
            continue;
        }
        match parse_line(text, number) {
            Ok((Some(FileLine::Entry(entry)), warning)) => {
                warnings.extend(warning);
                entries.push(entry);
            }
            Ok(_) => {}
            Err(e) => warnings.push(e),
        }
    }
    Parsed {
        index: batch.index,
        lines,
        entries,
        warnings,
        bytes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_keep_file_order_and_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut text = String::from(
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
        );
        let filler = "x".repeat(4000);
        let mut parent = "null".to_owned();
        for i in 0..3000 {
            if i == 1500 {
                text.push_str("{broken\n");
            }
            text.push_str(&format!(
                "{{\"type\":\"custom\",\"customType\":\"c\",\"data\":\"{filler}\",\"id\":\"e{i}\",\"parentId\":{parent},\"timestamp\":\"t\"}}\n"
            ));
            parent = format!("\"e{i}\"");
        }
        std::fs::write(&path, text).unwrap();
        let loaded = load_current(&path).unwrap().unwrap();
        let ids: Vec<String> = loaded.entries.iter().map(|e| e.id.clone()).collect();
        let expected: Vec<String> = (0..3000).map(|i| format!("e{i}")).collect();
        assert_eq!(ids, expected);
        assert_eq!(loaded.warnings.len(), 1);
        assert_eq!(loaded.warnings[0].line, 1502);
    }

    #[test]
    fn a_line_longer_than_a_batch_and_no_final_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut text = String::from(
            "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
        );
        let entry = |i: usize, data: &str| {
            format!(
                "{{\"type\":\"custom\",\"customType\":\"c\",\"data\":\"{data}\",\"id\":\"e{i}\",\"parentId\":null,\"timestamp\":\"t\"}}"
            )
        };
        text.push_str(&(entry(0, "a") + "\n"));
        text.push_str(&(entry(1, &"y".repeat(3 * BATCH_BYTES)) + "\n"));
        text.push_str("{broken\n");
        text.push_str(&entry(2, "last"));
        std::fs::write(&path, &text).unwrap();
        let loaded = load_current(&path).unwrap().unwrap();
        let ids: Vec<&str> = loaded.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["e0", "e1", "e2"]);
        assert_eq!(loaded.warnings.len(), 1);
        assert_eq!(loaded.warnings[0].line, 4);
    }
}
