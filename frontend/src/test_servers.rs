//! The admin page's test servers as data: their definitions (kept in
//! localStorage), the tab-wide state of their connections as a reducer, the
//! messages each one sends, the add form's validation (entirely the protocol
//! crate's rules and messages) and the demo samples.

use std::{collections::BTreeMap, rc::Rc};

use protocol::{
    bridge::ClientMessage, Command, GameplayMode, Players, Registration, ServerAddress,
    ServerEntry, ServerName, ServerPort, Stats, ValidationError,
};
use serde::{Deserialize, Serialize};
use yew::Reducible;

/// One test server as the admin defined it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestServerDef {
    /// Local identity (stable across reloads), not sent anywhere.
    pub id: u64,
    pub name: String,
    pub address: String,
    pub port: u16,
    pub current: u32,
    pub max: u8,
    pub open: bool,
    /// 1 or 2, as on the wire.
    pub mode: u8,
}

impl TestServerDef {
    /// The registration, re-validated: a definition edited in storage by
    /// hand must not reach the bridge unchecked.
    pub fn registration(&self) -> Result<Registration, ValidationError> {
        Registration::new(&self.name, &self.address, u64::from(self.port))
    }

    /// The stats, clamped to what the protocol accepts.
    pub fn stats(&self) -> Stats {
        Stats {
            players: Players {
                current: self.current,
                max: self.max.clamp(2, 4),
            },
            is_lobby_open: self.open,
            gameplay_mode: GameplayMode::from_wire(u64::from(self.mode))
                .unwrap_or(GameplayMode::StandardA),
        }
    }

    pub fn register_json(&self) -> Result<String, ValidationError> {
        Ok(Command::Register(self.registration()?).to_json())
    }

    pub fn stats_json(&self) -> String {
        Command::UpdateStats(self.stats()).to_json()
    }

    /// Whether `entry` in the list is this server. A bridge that hides
    /// addresses leaves only the name to compare.
    pub fn is_listed_as(&self, entry: &ServerEntry) -> bool {
        entry.name == self.name
            && entry.address.as_deref().is_none_or(|a| a == self.address)
            && entry.port.is_none_or(|p| p == self.port)
    }
}

/// `msUnregisterGameServer`.
pub fn unregister_json() -> String {
    Command::Unregister.to_json()
}

/// `bridgeAuth` with the admin token.
pub fn auth_json(token: &str) -> String {
    serde_json::to_string(&ClientMessage::Auth {
        token: token.to_owned(),
    })
    .unwrap_or_default()
}

/// Reads stored definitions, dropping anything unreadable.
pub fn load_defs(json: &str) -> Vec<TestServerDef> {
    serde_json::from_str::<Vec<serde_json::Value>>(json)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| serde_json::from_value(v).ok())
        .collect()
}

pub fn save_defs(defs: &[TestServerDef]) -> String {
    serde_json::to_string(defs).unwrap_or_else(|_| "[]".to_owned())
}

/// The add form's raw inputs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FormInput {
    pub name: String,
    pub address: String,
    pub port: String,
}

/// Per-field errors, each the protocol crate's own message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FormErrors {
    pub name: Option<ValidationError>,
    pub address: Option<ValidationError>,
    pub port: Option<ValidationError>,
}

impl FormErrors {
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.address.is_none() && self.port.is_none()
    }

    /// The error for a wire field name (`ValidationError::field()`).
    pub fn for_field(&self, field: &str) -> Option<&ValidationError> {
        [&self.name, &self.address, &self.port]
            .into_iter()
            .flatten()
            .find(|e| e.field() == Some(field))
    }
}

