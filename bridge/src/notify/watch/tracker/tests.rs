//! Each rule of §2.4 with a clock the test moves: every call is given
//! its time.

use protocol::{GameplayMode, Players, Stats};

use super::*;

const GRACE: Duration = Duration::from_secs(60);

impl Tracker {
    /// Keys known (listed, or unlisted for less than the grace).
    fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether no key is known.
    fn is_empty(&self) -> bool {
        self.known.is_empty()
    }
}

fn server(key: u64, players: u32, open: bool) -> Keyed {
    Keyed {
        id: key,
        key: Some(ServerKey(key)),
        entry: ServerEntry {
            registrant: None,
            name: format!("Server {key}"),
            address: Some("192.0.2.1".into()),
            port: Some(key as u16),
            stats: Stats {
                players: Players {
                    current: players,
                    max: 8,
                },
                is_lobby_open: open,
                gameplay_mode: GameplayMode::StandardA,
            },
        },
    }
}

/// A tracker fed whole lists: each is compared by id with the one before
/// and handed over as its changes, as the events task hands a published
/// list's.
struct Fed {
    tracker: Tracker,
    last: Vec<Arc<Keyed>>,
}

impl Fed {
    fn new(grace: Duration, now: Instant) -> Self {
        Self {
            tracker: Tracker::new(grace, now),
            last: Vec::new(),
        }
    }

    fn observe(&mut self, list: &[Keyed], now: Instant, at: SystemTime) -> Vec<Occurrence> {
        let list: Vec<Arc<Keyed>> = list.iter().cloned().map(Arc::new).collect();
        let by_id = |l: &[Arc<Keyed>], id: u64| l.iter().find(|k| k.id == id).cloned();
        let mut ids: Vec<u64> = self.last.iter().chain(&list).map(|k| k.id).collect();
        ids.sort_unstable();
        ids.dedup();
        let pairs: Vec<[Option<Arc<Keyed>>; 2]> = ids
            .iter()
            .map(|&id| [by_id(&self.last, id), by_id(&list, id)])
            .collect();
        let changes = pairs.iter().filter_map(|pair| match pair {
            [None, Some(new)] => Some(ListChange::Added(new)),
            [Some(old), Some(new)] if old != new => Some(ListChange::Updated { old, new }),
            [Some(old), None] => Some(ListChange::Removed(old)),
            _ => None,
        });
        let out = self
            .tracker
            .observe(changes, |id| list.iter().find(|k| k.id == id), now, at);
        self.last = list.clone();
        out
    }
}

impl std::ops::Deref for Fed {
    type Target = Tracker;
    fn deref(&self) -> &Tracker {
        &self.tracker
    }
}

impl std::ops::DerefMut for Fed {
    fn deref_mut(&mut self) -> &mut Tracker {
        &mut self.tracker
    }
}

/// A tracker past its start-up window, at `now`.
fn warm() -> (Fed, Instant) {
    let start = Instant::now();
    let t = Fed::new(GRACE, start);
    (t, start + GRACE)
}

fn changes(out: &[Occurrence]) -> Vec<(u64, ServerChange)> {
    let mut v: Vec<_> = out.iter().map(|o| (o.key.0, o.change)).collect();
    v.sort_by_key(|(k, _)| *k);
    v
}

fn at() -> SystemTime {
    SystemTime::UNIX_EPOCH
}

#[test]
fn keys_listed_at_start_are_not_announced() {
    let start = Instant::now();
    let mut t = Fed::new(GRACE, start);
    assert!(t.observe(&[server(1, 0, true)], start, at()).is_empty());
    let later = start + GRACE - Duration::from_secs(1);
    assert!(!t.warm(later));
    assert!(t
        .observe(&[server(1, 0, true), server(2, 0, true)], later, at())
        .is_empty());
    assert!(t.warm(start + GRACE));
    let out = t.observe(
        &[server(1, 0, true), server(2, 0, true), server(3, 0, true)],
        start + GRACE,
        at(),
    );
    assert_eq!(changes(&out), [(3, ServerChange::Online)]);
    assert_eq!(
        changes(&t.take_unsure()),
        [(1, ServerChange::Online), (2, ServerChange::Online)],
        "left to the caller, who asks the history"
    );
}

#[test]
fn online_then_offline_after_the_grace_only() {
    let (mut t, now) = warm();
    let out = t.observe(&[server(1, 2, true)], now, at());
    assert_eq!(
        changes(&out),
        [(1, ServerChange::Online)],
        "appearing open is online, not lobby-opened"
    );
    assert!(t.observe(&[], now, at()).is_empty());
    assert_eq!(t.next_expiry(), Some(now + GRACE));
    assert!(t
        .expire(now + GRACE - Duration::from_millis(1), at())
        .is_empty());
    let out = t.expire(now + GRACE, at());
    assert_eq!(changes(&out), [(1, ServerChange::Offline)]);
    assert_eq!(out[0].server.stats.players.current, 2, "as last listed");
    assert!(t.is_empty());
    assert_eq!(t.next_expiry(), None);
    let out = t.observe(&[server(1, 0, false)], now + GRACE * 2, at());
    assert_eq!(
        changes(&out),
        [(1, ServerChange::Online)],
        "offline, then online again"
    );
}

