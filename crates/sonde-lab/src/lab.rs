//! [`Lab`]: a scenario's topology brought up in network namespaces, its link impairments
//! applied, and everything removed again when the value is dropped.
//!
//! Building is a fixed sequence of steps (probe the kernel, plan, namespaces, sysctls, veth
//! pairs, offloads, addresses, neighbours, routes, per-family route MTUs, qdiscs, forwarders). Every namespace is
//! recorded in the `Lab` the moment it exists, and the `Lab` value exists before the first
//! one is made, so a step that fails (or a panic) drops the `Lab` and removes exactly what was
//! made, never a namespace that was there before. Deleting a namespace kills whatever the lab
//! started in it and removes its interfaces with it, so teardown is: stop the forwarders,
//! delete the namespaces. A caller that handles Ctrl-C (the `sonde lab` runner) only has to
//! make sure the `Lab` is dropped; after a `kill -9`, [`crate::clean_leftovers`] finds what is
//! left by its prefix.
//!
//! Neighbour entries are static (each end knows its peer's MAC address, which the lab sets),
//! so no ARP or neighbour discovery crosses an impaired link: a 30 % loss link cannot make a
//! test fail on address resolution, and the random stream of a loss stage sees only the
//! test's own frames, in the same order on every run. For the same reason the impairment
//! boxes drop IPv6 multicast listener reports before the seeded stages (see
//! [`crate::forward::filter`]); where `nft` is installed, a rule in each node also keeps them
//! off the links (`QUIET_RULES`), and where it is not the lab says so in [`Lab::notes`].
//!
//! The lab needs only iproute2 (`ip`, `tc`): sysctls are written through `/proc/sys` inside
//! each namespace, and offloads are switched with the ethtool ioctl ([`crate::offload`]):
//! segmentation (TSO, GSO) and GRO are off on every lab interface, so interface counters
//! count the frames that crossed a link, and transmit checksumming is off too on interfaces
//! facing an impairment box, so the box forwards real, checksummed frames.

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use sonde_emu::backend::{self, Backend, BackendPlan, KernelCaps};
use sonde_emu::build::build_settings;
use sonde_emu::Direction;
use sonde_scenario::Scenario;

use crate::cmd;
use crate::counters::{self, IfCounters};
use crate::error::LabError;
use crate::forward::{BoxSpec, DirectionReport, Forwarder, DEFAULT_SPIN};
use crate::netns;
use crate::offload::{self, Offload};
use crate::qdisc;
use crate::topology::{fresh_prefix, Layout, LinkLayout, Node};

/// How to build a lab.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// Namespace prefix (`sonde-...`); a fresh `sonde-<6 hex>` when `None`.
    pub prefix: Option<String>,
    /// What the kernel offers; probed (once per process) when `None`. Passing
    /// `KernelCaps::default()` sends every impairment to the userspace engine.
    pub caps: Option<KernelCaps>,
    /// Run seed; the scenario's when `None`.
    pub seed: Option<u64>,
    /// The forwarder's spin window before each departure.
    pub spin: Duration,
}

impl Default for LabOptions {
    fn default() -> Self {
        LabOptions {
            prefix: None,
            caps: None,
            seed: None,
            spin: DEFAULT_SPIN,
        }
    }
}

/// What a lab did, returned by [`Lab::finish`] for the run's record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LabReport {
    /// Which backend applied each impaired link direction, and why.
    pub plan: Option<BackendPlan>,
    /// Per link direction run by the userspace engine: per-stage counters and frame I/O.
    pub userspace: Vec<DirectionReport>,
    /// Anything that failed while tearing down (normally empty).
    pub teardown_errors: Vec<String>,
    /// What the lab could not do as it prefers, without harm to the results (see
    /// [`Lab::notes`]); and, from its userspace engine, a link that ran without real-time
    /// priority or whose frames left 1 ms or more late (`forward::behind`), which does
    /// touch the delays measured through it; and the hypervisor's steal time while the lab
    /// ran, when 50 ms or more (crate::steal).
    pub notes: Vec<String>,
}

/// A running lab. See the module docs.
#[derive(Debug)]
pub struct Lab {
    layout: Layout,
    plan: Option<BackendPlan>,
    forwarders: Vec<Forwarder>,
    created: Vec<String>,
    notes: Vec<String>,
    /// When the build began, and the machine's steal time then (crate::steal).
    built_at: (std::time::Instant, Option<std::time::Duration>),
}

