//! Long texts left in the file they were read from. A session file only grows, so a long
//! text read from it can be kept as where its JSON literal lies and read back when something
//! needs it: a big session then costs memory for its structure, not for all its text.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Bytes that texts can be read back from by position.
pub trait TextSource: Send + Sync {
    /// Fills `buf` with the bytes from `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// What to call the source in an error.
    fn describe(&self) -> String;
}

/// Literals shorter than this stay in memory: the record of a stored one costs about as
/// much, and reading it back costs more.
pub const STORED_MIN_BYTES: usize = 1024;

/// A file read back by position, through a window of read-ahead (texts are mostly read back
/// in file order, when a request body is written).
pub struct FileSource {
    file: File,
    path: PathBuf,
    window: Mutex<Window>,
}

#[derive(Default)]
struct Window {
    start: u64,
    bytes: Vec<u8>,
}

const WINDOW_BYTES: usize = 256 * 1024;

impl FileSource {
    /// Opens `path` for reading back; the handle stays open, so a moved or deleted file can
    /// still be read.
    pub fn open(path: &Path) -> io::Result<Self> {
        Ok(Self {
            file: File::open(path)?,
            path: path.to_path_buf(),
            window: Mutex::new(Window::default()),
        })
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_at(&self.file, buf, offset)
        }
        #[cfg(windows)]
        {
            std::os::windows::fs::FileExt::seek_read(&self.file, buf, offset)
        }
    }

    /// Reads from `offset` until `buf` is full or the file ends; the bytes read.
    fn read_up_to(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.read_at(&mut buf[filled..], offset + filled as u64) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(filled)
    }
}

impl TextSource for FileSource {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let short = || io::Error::new(io::ErrorKind::UnexpectedEof, "the file is shorter");
        if buf.len() > WINDOW_BYTES / 2 {
            return match self.read_up_to(buf, offset)? {
                n if n == buf.len() => Ok(()),
                _ => Err(short()),
            };
        }
        let mut window = self.window.lock().unwrap_or_else(|p| p.into_inner());
        let end = offset + buf.len() as u64;
        let inside = offset >= window.start && end <= window.start + window.bytes.len() as u64;
        if !inside {
            window.bytes.resize(WINDOW_BYTES, 0);
            let read = self.read_up_to(&mut window.bytes, offset)?;
            window.bytes.truncate(read);
            window.start = offset;
            if read < buf.len() {
                return Err(short());
            }
        }
        let from = (offset - window.start) as usize;
        buf.copy_from_slice(&window.bytes[from..from + buf.len()]);
        Ok(())
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// Where the JSON being read lies in a source: texts read from `bytes` (which start at
/// `offset` of the source) may be stored.
struct Region {
    source: Arc<dyn TextSource>,
    start: usize,
    len: usize,
    offset: u64,
}

thread_local! {
    static REGION: RefCell<Option<Region>> = const { RefCell::new(None) };
    /// Bytes of stored literals left out while a body is measured.
    static MEASURING: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Runs `write` (which serializes only to count the bytes written) with stored texts
/// written as `""` instead of being read back; returns what `write` returns and the bytes
/// left out.
pub fn measuring<R>(write: impl FnOnce() -> R) -> (R, usize) {
    struct Restore(Option<usize>);
    impl Drop for Restore {
        fn drop(&mut self) {
            MEASURING.with(|m| m.set(self.0));
        }
    }
    let restore = Restore(MEASURING.with(|m| m.replace(Some(0))));
    let result = write();
    let left_out = MEASURING.with(|m| m.get()).unwrap_or(0);
    drop(restore);
    (result, left_out)
}

/// While measuring, counts a literal of `len` bytes written as `""`; false otherwise.
pub(crate) fn measure_left_out(len: usize) -> bool {
    MEASURING.with(|m| match m.get() {
        Some(total) => {
            m.set(Some(total + len.saturating_sub(2)));
            true
        }
        None => false,
    })
}

/// Runs `read` (which deserializes from `bytes`, borrowing) with long texts read from
/// `bytes` stored as positions in `source`, where `bytes` begin at `offset`.
pub fn reading_from<R>(
    source: &Arc<dyn TextSource>,
    bytes: &[u8],
    offset: u64,
    read: impl FnOnce() -> R,
) -> R {
    struct Restore(Option<Region>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            REGION.with(|region| *region.borrow_mut() = previous);
        }
    }
    let previous = REGION.with(|region| {
        region.borrow_mut().replace(Region {
            source: source.clone(),
            start: bytes.as_ptr() as usize,
            len: bytes.len(),
            offset,
        })
    });
    let _restore = Restore(previous);
    read()
}

/// A JSON string literal kept in its source.
#[derive(Clone)]
pub(crate) struct StoredText {
    source: Arc<dyn TextSource>,
    offset: u64,
    len: usize,
    /// No escapes: the text is the literal without its quotes.
    plain: bool,
    /// `trim().is_empty()`, when the literal told it without decoding.
    blank: Option<bool>,
    /// The literal's first and last eight bytes, checked when it is read back: a file
    /// rewritten in place is noticed instead of sending whatever now lies there.
    ends: [u64; 2],
    decoded: OnceLock<String>,
}

fn ends_of(literal: &[u8]) -> [u64; 2] {
    let word = |bytes: &[u8]| {
        let mut word = [0; 8];
        word.copy_from_slice(&bytes[..8]);
        u64::from_ne_bytes(word)
    };
    [word(literal), word(&literal[literal.len() - 8..])]
}

impl StoredText {
    /// `literal` (borrowed from the JSON being read) as a stored text, when it is long and
    /// lies in the region being read.
    pub(crate) fn of(literal: &str) -> Option<Self> {
        if literal.len() < STORED_MIN_BYTES {
            return None;
        }
        REGION.with(|region| {
            let region = region.borrow();
            let region = region.as_ref()?;
            let at = (literal.as_ptr() as usize).checked_sub(region.start)?;
            if at + literal.len() > region.len {
                return None;
            }
            Some(Self {
                source: region.source.clone(),
                offset: region.offset + at as u64,
                len: literal.len(),
                plain: !literal.contains('\\'),
                blank: super::shared_str::raw_is_blank(literal),
                ends: ends_of(literal.as_bytes()),
                decoded: OnceLock::new(),
            })
        })
    }

