//! The small classic zip archives bug reports are exported as (pi 1.6's `utils/zip.ts`):
//! every entry raw-deflated (method 8), UTF-8 names (flag 0x0800), version 20, one DOS
//! time for all entries, no extra fields or comments.

use std::io::Write;

/// One file of an archive.
pub struct ZipEntry<'a> {
    pub name: &'a str,
    pub data: &'a [u8],
}

/// DOS time and date of a moment given as seconds since the epoch (UTC).
///
/// pi 1.6 takes the local time; ours takes UTC (the standard library has no time zones),
/// which is the same on machines that run in UTC.
pub fn dos_date_time(unix_seconds: i64) -> (u16, u16) {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let (year, month, day) = crate::session::time::civil_from_days(days);
    let time = ((secs / 3600) << 11) | (((secs % 3600) / 60) << 5) | ((secs % 60) >> 1);
    let date = ((year.max(1980) - 1980) << 9) | (month << 5) | day;
    (time as u16, date as u16)
}

fn deflate(data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder =
        flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(data)?;
    encoder.finish()
}

fn u16le(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn u32le(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn size32(n: usize) -> std::io::Result<u32> {
    u32::try_from(n).map_err(|_| std::io::Error::other("file too large for a zip archive"))
}

/// The archive's bytes.
pub fn create_zip(entries: &[ZipEntry<'_>], unix_seconds: i64) -> std::io::Result<Vec<u8>> {
    let (time, day) = dos_date_time(unix_seconds);
    let mut files = Vec::new();
    let mut directory = Vec::new();
    for entry in entries {
        let name = entry.name.as_bytes();
        let compressed = deflate(entry.data)?;
        let checksum = crc32fast::hash(entry.data);
        let offset = size32(files.len())?;
        let name_len = u16::try_from(name.len())
            .map_err(|_| std::io::Error::other("file name too long for a zip archive"))?;

        u32le(&mut files, 0x0403_4b50);
        u16le(&mut files, 20);
        u16le(&mut files, 0x0800);
        u16le(&mut files, 8);
        u16le(&mut files, time);
        u16le(&mut files, day);
        u32le(&mut files, checksum);
        u32le(&mut files, size32(compressed.len())?);
        u32le(&mut files, size32(entry.data.len())?);
        u16le(&mut files, name_len);
        u16le(&mut files, 0);
        files.extend_from_slice(name);
        files.extend_from_slice(&compressed);

        u32le(&mut directory, 0x0201_4b50);
        u16le(&mut directory, 20);
        u16le(&mut directory, 20);
        u16le(&mut directory, 0x0800);
        u16le(&mut directory, 8);
        u16le(&mut directory, time);
        u16le(&mut directory, day);
        u32le(&mut directory, checksum);
        u32le(&mut directory, size32(compressed.len())?);
        u32le(&mut directory, size32(entry.data.len())?);
        u16le(&mut directory, name_len);
        // Extra field and comment lengths, disk number, internal and external attributes.
        directory.extend_from_slice(&[0; 12]);
        u32le(&mut directory, offset);
        directory.extend_from_slice(name);
    }
    let count = u16::try_from(entries.len())
        .map_err(|_| std::io::Error::other("too many files for a zip archive"))?;
    let directory_offset = size32(files.len())?;
    let directory_len = size32(directory.len())?;
    let mut out = files;
    out.extend_from_slice(&directory);
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, count);
    u16le(&mut out, count);
    u32le(&mut out, directory_len);
    u32le(&mut out, directory_offset);
    u16le(&mut out, 0);
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Read;

    /// Reads back the archive through its central directory: names and contents.
    pub(crate) fn read_zip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
        let u16at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]) as usize;
        let u32at = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize
        };
        let end = bytes.len() - 22;
        assert_eq!(u32at(end), 0x0605_4b50);
        let count = u16at(end + 10);
        let mut at = u32at(end + 16);
        let mut out = Vec::new();
        for _ in 0..count {
            assert_eq!(u32at(at), 0x0201_4b50);
            assert_eq!(u16at(at + 8), 0x0800);
            assert_eq!(u16at(at + 10), 8);
            let crc = u32at(at + 16) as u32;
            let compressed = u32at(at + 20);
            let size = u32at(at + 24);
            let name_len = u16at(at + 28);
            let local = u32at(at + 42);
            let name = String::from_utf8(bytes[at + 46..at + 46 + name_len].to_vec()).unwrap();
            assert_eq!(u32at(local), 0x0403_4b50);
            let data_at = local + 30 + u16at(local + 26) + u16at(local + 28);
            let mut data = Vec::new();
            flate2::read::DeflateDecoder::new(&bytes[data_at..data_at + compressed])
                .read_to_end(&mut data)
                .unwrap();
            assert_eq!(data.len(), size);
            assert_eq!(crc32fast::hash(&data), crc);
            out.push((name, data));
            at += 46 + name_len;
        }
        out
    }

    #[test]
    fn archives_read_back_in_order() {
        let long = "héllo ".repeat(200);
        let entries = [
            ZipEntry {
                name: "report.json",
                data: b"{\n  \"a\": 1\n}\n",
            },
            ZipEntry {
                name: "notes/ü.md",
                data: long.as_bytes(),
            },
            ZipEntry {
                name: "empty",
                data: b"",
            },
        ];
        let bytes = create_zip(&entries, 1_764_577_915).unwrap();
        let read = read_zip(&bytes);
        assert_eq!(read.len(), 3);
        for (entry, (name, data)) in entries.iter().zip(&read) {
            assert_eq!(entry.name, name);
            assert_eq!(entry.data, data.as_slice());
        }
    }

    #[test]
    fn dos_times_count_from_1980() {
        // 2026-12-01T07:31:55Z
        let (time, date) = dos_date_time(1_796_110_315);
        assert_eq!(time, (7 << 11) | (31 << 5) | (55 >> 1));
        assert_eq!(date, ((2026 - 1980) << 9) | (12 << 5) | 1);
    }
}
