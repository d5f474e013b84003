//! The tab's test servers as a reducer: the definitions and where each
//! one's connection stands, changed only through [`TsAction`].

use std::{collections::BTreeMap, rc::Rc};

use protocol::{Registration, ServerEntry};
use yew::Reducible;

use super::{model::next_id, samples::samples, Phase, TestServerDef};

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
    /// The servers whose own query, sent after their current registration,
    /// was answered with a list that shows them.
    pub listed: Vec<u64>,
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

    /// Whether the master's list confirms server `def`: the answer to its
    /// own query did, or the list the page holds does: `list`, arrived at
    /// `list_perf_ms`, `fresh` if current (its connection is open and the
    /// master up). A list from before the registration went out proves
    /// nothing (after a master restart the page still holds the list from
    /// before it).
    pub fn confirmed<'a>(
        &self,
        def: &TestServerDef,
        mut list: impl Iterator<Item = &'a ServerEntry>,
        list_perf_ms: f64,
        fresh: bool,
    ) -> bool {
        self.listed.contains(&def.id)
            || fresh
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
    /// A registration the add form validated.
    Add(Registration),
    /// The ten demo servers.
    AddSamples,
    /// New stats for an existing definition (matched by id).
    Update(TestServerDef),
    Remove(u64),
    RemoveAll,
    Phase(u64, Phase),
    /// Registration and stats went out at this `performance.now()`.
    Registered(u64, f64),
    /// The answer to the server's own query lists it.
    Listed(u64),
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
            TsAction::Add(reg) => {
                s.defs.push(TestServerDef {
                    id: s.next_id,
                    name: reg.name.to_string(),
                    address: reg.address.to_string(),
                    port: reg.port.get(),
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
                s.listed.retain(|l| *l != id);
            }
            TsAction::RemoveAll => {
                s.defs.clear();
                s.phases.clear();
                s.errors.clear();
                s.registered_at.clear();
                s.listed.clear();
            }
            TsAction::Registered(id, at) => {
                if !s.defs.iter().any(|d| d.id == id) {
                    return self;
                }
                s.errors.remove(&id);
                s.registered_at.retain(|r| r.0 != id);
                s.registered_at.push((id, at));
                s.listed.retain(|l| *l != id);
                s.phases.insert(id, Phase::Registered);
            }
            TsAction::Listed(id) => {
                // Only after a registration of a server still there.
                if !s.registered_at.iter().any(|r| r.0 == id) || s.listed.contains(&id) {
                    return self;
                }
                s.listed.push(id);
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

    use crate::test_servers::samples::samples;

    fn nordlicht() -> Registration {
        Registration::new("Nordlicht", "a.org", 20000).unwrap()
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
        let s = reduce(s, TsAction::Add(nordlicht()));
        assert_eq!(s.defs.iter().map(|d| d.id).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(
            (
                s.defs[2].name.as_str(),
                s.defs[2].address.as_str(),
                s.defs[2].port
            ),
            ("Nordlicht", "a.org", 20000)
        );
        assert_eq!(s.phase(3), Phase::Connecting);
        let s = reduce(s, TsAction::Phase(3, Phase::Rejected));
        let s = reduce(s, TsAction::BridgeError(3, "forbidden".into()));
        assert_eq!(s.errors.get(&3).map(String::as_str), Some("forbidden"));
        let s = reduce(s, TsAction::Phase(3, Phase::Registered));
        assert!(s.errors.is_empty());
        let s = reduce(s, TsAction::Remove(3));
        // A removed id is never handed out again, even right away.
        let s = reduce(s, TsAction::Add(nordlicht()));
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
        let mut e = crate::list::lobby::tests::entry(&d.name, 0, 4, true, 1);
        e.address = Some(d.address.clone());
        e.port = Some(d.port);
        let other = crate::list::lobby::tests::entry("Someone else", 0, 4, true, 1);
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
        // The answer to its own query confirms it whatever the page's list
        // (which may not change at all), until it registers again.
        let s = reduce(s, TsAction::Listed(1));
        assert!(s.confirmed(&d, [&other].into_iter(), 101.0, false));
        let s = reduce(s, TsAction::Registered(1, 300.0));
        assert!(!s.confirmed(&d, [&other].into_iter(), 301.0, true));
        let s = reduce(s, TsAction::Listed(1));
        let s = reduce(s, TsAction::Remove(1));
        assert!(s.registered_at.is_empty() && s.listed.is_empty());
        assert!(Rc::ptr_eq(&s, &reduce(s.clone(), TsAction::Listed(1))));
        let before = s.clone();
        assert!(Rc::ptr_eq(
            &before,
            &reduce(s, TsAction::Registered(1, 300.0))
        ));
    }
}
