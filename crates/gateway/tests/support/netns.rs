//! Three network namespaces joined by a bridge, for partition tests: namespace `i` has the
//! address `10.<net>.<i + 11>`, the bridge (this process's side) `10.<net>.1`. A partition
//! drops, with iptables inside one namespace, everything between it and the other two,
//! while the test (on the bridge) still reaches every namespace.
//! Needs root, `ip netns` and iptables; [`Net::create`] says why it skips otherwise
//! (`PI_TEST_REQUIRE_NETNS=1` makes that a failure).
#![allow(dead_code)]

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// The namespaces and their bridge, removed when dropped.
pub struct Net {
    /// A short tag naming this net's links and namespaces.
    tag: String,
    /// The third byte of the addresses (`10.231.<subnet>.x`).
    subnet: u32,
    pub names: Vec<String>,
}

fn run(args: &[&str]) -> Result<(), String> {
    let output = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Why namespaces cannot be made here, or `None` when they can.
fn missing() -> Option<String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if !root {
        return Some("not root".into());
    }
    for tool in ["ip", "iptables"] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        if !found {
            return Some(format!("{tool} is not installed"));
        }
    }
    None
}

impl Net {
    /// Three namespaces on a new bridge, or `None` (with the reason printed) when this
    /// machine cannot make them.
    pub fn create() -> Option<Net> {
        let reason = match missing() {
            None => match Self::make() {
                Ok(net) => return Some(net),
                Err(e) => e,
            },
            Some(reason) => reason,
        };
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_NETNS").is_none(),
            "network namespaces are required here but cannot be made: {reason}"
        );
        eprintln!("network namespaces cannot be made here ({reason}): skipped");
        None
    }

    fn make() -> Result<Net, String> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = std::process::id() % 10_000 * 10 + NEXT.fetch_add(1, Ordering::Relaxed) % 10;
        let mut net = Net {
            tag: format!("pt{n}"),
            subnet: n % 250 + 1,
            names: Vec::new(),
        };
        let bridge = net.bridge();
        // A bridge left by a killed earlier run of the same tag goes first.
        let _ = run(&["ip", "link", "del", &bridge]);
        run(&["ip", "link", "add", &bridge, "type", "bridge"])?;
        run(&[
            "ip",
            "addr",
            "add",
            &format!("{}/24", net.bridge_ip()),
            "dev",
            &bridge,
        ])?;
        run(&["ip", "link", "set", &bridge, "up"])?;
        for i in 0..3 {
            let name = format!("{}n{i}", net.tag);
            let _ = run(&["ip", "netns", "del", &name]);
            run(&["ip", "netns", "add", &name])?;
            net.names.push(name.clone());
            let outer = format!("{}v{i}", net.tag);
            run(&[
                "ip", "link", "add", &outer, "type", "veth", "peer", "name", "eth0", "netns", &name,
            ])?;
            run(&["ip", "link", "set", &outer, "master", &bridge])?;
            run(&["ip", "link", "set", &outer, "up"])?;
            let inside = |args: &[&str]| {
                let mut all = vec!["ip", "netns", "exec", &name];
                all.extend_from_slice(args);
                run(&all)
            };
            inside(&["ip", "link", "set", "lo", "up"])?;
            inside(&[
                "ip",
                "addr",
                "add",
                &format!("{}/24", net.ip(i)),
                "dev",
                "eth0",
            ])?;
            inside(&["ip", "link", "set", "eth0", "up"])?;
        }
        Ok(net)
    }

    fn bridge(&self) -> String {
        format!("{}br", self.tag)
    }

    /// The bridge's address: where this process is seen from the namespaces.
    pub fn bridge_ip(&self) -> String {
        format!("10.231.{}.1", self.subnet)
    }

    /// Namespace `i`'s address.
    pub fn ip(&self, i: usize) -> String {
        format!("10.231.{}.{}", self.subnet, i + 11)
    }

    /// A command running `program` inside namespace `i`.
    pub fn command(&self, i: usize, program: &std::path::Path) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.names[i]]).arg(program);
        command
    }

    /// Runs iptables with `args` inside namespace `i`.
    fn iptables(&self, i: usize, args: &[&str]) {
        let mut all = vec!["ip", "netns", "exec", &self.names[i], "iptables"];
        all.extend_from_slice(args);
        run(&all).unwrap();
    }

    /// Cuts namespace `i` off from the other two (both ways); the bridge still reaches it.
    pub fn partition(&self, i: usize) {
        for j in (0..3).filter(|j| *j != i) {
            let other = self.ip(j);
            self.iptables(i, &["-A", "INPUT", "-s", &other, "-j", "DROP"]);
            self.iptables(i, &["-A", "OUTPUT", "-d", &other, "-j", "DROP"]);
        }
    }

    /// Undoes [`Self::partition`].
    pub fn heal(&self, i: usize) {
        self.iptables(i, &["-F", "INPUT"]);
        self.iptables(i, &["-F", "OUTPUT"]);
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = run(&["ip", "netns", "del", name]);
        }
        let _ = run(&["ip", "link", "del", &self.bridge()]);
    }
}