/// nftables rules loaded in every node where `nft` is installed: no multicast listener
/// reports leave it. Linux sends MLD reports (and repeats them) when an interface comes up;
/// on an impaired link they would be frames the test did not send, drawn from the loss
/// stage's random stream at a moment that varies from run to run, so the same seed would no
/// longer drop the same test packets. The impairment boxes drop them anyway
/// ([`crate::forward::filter`]); this rule keeps them off the links altogether. Nothing in a
/// lab relies on multicast listener state (there is no snooping switch).
const QUIET_RULES: &str = "add table inet sonde_lab; \
    add chain inet sonde_lab out { type filter hook output priority 0; policy accept; }; \
    add rule inet sonde_lab out icmpv6 type { mld-listener-report, mld-listener-done, \
    mld2-listener-report } drop";

static CAPS: OnceLock<KernelCaps> = OnceLock::new();

/// The MAC address the lab gives end `end` (1 = a, 2 = b) of link number `index`:
/// locally administered, unique within the lab.
fn mac(index: usize, end: u8) -> String {
    format!(
        "02:5d:00:{:02x}:{:02x}:{:02x}",
        (index >> 8) & 0xff,
        index & 0xff,
        end
    )
}

impl Lab {
    /// Builds `scenario`'s topology with the impairments of `settings` (none when `None`).
    ///
    /// # Errors
    /// [`LabError::NotPrivileged`] without root; [`LabError::Scenario`] for unknown settings;
    /// [`LabError::NamespaceExists`] when a name is taken; otherwise the step that failed,
    /// with the command and its stderr. Whatever was created is removed before returning.
    pub fn build(
        scenario: &Scenario,
        settings: Option<&str>,
        opts: LabOptions,
    ) -> Result<Lab, LabError> {
        netns::check_privileges()?;
        let prefix = opts.prefix.clone().unwrap_or_else(fresh_prefix);
        crate::topology::check_prefix(&prefix)?;
        let caps = match opts.caps {
            Some(c) => c,
            None => probe_caps(&prefix)?,
        };
        let seed = opts.seed.unwrap_or(scenario.seed);
        let scenario_err = |reason: String| LabError::Scenario {
            scenario: scenario.name.clone(),
            reason,
        };
        let (plan, mut chains) = match settings {
            Some(s) => (
                Some(backend::plan(scenario, s, caps).map_err(|e| scenario_err(e.to_string()))?),
                build_settings(scenario, s, seed)?,
            ),
            None => (None, Vec::new()),
        };
        let userspace: Vec<(String, Direction)> = plan
            .iter()
            .flat_map(|p| &p.directions)
            .filter(|d| d.backend == Backend::Userspace)
            .map(|d| (d.link.clone(), d.direction))
            .collect();
        let boxed: BTreeSet<String> = userspace.iter().map(|(l, _)| l.clone()).collect();
        let layout = Layout::new(scenario, &prefix, &boxed)?;
        let mut lab = Lab {
            layout,
            plan,
            forwarders: Vec::new(),
            created: Vec::new(),
            notes: Vec::new(),
            built_at: (std::time::Instant::now(), crate::steal::total()),
        };
        lab.create_namespaces()?;
        lab.quiet_multicast();
        lab.create_links()?;
        lab.disable_offloads()?;
        lab.configure_nodes()?;
        if let Some(s) = settings.and_then(|s| scenario.setting(s)) {
            crate::family_mtu::apply(&lab.layout, s)?;
        }
        if let (Some(plan), Some(settings)) = (lab.plan.clone(), settings) {
            lab.apply_qdiscs(scenario, settings, &plan)?;
        }
        let mut take = |link: &str, dir: Direction| {
            let wanted = userspace.iter().any(|(l, d)| l == link && *d == dir);
            let i = chains
                .iter()
                .position(|c| wanted && c.link == link && c.direction == dir);
            i.map(|i| chains.swap_remove(i).chain).unwrap_or_default()
        };
        let specs: Vec<BoxSpec> = lab
            .layout
            .links
            .iter()
            .filter_map(|l| {
                let b = l.imp_box.as_ref()?;
                Some(BoxSpec {
                    link: l.name.clone(),
                    netns: b.netns.clone(),
                    a_iface: b.a_iface.clone(),
                    b_iface: b.b_iface.clone(),
                    a_to_b: take(&l.name, Direction::AToB),
                    b_to_a: take(&l.name, Direction::BToA),
                    spin: opts.spin,
                })
            })
            .collect();
        for spec in specs {
            lab.forwarders.push(Forwarder::start(spec)?);
        }
        Ok(lab)
    }

