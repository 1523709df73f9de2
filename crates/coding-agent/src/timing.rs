//! `PI_TIMING=1`: the time since start at named points of a run, on stderr, to see where a
//! slow start or turn spends its time (the benchmarks under bench/ use it).

use std::sync::OnceLock;
use std::time::Instant;

static START: OnceLock<Option<Instant>> = OnceLock::new();

/// Starts the clock (the first call wins); does nothing unless `PI_TIMING` is set.
pub fn start() {
    START.get_or_init(|| std::env::var_os("PI_TIMING").map(|_| Instant::now()));
}

/// Prints `label` with the milliseconds since [`start`] and the resident memory, when
/// timing is on.
pub fn mark(label: &str) {
    if let Some(Some(start)) = START.get() {
        eprintln!(
            "[timing] {:>8.1} ms {:>6} MiB  {label}",
            start.elapsed().as_secs_f64() * 1000.0,
            resident_mib().map_or_else(|| "?".to_owned(), |m| m.to_string())
        );
    }
}

/// The resident set size in MiB (Linux).
fn resident_mib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096 / (1024 * 1024))
}