/// Validates each field on its own so every input gets its message. A port
/// that is not a number is out of range as far as the rule is concerned.
pub fn validate_form(input: &FormInput) -> (FormErrors, Option<(String, String, u16)>) {
    let name = ServerName::parse(&input.name);
    let address = ServerAddress::parse(input.address.trim());
    let port = input
        .port
        .trim()
        .parse::<u64>()
        .map_err(|_| ValidationError::PortOutOfRange)
        .and_then(ServerPort::new);
    let errors = FormErrors {
        name: name.as_ref().err().cloned(),
        address: address.as_ref().err().cloned(),
        port: port.as_ref().err().cloned(),
    };
    match (name, address, port) {
        (Ok(n), Ok(a), Ok(p)) => (errors, Some((n.to_string(), a.to_string(), p.get()))),
        _ => (errors, None),
    }
}

/// The next free local id.
pub fn next_id(defs: &[TestServerDef]) -> u64 {
    defs.iter().map(|d| d.id).max().map_or(1, |m| m + 1)
}

/// Ten demo servers with names in several scripts and varied stats.
pub fn samples(first_id: u64) -> Vec<TestServerDef> {
    const NAMES: [&str; 10] = [
        "Feuerland",
        "轰炸机人",
        "Server von Bösewicht",
        "Nordlicht",
        "Café Bombé",
        "Ледяная арена",
        "桜 Sakura",
        "Dune Runner",
        "Λαβύρινθος",
        "Oasis ☀",
    ];
    NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let i32_ = i as u32;
            let max = 2 + (i % 3) as u8;
            TestServerDef {
                id: first_id + i as u64,
                name: (*name).to_owned(),
                address: format!("198.51.100.{}", 10 + i),
                port: 20001 + i as u16,
                current: (i32_ * 7 + 1) % (u32::from(max) + 2),
                max,
                open: i % 3 != 2,
                mode: 1 + (i % 2) as u8,
            }
        })
        .collect()
}

/// Where one test server's own connection stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    Connecting,
    SigningIn,
    /// Registration and stats sent; confirmed once listed.
    Registered,
    /// The bridge says the master is down (or refused the registration for
    /// it): the server registers again, with its last stats, once the
    /// bridge reports the master up.
    MasterDown,
    Reconnecting,
    /// The tab has no admin token yet.
    NoToken,
    Rejected,
    /// The stored definition fails the protocol's rules (the message says why).
    Invalid(String),
}

impl Phase {
    /// The status pill's tone (`ok`, `wait`, `bad`) and words; `listed`
    /// says whether the server shows up in the live list.
    pub fn status(&self, listed: bool) -> (&'static str, String) {
        use crate::i18n::{t, tf, K};
        match self {
            Phase::Connecting => ("wait", t(K::TsConnecting).to_owned()),
            Phase::SigningIn => ("wait", t(K::TsSigningIn).to_owned()),
            Phase::Registered if listed => ("ok", t(K::TsRegistered).to_owned()),
            Phase::Registered => ("wait", t(K::TsRegistering).to_owned()),
            Phase::MasterDown => ("wait", t(K::TsMasterDown).to_owned()),
            Phase::Reconnecting => ("wait", t(K::TsReconnecting).to_owned()),
            Phase::NoToken => ("bad", t(K::TsNoToken).to_owned()),
            Phase::Rejected => ("bad", t(K::TsRejected).to_owned()),
            Phase::Invalid(msg) => ("bad", tf(K::TsInvalid, &[msg])),
        }
    }
}

/// This tab's test servers: their definitions and where each one's
/// connection stands. It belongs to the whole app, not to the admin page,
/// so the servers stay registered while the tab shows any other page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TestServers {
    pub defs: Vec<TestServerDef>,
    /// Per definition id; missing means not started yet.
    pub phases: BTreeMap<u64, Phase>,
    /// The last `bridgeError` per definition id, until it registers again.
    pub errors: BTreeMap<u64, String>,
    /// When each server's registration last went out (`performance.now()`):
    /// only a list that arrived after it can confirm it.
    /// (A small list rather than a map: fewer generic copies in the bundle.)
    pub registered_at: Vec<(u64, f64)>,
    /// Whether this tab runs its test servers: from the start when it holds
    /// an admin token (a reload), otherwise once the admin page is opened.
    pub active: bool,
    /// The next local id; never reused within a tab, so a removed server's
    /// connection can never be mistaken for a new one's.
    next_id: u64,
}

