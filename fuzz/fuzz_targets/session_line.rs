//! One session-file line through both readers: the fast one (`parse_entry_line`, for lines
//! that start with `type`) and the general one (`parse_line`). Properties: when the fast
//! reader takes a line, the general reader reads the same entry from it without a warning,
//! and every entry or header written back as a line reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_coding_agent::session::entry::{FileLine, parse_line};
use pi_coding_agent::session::entry_line::parse_entry_line;

fn check_line(line: &str) {
    let fast = parse_entry_line(line);
    let general = parse_line(line, 1);
    if let Some(entry) = &fast {
        match &general {
            Ok((Some(FileLine::Entry(read)), None)) => {
                assert_eq!(entry, read, "the two readers differ on {line}")
            }
            other => panic!("the fast reader took {line}, the general one gave {other:?}"),
        }
    }
    let written = match &general {
        Ok((Some(FileLine::Entry(entry)), _)) => entry.to_line(),
        Ok((Some(FileLine::Header(header)), _)) => serde_json::to_string(header),
        _ => return,
    };
    let Ok(written) = written else {
        panic!("a line read did not write back: {line}")
    };
    let again = parse_line(&written, 1);
    match (&general, &again) {
        (Ok((Some(first), _)), Ok((Some(second), _))) => {
            assert_eq!(
                first, second,
                "{line} wrote back as {written}, read differently"
            )
        }
        _ => panic!("{line} wrote back as {written}, which reads as {again:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.split('\n') {
        check_line(line);
    }
});