    fn create_namespaces(&mut self) -> Result<(), LabError> {
        let names: Vec<String> = self.layout.namespaces().map(str::to_owned).collect();
        for ns in names {
            netns::create(&ns)?;
            self.created.push(ns);
        }
        for n in &self.layout.nodes {
            let mut kv = vec![
                ("net.ipv6.conf.all.accept_dad", "0"),
                ("net.ipv6.conf.default.accept_dad", "0"),
                ("net.ipv6.conf.default.router_solicitations", "0"),
                ("net.ipv6.conf.default.accept_ra", "0"),
                // Multicast listener reports go out at once on link-up, not up to a second
                // later in the middle of a test.
                (
                    "net.ipv6.conf.default.mldv1_unsolicited_report_interval",
                    "0",
                ),
                (
                    "net.ipv6.conf.default.mldv2_unsolicited_report_interval",
                    "0",
                ),
            ];
            if n.router {
                kv.extend([
                    ("net.ipv4.ip_forward", "1"),
                    ("net.ipv6.conf.all.forwarding", "1"),
                ]);
            }
            netns::sysctl(&n.netns, &kv)?;
        }
        for b in self.layout.links.iter().filter_map(|l| l.imp_box.as_ref()) {
            // The box is a wire: no addresses, so nothing of its own on the link.
            netns::sysctl(
                &b.netns,
                &[
                    ("net.ipv6.conf.all.disable_ipv6", "1"),
                    ("net.ipv6.conf.default.disable_ipv6", "1"),
                ],
            )?;
        }
        Ok(())
    }

    /// Loads [`QUIET_RULES`] in every node where `nft` is installed and works; otherwise
    /// leaves a note when the lab has an impairment box (the boxes filter those reports
    /// themselves, so nothing is lost).
    fn quiet_multicast(&mut self) {
        let boxed = self.layout.links.iter().any(|l| l.imp_box.is_some());
        if !cmd::on_path("nft") {
            if boxed {
                self.notes.push(
                    "nft is not installed: multicast listener reports reach the links, and \
                     the impairment boxes drop them before the seeded stages"
                        .into(),
                );
            }
            return;
        }
        for n in &self.layout.nodes {
            if let Err(e) = cmd::exec_in(&n.netns, "nft", &[QUIET_RULES]) {
                if boxed {
                    self.notes.push(format!(
                        "{e}: the impairment boxes drop multicast listener reports instead"
                    ));
                }
                return;
            }
        }
    }

    fn netns_of(&self, node: &str) -> Result<&str, LabError> {
        self.layout
            .node(node)
            .map(|n| n.netns.as_str())
            .ok_or_else(|| LabError::UnknownNode(node.to_owned()))
    }