impl TestServers {
    /// The state after loading `defs` from storage.
    pub fn new(defs: Vec<TestServerDef>, active: bool) -> Self {
        let next_id = next_id(&defs);
        TestServers {
            defs,
            active,
            next_id,
            ..Default::default()
        }
    }

    /// The phase of definition `id` (connecting until its socket reports).
    pub fn phase(&self, id: u64) -> Phase {
        self.phases.get(&id).cloned().unwrap_or(Phase::Connecting)
    }

    /// Whether the master's list confirms server `def`: `list` is the list
    /// the page holds, `list_perf_ms` when it arrived and `fresh` whether it
    /// is current (its connection is open and the master up). A list from
    /// before the registration went out proves nothing (after a master
    /// restart the page still holds the list from before it).
    pub fn confirmed<'a>(
        &self,
        def: &TestServerDef,
        mut list: impl Iterator<Item = &'a ServerEntry>,
        list_perf_ms: f64,
        fresh: bool,
    ) -> bool {
        fresh
            && self
                .registered_at
                .iter()
                .any(|&(id, at)| id == def.id && list_perf_ms > at)
            && list.any(|e| def.is_listed_as(e))
    }
}

/// Everything that changes [`TestServers`].
#[derive(Debug, Clone, PartialEq)]
pub enum TsAction {
    /// Start running the test servers (the admin page was opened).
    Activate,
    /// A validated (name, address, port) from the add form.
    Add(String, String, u16),
    /// The ten demo servers.
    AddSamples,
    /// New stats for an existing definition (matched by id).
    Update(TestServerDef),
    Remove(u64),
    RemoveAll,
    Phase(u64, Phase),
    /// Registration and stats went out at this `performance.now()`.
    Registered(u64, f64),
    BridgeError(u64, String),
}

impl Reducible for TestServers {
    type Action = TsAction;