#[test]
fn back_within_the_grace_was_never_offline() {
    let (mut t, now) = warm();
    t.observe(&[server(1, 0, false)], now, at());
    t.observe(&[], now + Duration::from_secs(1), at());
    // Flapping: gone and back several times, each time within the grace.
    for i in 1..5u64 {
        let back = now + Duration::from_secs(50 * i);
        assert!(
            t.observe(&[server(1, 0, false)], back, at()).is_empty(),
            "not online again"
        );
        assert!(t
            .observe(&[], back + Duration::from_secs(1), at())
            .is_empty());
        assert!(
            t.expire(back + Duration::from_secs(59), at()).is_empty(),
            "the grace starts again"
        );
    }
    // A return that changed its state is compared with the last listed one.
    let back = now + Duration::from_secs(300);
    let out = t.observe(&[server(1, 3, true)], back, at());
    assert_eq!(
        changes(&out),
        [
            (1, ServerChange::LobbyOpened),
            (1, ServerChange::PlayersRose { from: 0 })
        ]
    );
}

#[test]
fn lobby_opened_is_false_to_true_only() {
    let (mut t, now) = warm();
    t.observe(&[server(1, 0, false)], now, at());
    assert_eq!(
        changes(&t.observe(&[server(1, 0, true)], now, at())),
        [(1, ServerChange::LobbyOpened)]
    );
    assert!(
        t.observe(&[server(1, 0, true)], now, at()).is_empty(),
        "unchanged"
    );
    assert_eq!(
        changes(&t.observe(&[server(1, 0, false)], now, at())),
        [(1, ServerChange::Shown)],
        "closing is no event, only a status card's cue"
    );
    assert_eq!(
        changes(&t.observe(&[server(1, 0, true)], now, at())),
        [(1, ServerChange::LobbyOpened)]
    );
}

#[test]
fn players_reached_is_a_rise_through_the_threshold() {
    let (mut t, now) = warm();
    t.observe(&[server(1, 1, false)], now, at());
    let all = ServerFilter::All;
    let events = [Event::PlayersReached];
    let rise = |t: &mut Fed, n| t.observe(&[server(1, n, false)], now, at());
    let fired = |out: &[Occurrence], threshold| -> Vec<Event> {
        out.iter()
            .filter_map(|o| o.fires(&events, &all, Some(threshold)))
            .collect()
    };
    let out = rise(&mut t, 2);
    assert!(fired(&out, 3).is_empty(), "1 → 2 does not reach 3");
    let out = rise(&mut t, 4);
    assert_eq!(fired(&out, 3), [Event::PlayersReached], "2 → 4 reaches 3");
    assert!(fired(&out, 2).is_empty(), "already at 2 before");
    assert!(fired(&out, 5).is_empty());
    assert!(fired(&rise(&mut t, 5), 3).is_empty(), "above it already");
    let out = rise(&mut t, 2);
    assert_eq!(
        changes(&out),
        [(1, ServerChange::Shown)],
        "falling: a card's cue"
    );
    assert!(fired(&out, 1).is_empty(), "falling is no event");
    assert_eq!(
        fired(&rise(&mut t, 3), 3),
        [Event::PlayersReached],
        "reached again"
    );
    // No threshold: never fires.
    let out = rise(&mut t, 7);
    assert!(out.iter().all(|o| o.fires(&events, &all, None).is_none()));
}

#[test]
fn watches_pick_their_events_and_servers() {
    let (mut t, now) = warm();
    let out = t.observe(&[server(1, 0, true), server(2, 0, true)], now, at());
    let keys = ServerFilter::Keys(vec![ServerKey(2)]);
    let fired: Vec<_> = out
        .iter()
        .filter_map(|o| {
            o.fires(&[Event::ServerOnline], &keys, None)
                .map(|e| (o.key.0, e))
        })
        .collect();
    assert_eq!(fired, [(2, Event::ServerOnline)]);
    assert!(out.iter().all(|o| o
        .fires(&[Event::LobbyOpened], &ServerFilter::All, None)
        .is_none()));
    let by_name = ServerFilter::NameContains("server 1".into());
    assert_eq!(
        out.iter()
            .filter(|o| o.fires(&[Event::ServerOnline], &by_name, None).is_some())
            .count(),
        1
    );
}

#[test]
fn twins_count_once_and_keyless_entries_not_at_all() {
    let (mut t, now) = warm();
    let mut twin = server(1, 5, true);
    twin.id = 99;
    let mut keyless = server(3, 0, true);
    keyless.key = None;
    let out = t.observe(&[server(1, 0, false), twin, keyless], now, at());
    assert_eq!(changes(&out), [(1, ServerChange::Online)]);
    assert_eq!(
        out[0].server.stats.players.current, 0,
        "the first entry of a key"
    );
    assert_eq!(t.len(), 1);
}

#[test]
fn when_the_first_twin_leaves_the_next_one_counts() {
    let (mut t, now) = warm();
    let mut twin = server(1, 5, true);
    twin.id = 99;
    t.observe(&[server(1, 0, false), twin.clone()], now, at());
    // The first leaves: the key stays listed, as the twin, whose stats
    // are compared with the first's.
    let out = t.observe(&[twin.clone()], now, at());
    assert_eq!(
        changes(&out),
        [
            (1, ServerChange::LobbyOpened),
            (1, ServerChange::PlayersRose { from: 0 })
        ]
    );
    assert!(t.next_expiry().is_none(), "still listed");
    // A change of a twin that does not count is no event.
    let mut second = twin.clone();
    second.id = 120;
    t.observe(&[twin.clone(), second.clone()], now, at());
    second.entry.stats.players.current = 8;
    assert!(t.observe(&[twin, second], now, at()).is_empty());
    // Gone: unlisted, offline after the grace.
    assert!(t.observe(&[], now, at()).is_empty());
    assert_eq!(t.next_expiry(), Some(now + GRACE));
    assert_eq!(
        changes(&t.expire(now + GRACE, at())),
        [(1, ServerChange::Offline)]
    );
    assert!(t.is_empty());
}