    fn create_links(&self) -> Result<(), LabError> {
        for (i, l) in self.layout.links.iter().enumerate() {
            let (a_ns, b_ns) = (self.netns_of(&l.a)?, self.netns_of(&l.b)?);
            let mtu = l.mtu.to_string();
            let (mac_a, mac_b) = (mac(i, 1), mac(i, 2));
            let pair = |ns: &str, name: &str, mac: &str, peer_ns: &str, peer: &str| {
                cmd::ip_in(
                    ns,
                    &[
                        "link", "add", name, "mtu", &mtu, "address", mac, "type", "veth", "peer",
                        "name", peer, "mtu", &mtu, "netns", peer_ns,
                    ],
                )
            };
            match &l.imp_box {
                None => {
                    pair(a_ns, &l.iface, &mac_a, b_ns, &l.iface)?;
                    cmd::ip_in(b_ns, &["link", "set", &l.iface, "address", &mac_b])?;
                }
                Some(b) => {
                    pair(a_ns, &l.iface, &mac_a, &b.netns, &b.a_iface)?;
                    pair(b_ns, &l.iface, &mac_b, &b.netns, &b.b_iface)?;
                    for ifname in [&b.a_iface, &b.b_iface] {
                        cmd::ip_in(&b.netns, &["link", "set", ifname, "promisc", "on", "up"])?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Segmentation offloads and GRO off on every lab interface; transmit checksumming off
    /// too where a node faces an impairment box (see [`crate::offload`]).
    fn disable_offloads(&self) -> Result<(), LabError> {
        let faces_box = |link: &str| {
            self.layout
                .links
                .iter()
                .any(|l| l.name == link && l.imp_box.is_some())
        };
        let seg = Offload::SEGMENTATION;
        let seg_and_csum = [&[Offload::TxChecksum][..], &seg[..]].concat();
        for n in &self.layout.nodes {
            let names = |boxed: bool| -> Vec<&str> {
                n.ifaces
                    .iter()
                    .filter(|f| faces_box(&f.link) == boxed)
                    .map(|f| f.name.as_str())
                    .collect()
            };
            offload::disable(&n.netns, &names(false), &seg)?;
            offload::disable(&n.netns, &names(true), &seg_and_csum)?;
        }
        for b in self.layout.links.iter().filter_map(|l| l.imp_box.as_ref()) {
            offload::disable(&b.netns, &[&b.a_iface, &b.b_iface], &seg)?;
        }
        Ok(())
    }

    fn configure_nodes(&self) -> Result<(), LabError> {
        let peer_mac = |n: &Node, link: &str| -> Option<String> {
            let (i, l) = self
                .layout
                .links
                .iter()
                .enumerate()
                .find(|(_, l)| l.name == link)?;
            Some(mac(i, if l.a == n.name { 2 } else { 1 }))
        };
        for n in &self.layout.nodes {
            let ns = n.netns.as_str();
            for f in &n.ifaces {
                let v4 = format!("{}/{}", f.ipv4, f.prefix4);
                let v6 = format!("{}/{}", f.ipv6, f.prefix6);
                cmd::ip_in(ns, &["addr", "add", &v4, "dev", &f.name])?;
                cmd::ip_in(ns, &["-6", "addr", "add", &v6, "dev", &f.name, "nodad"])?;
                cmd::ip_in(ns, &["link", "set", &f.name, "up"])?;
                let lladdr = peer_mac(n, &f.link).unwrap_or_default();
                for peer in [f.peer4.to_string(), f.peer6.to_string()] {
                    cmd::ip_in(
                        ns,
                        &[
                            "neigh",
                            "replace",
                            &peer,
                            "lladdr",
                            &lladdr,
                            "dev",
                            &f.name,
                            "nud",
                            "permanent",
                        ],
                    )?;
                }
            }
            for r in &n.routes {
                cmd::ip_in(ns, &["route", "add", &r.dest4, "via", &r.via4.to_string()])?;
                cmd::ip_in(
                    ns,
                    &["-6", "route", "add", &r.dest6, "via", &r.via6.to_string()],
                )?;
            }
        }
        Ok(())
    }

    fn apply_qdiscs(
        &self,
        scenario: &Scenario,
        settings: &str,
        plan: &BackendPlan,
    ) -> Result<(), LabError> {
        let Some(s) = scenario.setting(settings) else {
            return Ok(());
        };
        for d in &plan.directions {
            let Backend::Kernel(q) = d.backend else {
                continue;
            };
            let (Some(imp), Some(link)) = (
                s.impairments(&d.link, d.direction),
                self.layout.links.iter().find(|l| l.name == d.link),
            ) else {
                continue;
            };
            let sender = match d.direction {
                Direction::AToB => &link.a,
                Direction::BToA => &link.b,
            };
            qdisc::apply(self.netns_of(sender)?, q, &link.iface, imp, link.mtu)?;
        }
        Ok(())
    }

    /// What the lab could not do as it prefers, without harm to the results: e.g. `nft`
    /// missing (the boxes filter multicast listener reports themselves). Empty normally.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The namespace prefix.
    pub fn prefix(&self) -> &str {
        &self.layout.prefix
    }

    /// Names, addresses and routes of everything the lab made.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The backend plan (None when built without settings).
    pub fn plan(&self) -> Option<&BackendPlan> {
        self.plan.as_ref()
    }

    /// The node `name`'s namespace.
    ///
    /// # Errors
    /// [`LabError::UnknownNode`].
    pub fn netns(&self, node: &str) -> Result<&str, LabError> {
        self.netns_of(node)
    }

    /// The node's layout (interfaces with addresses, routes).
    ///
    /// # Errors
    /// [`LabError::UnknownNode`].
    pub fn node(&self, name: &str) -> Result<&Node, LabError> {
        self.layout
            .node(name)
            .ok_or_else(|| LabError::UnknownNode(name.to_owned()))
    }

    /// The link's layout.
    pub fn link(&self, name: &str) -> Option<&LinkLayout> {
        self.layout.links.iter().find(|l| l.name == name)
    }

    /// Gives every namespace of the lab the hosts file `text`: programs started with
    /// [`Lab::command`] resolve the names it lists through the system resolver, as they
    /// would names from DNS. It stays until the lab is torn down (or `sonde lab clean`).
    /// Write whole lines (`10.77.2.1 n02`); keep `localhost`, as it replaces `/etc/hosts`.
    ///
    /// # Errors
    /// [`LabError::Os`] when a file cannot be written (e.g. a read-only `/etc`).
    pub fn set_hosts(&self, text: &str) -> Result<(), LabError> {
        self.created
            .iter()
            .try_for_each(|ns| netns::write_hosts(ns, text))
    }

    /// `program args...` to be run inside `node`'s namespace (`ip netns exec`). The caller
    /// spawns it; whatever still runs there is killed at teardown.
    ///
    /// # Errors
    /// [`LabError::UnknownNode`].
    pub fn command(&self, node: &str, program: &str, args: &[&str]) -> Result<Command, LabError> {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", self.netns_of(node)?, program])
            .args(args);
        Ok(c)
    }

    /// Runs `f` on a new thread inside `node`'s namespace and returns its result: sockets
    /// `f` creates live in the node (in-process tests, probes).
    ///
    /// # Errors
    /// [`LabError::UnknownNode`], the namespace's [`LabError::Os`], or
    /// [`LabError::ThreadPanicked`] when `f` panicked.
    pub fn in_node<T: Send>(
        &self,
        node: &str,
        f: impl FnOnce() -> T + Send,
    ) -> Result<T, LabError> {
        netns::run_in(self.netns_of(node)?, f)
    }

    /// Counters of every interface of `node` (loopback included).
    ///
    /// # Errors
    /// [`LabError::UnknownNode`], or the `ip` failure.
    pub fn counters(&self, node: &str) -> Result<Vec<IfCounters>, LabError> {
        counters::read(self.netns_of(node)?)
    }

    /// Stops the forwarders, removes every namespace, and returns the plan and the userspace
    /// engine's per-stage counters.
    pub fn finish(mut self) -> LabReport {
        let mut userspace = Vec::new();
        let mut errors = Vec::new();
        for f in self.forwarders.drain(..) {
            match f.stop() {
                Ok(dirs) => userspace.extend(dirs),
                Err(e) => errors.push(e.to_string()),
            }
        }
        errors.extend(self.delete_namespaces());
        let mut slow_links: Vec<&str> = userspace
            .iter()
            .filter(|d| !d.realtime)
            .map(|d| d.link.as_str())
            .collect();
        slow_links.dedup();
        self.notes.extend(
            slow_links
                .into_iter()
                .map(crate::forward::behind::priority_note),
        );
        self.notes.extend(
            userspace
                .iter()
                .filter_map(crate::forward::behind::lateness_note),
        );
        let (began, steal_then) = self.built_at;
        if let (Some(then), Some(now)) = (steal_then, crate::steal::total()) {
            self.notes.extend(crate::steal::note(
                now.saturating_sub(then),
                began.elapsed(),
            ));
        }
        LabReport {
            plan: self.plan.take(),
            userspace,
            teardown_errors: errors,
            notes: std::mem::take(&mut self.notes),
        }
    }

    fn delete_namespaces(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        while let Some(ns) = self.created.pop() {
            if let Err(e) = netns::delete(&ns) {
                errors.push(e.to_string());
            }
        }
        errors
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.forwarders.clear();
        let _ = self.delete_namespaces();
    }
}

/// Probes the kernel's qdiscs once per process, on a veth pair in a scratch namespace
/// `PREFIX.probe` that is removed again.
fn probe_caps(prefix: &str) -> Result<KernelCaps, LabError> {
    if let Some(c) = CAPS.get() {
        return Ok(*c);
    }
    let ns = format!("{prefix}.probe");
    netns::create(&ns)?;
    let made = cmd::ip_in(
        &ns,
        &["link", "add", "p0", "type", "veth", "peer", "name", "p1"],
    );
    let caps = made.map(|_| qdisc::probe(&ns, "p0"));
    let deleted = netns::delete(&ns);
    let caps = caps?;
    deleted?;
    Ok(*CAPS.get_or_init(|| caps))
}