    fn reduce(self: Rc<Self>, action: TsAction) -> Rc<Self> {
        if action == TsAction::Activate && self.active {
            return self;
        }
        let mut s = (*self).clone();
        match action {
            TsAction::Activate => s.active = true,
            TsAction::Add(name, address, port) => {
                s.defs.push(TestServerDef {
                    id: s.next_id,
                    name,
                    address,
                    port,
                    current: 0,
                    max: 4,
                    open: true,
                    mode: 1,
                });
                s.next_id += 1;
            }
            TsAction::AddSamples => {
                let added = samples(s.next_id);
                s.next_id += added.len() as u64;
                s.defs.extend(added);
            }
            TsAction::Update(def) => {
                if let Some(d) = s.defs.iter_mut().find(|d| d.id == def.id) {
                    *d = def;
                }
            }
            TsAction::Remove(id) => {
                s.defs.retain(|d| d.id != id);
                s.phases.remove(&id);
                s.errors.remove(&id);
                s.registered_at.retain(|r| r.0 != id);
            }
            TsAction::RemoveAll => {
                s.defs.clear();
                s.phases.clear();
                s.errors.clear();
                s.registered_at.clear();
            }
            TsAction::Registered(id, at) => {
                if !s.defs.iter().any(|d| d.id == id) {
                    return self;
                }
                s.errors.remove(&id);
                s.registered_at.retain(|r| r.0 != id);
                s.registered_at.push((id, at));
                s.phases.insert(id, Phase::Registered);
            }
            TsAction::Phase(id, phase) => {
                // A late event from a removed server's socket changes nothing.
                if !s.defs.iter().any(|d| d.id == id) {
                    return self;
                }
                if phase == Phase::Registered {
                    s.errors.remove(&id);
                }
                s.phases.insert(id, phase);
            }
            TsAction::BridgeError(id, message) => {
                if s.defs.iter().any(|d| d.id == id) {
                    s.errors.insert(id, message);
                }
            }
        }
        Rc::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(name: &str, address: &str, port: &str) -> FormInput {
        FormInput {
            name: name.into(),
            address: address.into(),
            port: port.into(),
        }
    }

    #[test]
    fn form_uses_the_protocol_messages() {
        let (errors, ok) = validate_form(&input("Feuerland", "192.168.0.10", "20000"));
        assert!(errors.is_empty());
        assert_eq!(ok, Some(("Feuerland".into(), "192.168.0.10".into(), 20000)));

        let (errors, ok) = validate_form(&input("", "1.2.3", "51963"));
        assert!(ok.is_none());
        assert_eq!(errors.name, Some(ValidationError::NameEmpty));
        assert!(matches!(
            errors.address,
            Some(ValidationError::InvalidIpv4(_))
        ));
        assert_eq!(errors.port, Some(ValidationError::PortReserved));
        assert_eq!(
            errors
                .for_field("serverPort")
                .map(ToString::to_string)
                .as_deref(),
            Some("port 51963 is reserved for the master server")
        );
        for bad_port in ["", "abc", "0", "65536", "-1", "99999999999999999999999"] {
            let (errors, _) = validate_form(&input("x", "a.org", bad_port));
            assert_eq!(
                errors.port,
                Some(ValidationError::PortOutOfRange),
                "{bad_port}"
            );
        }
        let (errors, _) = validate_form(&input("轰炸机人", "fd40:9dc7:b528::1", " 30000 "));
        assert!(errors.is_empty());
    }

    #[test]
    fn messages_and_storage() {
        let defs = samples(1);
        assert_eq!(defs.len(), 10);
        for d in &defs {
            assert!(d.register_json().is_ok(), "{d:?}");
            let stats = Stats::from_content(
                &serde_json::from_str::<serde_json::Value>(&d.stats_json()).unwrap()["content"],
            );
            assert!(stats.is_ok(), "{d:?}");
        }
        assert!(defs.iter().any(|d| d.current > u32::from(d.max)));
        let stored = save_defs(&defs);
        assert_eq!(load_defs(&stored), defs);
        assert!(load_defs("not json").is_empty());
        let mixed = format!(
            "[{{\"id\":1}}, {}]",
            serde_json::to_string(&defs[0]).unwrap()
        );
        assert_eq!(load_defs(&mixed), vec![defs[0].clone()]);
        assert_eq!(next_id(&defs), 11);
        assert_eq!(next_id(&[]), 1);
        assert_eq!(
            auth_json("t\"k"),
            r#"{"command":"bridgeAuth","content":{"token":"t\"k"}}"#
        );
        assert_eq!(unregister_json(), r#"{"command":"msUnregisterGameServer"}"#);
        let mut bad = defs[0].clone();
        bad.port = 51963;
        assert_eq!(bad.register_json(), Err(ValidationError::PortReserved));
    }

    #[test]
    fn listed_matching() {
        let d = &samples(1)[0];
        let mut e = crate::listing::tests::entry("Feuerland", 0, 4, true, 1);
        e.address = Some(d.address.clone());
        e.port = Some(d.port);
        assert!(d.is_listed_as(&e));
        e.port = Some(1);
        assert!(!d.is_listed_as(&e));
        e.address = None;
        e.port = None;
        assert!(d.is_listed_as(&e));
    }

    fn reduce(s: Rc<TestServers>, a: TsAction) -> Rc<TestServers> {
        s.reduce(a)
    }

    #[test]
    fn reducer_keeps_ids_unique_and_ignores_late_events() {
        let s = Rc::new(TestServers::new(samples(1)[..2].to_vec(), false));
        assert!(!s.active);
        let s = reduce(s, TsAction::Activate);
        assert!(s.active);
        let same = reduce(s.clone(), TsAction::Activate);
        assert!(Rc::ptr_eq(&s, &same));
        let s = reduce(s, TsAction::Add("Nordlicht".into(), "a.org".into(), 20000));
        assert_eq!(s.defs.iter().map(|d| d.id).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(s.phase(3), Phase::Connecting);
        let s = reduce(s, TsAction::Phase(3, Phase::Rejected));
        let s = reduce(s, TsAction::BridgeError(3, "forbidden".into()));
        assert_eq!(s.errors.get(&3).map(String::as_str), Some("forbidden"));
        let s = reduce(s, TsAction::Phase(3, Phase::Registered));
        assert!(s.errors.is_empty());
        let s = reduce(s, TsAction::Remove(3));
        // A removed id is never handed out again, even right away.
        let s = reduce(s, TsAction::Add("Nordlicht".into(), "a.org".into(), 20000));
        assert_eq!(s.defs.last().map(|d| d.id), Some(4));
        let before = s.clone();
        let s = reduce(s, TsAction::Phase(3, Phase::Registered));
        assert!(Rc::ptr_eq(&before, &s));
        let s = reduce(s, TsAction::RemoveAll);
        assert!(s.defs.is_empty() && s.phases.is_empty());
        let s = reduce(s, TsAction::AddSamples);
        assert_eq!(s.defs.first().map(|d| d.id), Some(5));
        let mut changed = s.defs[0].clone();
        changed.current = 3;
        let s = reduce(s, TsAction::Update(changed.clone()));
        assert_eq!(s.defs[0], changed);
    }

    #[test]
    fn only_a_current_list_from_after_the_registration_confirms_it() {
        let defs = samples(1)[..1].to_vec();
        let d = defs[0].clone();
        let mut e = crate::listing::tests::entry(&d.name, 0, 4, true, 1);
        e.address = Some(d.address.clone());
        e.port = Some(d.port);
        let other = crate::listing::tests::entry("Someone else", 0, 4, true, 1);
        let s = Rc::new(TestServers::new(defs, true));
        // Never registered: a list naming it (a stale one) proves nothing.
        assert!(!s.confirmed(&d, [&e].into_iter(), 50.0, true));
        let s = reduce(s, TsAction::BridgeError(1, "master down".into()));
        let s = reduce(s, TsAction::Registered(1, 100.0));
        assert_eq!(s.phase(1), Phase::Registered);
        assert!(s.errors.is_empty());
        // The list held from before the registration went out.
        assert!(!s.confirmed(&d, [&e].into_iter(), 99.0, true));
        assert!(s.confirmed(&d, [&other, &e].into_iter(), 101.0, true));
        assert!(!s.confirmed(&d, [&other].into_iter(), 101.0, true));
        // A list from a closed connection or a master that is down.
        assert!(!s.confirmed(&d, [&e].into_iter(), 101.0, false));
        // Registered again (after a master restart): the old list no longer counts.
        let s = reduce(s, TsAction::Phase(1, Phase::MasterDown));
        let s = reduce(s, TsAction::Registered(1, 200.0));
        assert!(!s.confirmed(&d, [&e].into_iter(), 101.0, true));
        assert!(s.confirmed(&d, [&e].into_iter(), 201.0, true));
        let s = reduce(s, TsAction::Remove(1));
        assert!(s.registered_at.is_empty());
        let before = s.clone();
        assert!(Rc::ptr_eq(
            &before,
            &reduce(s, TsAction::Registered(1, 300.0))
        ));
    }

    #[test]
    fn status_words() {
        assert_eq!(Phase::Registered.status(true), ("ok", "registered".into()));
        assert_eq!(Phase::Registered.status(false).1, "registering");
        assert_eq!(Phase::NoToken.status(false).0, "bad");
        assert_eq!(
            Phase::MasterDown.status(true),
            ("wait", "waiting for the master".into())
        );
        assert_eq!(
            Phase::Invalid("bad port".into()).status(true).1,
            "invalid: bad port"
        );
    }
}