    /// The literal, read back and checked to still be a string literal.
    pub(crate) fn literal(&self) -> Result<String, String> {
        let mut bytes = vec![0; self.len];
        let fail = |why: &dyn std::fmt::Display| {
            format!(
                "a text of session file {} could not be read back: {why}",
                self.source.describe()
            )
        };
        self.source
            .read_exact_at(&mut bytes, self.offset)
            .map_err(|e| fail(&e))?;
        if ends_of(&bytes) != self.ends {
            return Err(fail(&"the file changed"));
        }
        String::from_utf8(bytes).map_err(|e| fail(&e))
    }

    /// The text, read back and decoded on first use; a text that cannot be read back reads
    /// as a note saying so.
    pub(crate) fn text(&self) -> &str {
        self.decoded.get_or_init(|| match self.literal() {
            Ok(literal) if self.plain => literal[1..literal.len() - 1].to_owned(),
            Ok(literal) => super::shared_str::decode(&literal),
            Err(why) => format!("[{why}]"),
        })
    }

    /// The text if it was read already.
    pub(crate) fn decoded(&self) -> Option<&String> {
        self.decoded.get()
    }

    pub(crate) fn take_decoded(&mut self) -> Option<String> {
        self.decoded.take()
    }

    pub(crate) fn literal_len(&self) -> usize {
        self.len
    }

    pub(crate) fn plain(&self) -> bool {
        self.plain
    }

    pub(crate) fn blank(&self) -> Option<bool> {
        self.blank
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::SharedStr;
    use std::io::Write;

    /// A file of JSON lines and the texts read from it with the region set.
    fn read_lines(path: &Path) -> Vec<SharedStr> {
        let bytes = std::fs::read(path).unwrap();
        let source: Arc<dyn TextSource> = Arc::new(FileSource::open(path).unwrap());
        reading_from(&source, &bytes, 0, || {
            std::str::from_utf8(&bytes)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str::<SharedStr>(line).unwrap())
                .collect()
        })
    }

    #[test]
    fn long_texts_are_read_back_from_their_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let long = "é".repeat(3000);
        let escaped = format!("{}\n\"quoted\"", "x".repeat(2000));
        let mut text = String::new();
        for t in ["short", long.as_str(), escaped.as_str(), &" ".repeat(1500)] {
            text.push_str(&serde_json::to_string(t).unwrap());
            text.push('\n');
        }
        std::fs::write(&path, &text).unwrap();
        let texts = read_lines(&path);
        assert!(texts[0].raw_json().is_some(), "short texts stay in memory");
        assert!(texts[1].raw_json().is_none() && !texts[1].is_empty());
        assert!(texts[1] != "é", "ruled out by length");
        assert!(texts[3].is_blank() && !texts[1].is_blank());
        assert_eq!(texts[1], long.as_str());
        assert_eq!(texts[2].as_str(), escaped);
        assert_eq!(
            serde_json::to_string(&texts[2]).unwrap(),
            serde_json::to_string(&escaped).unwrap()
        );
        // Serializing a text not yet read copies its literal from the file.
        assert_eq!(
            serde_json::to_string(&texts[3]).unwrap(),
            serde_json::to_string(&" ".repeat(1500)).unwrap()
        );
        let mut changed = texts[1].clone();
        changed.push_str("!");
        assert_eq!(changed.as_str(), format!("{long}!"));
        assert_eq!(texts[1], long.as_str());
    }

    #[test]
    fn a_measured_body_counts_stored_texts_without_reading_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let lines = [
            serde_json::to_string(&"a\tb".repeat(700)).unwrap(),
            serde_json::to_string(&"c".repeat(1200)).unwrap(),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let texts = read_lines(&path);
        let (measured, left_out) = measuring(|| serde_json::to_string(&texts).unwrap());
        assert_eq!(measured, r#"["",""]"#);
        let written = serde_json::to_string(&texts).unwrap();
        assert_eq!(measured.len() + left_out, written.len());
        assert_eq!(written, format!("[{}]", lines.join(",")));
        assert!(texts.iter().all(|t| t.raw_json().is_none()));
    }

    #[test]
    fn outside_the_region_texts_are_kept_in_memory() {
        let long = serde_json::to_string(&"y".repeat(5000)).unwrap();
        let text: SharedStr = serde_json::from_str(&long).unwrap();
        assert_eq!(text.raw_json(), Some(long.as_str()));
        let owned: SharedStr = serde_json::from_reader(long.as_bytes()).unwrap();
        assert_eq!(owned.raw_json(), Some(long.as_str()));
    }

    #[test]
    fn a_changed_or_cut_file_reads_as_a_note_and_fails_a_body() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let line = serde_json::to_string(&"z".repeat(4000)).unwrap();
        std::fs::write(&path, format!("{line}\n{line}\n")).unwrap();
        let texts = read_lines(&path);
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all(b"{\"replaced\":").unwrap();
        file.set_len(line.len() as u64 + 10).unwrap();
        let error = serde_json::to_string(&texts[0]).unwrap_err().to_string();
        assert!(error.contains("could not be read back"), "{error}");
        assert!(texts[0].as_str().contains("the file changed"));
        assert!(texts[1].as_str().contains("could not be read back"));
    }
}
