//! The in-tab half of notifications: while a lobby tab is open it decides,
//! from the list it already holds, the same events the bridge pushes
//! (`docs/protocol.md` §2.4), for the player's watches only. Fed only the
//! rows an update changed (a whole list only when the store started over),
//! so its work is one look per changed row, never per listed server. Pure:
//! the caller passes the time; tested natively.

use protocol::{
    watch::{self, Event, Listing, DEFAULT_COOLDOWN, OFFLINE_AFTER_SECS},
    ServerEntry, ServerKey,
};

use super::watches::Watch;

/// One event to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabNotice {
    pub key: ServerKey,
    pub event: Event,
    /// The server's name as listed now.
    pub name: String,
    pub current: u32,
    pub max: u8,
}

impl TabNotice {
    /// The notification's tag, the same one the service worker gives a
    /// push of this event: showing it again replaces it, never adds one.
    pub fn tag(&self) -> String {
        tag(self.key, self.event)
    }
}

/// The tag of an event's notification: key and event.
pub fn tag(key: ServerKey, event: Event) -> String {
    format!("{key}:{}", event.name())
}

/// What the tab knows of one watched key.
#[derive(Debug, Clone, Copy)]
struct Seen {
    /// Lobby open and players, as last listed (`None`: never seen listed).
    last: Option<(bool, u32)>,
    listed: bool,
    /// When it was last seen leaving the list (`None` while listed, or
    /// when it was unlisted before the tab looked).
    gone_ms: Option<f64>,
}

/// The tab's event decisions: what it knows of each watched key and when
/// each event last showed. Lists, not maps: there are at most 20 watches,
/// and a map type would cost the bundle more than the search.
#[derive(Debug, Default)]
pub struct Detector {
    seen: Vec<(ServerKey, Seen)>,
    /// When each key's event last showed, for the cooldown.
    shown: Vec<(ServerKey, Event, f64)>,
}

impl Detector {
    /// The whole list (`rows`: every listed server with its key), as after
    /// the first list or a snapshot. Keys the tab did not know yet are
    /// learnt without a notice (so a new watch, or a new tab, does not
    /// announce what already was); a watched key absent from the list is
    /// unlisted.
    pub fn whole<'a>(
        &mut self,
        rows: impl IntoIterator<Item = (ServerKey, &'a ServerEntry)>,
        watches: &[Watch],
        now_ms: f64,
    ) -> Vec<TabNotice> {
        let mut listed: Vec<(ServerKey, &ServerEntry)> = Vec::new();
        for (key, entry) in rows {
            if watches.iter().any(|w| w.key == key) && !listed.iter().any(|(k, _)| *k == key) {
                listed.push((key, entry));
            }
        }
        let mut out = Vec::new();
        for w in watches {
            let entry = listed.iter().find(|(k, _)| *k == w.key).map(|(_, e)| *e);
            self.step(w, entry, now_ms, &mut out);
        }
        // Forget keys no longer watched.
        self.seen
            .retain(|(k, _)| watches.iter().any(|w| w.key == *k));
        self.shown
            .retain(|(k, _, _)| watches.iter().any(|w| w.key == *k));
        out
    }

    /// Some rows changed: `out` the keys of the rows taken out or
    /// replaced, `put` the rows put in (a replaced row is in both: `put`
    /// wins). Only watched keys cost more than a comparison.
    pub fn changed<'a>(
        &mut self,
        out: impl IntoIterator<Item = ServerKey>,
        put: impl IntoIterator<Item = (ServerKey, &'a ServerEntry)>,
        watches: &[Watch],
        now_ms: f64,
    ) -> Vec<TabNotice> {
        let mut touched: Vec<(ServerKey, Option<&ServerEntry>)> = Vec::new();
        for key in out {
            if watches.iter().any(|w| w.key == key) && !touched.iter().any(|(k, _)| *k == key) {
                touched.push((key, None));
            }
        }
        for (key, entry) in put {
            if !watches.iter().any(|w| w.key == key) {
                continue;
            }
            match touched.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = slot.1.or(Some(entry)),
                None => touched.push((key, Some(entry))),
            }
        }
        let mut notices = Vec::new();
        for (key, entry) in touched {
            if let Some(w) = watches.iter().find(|w| w.key == key) {
                self.step(w, entry, now_ms, &mut notices);
            }
        }
        notices
    }

    /// One watched key, now listed as `entry` (or not listed).
    fn step(
        &mut self,
        w: &Watch,
        entry: Option<&ServerEntry>,
        now_ms: f64,
        out: &mut Vec<TabNotice>,
    ) {
        let now_state = entry.map(|e| (e.stats.is_lobby_open, e.stats.players.current));
        let Some((_, seen)) = self.seen.iter_mut().find(|(k, _)| *k == w.key) else {
            // First look at this key: learn it.
            let seen = Seen {
                last: now_state,
                listed: entry.is_some(),
                gone_ms: None,
            };
            self.seen.push((w.key, seen));
            return;
        };
        let mut events: Vec<Event> = Vec::new();
        match (seen.listed, entry) {
            (true, None) => {
                seen.listed = false;
                seen.gone_ms = Some(now_ms);
            }
            (false, None) => {}
            (was_listed, Some(e)) => {
                let grace_ms = (OFFLINE_AFTER_SECS * 1000) as f64;
                let back_soon = seen.gone_ms.is_some_and(|g| now_ms - g < grace_ms);
                // Back within the grace (or never gone): it was never
                // offline, so it is compared with how it was last listed.
                let last = seen
                    .last
                    .filter(|_| was_listed || back_soon)
                    .map(|(open, players)| Listing { open, players });
                let now = Listing::of(&e.stats);
                events.extend(
                    watch::changes(last, now)
                        .filter_map(|c| c.event(&w.events, w.threshold, now.players)),
                );
                seen.listed = true;
                seen.gone_ms = None;
                seen.last = now_state;
            }
        }
        let Some(e) = entry else { return };
        for event in events {
            if !w.wants(event) {
                continue;
            }
            let cooldown_ms = (DEFAULT_COOLDOWN * 1000) as f64;
            match self
                .shown
                .iter_mut()
                .find(|(k, e, _)| *k == w.key && *e == event)
            {
                // Shown within the cooldown: once, not a storm.
                Some((_, _, at)) if now_ms - *at < cooldown_ms => continue,
                Some((_, _, at)) => *at = now_ms,
                None => self.shown.push((w.key, event, now_ms)),
            }
            out.push(TabNotice {
                key: w.key,
                event,
                name: e.name.clone(),
                current: e.stats.players.current,
                max: e.stats.players.max,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use protocol::{GameplayMode, Players, Stats};

    use super::*;

    const K: ServerKey = ServerKey(7);

    fn entry(open: bool, current: u32) -> ServerEntry {
        ServerEntry {
            name: "Feuerland".into(),
            address: None,
            port: None,
            stats: Stats {
                players: Players { current, max: 4 },
                is_lobby_open: open,
                gameplay_mode: GameplayMode::StandardA,
            },
            registrant: None,
        }
    }

    fn watch(events: &[Event]) -> Vec<Watch> {
        vec![Watch::new(K, "Feuerland", events, 3).expect("valid")]
    }

    fn events(notices: Vec<TabNotice>) -> Vec<Event> {
        notices.into_iter().map(|n| n.event).collect()
    }

    #[test]
    fn what_was_there_is_learnt_and_a_server_coming_online_is_announced() {
        let w = watch(&[Event::ServerOnline, Event::LobbyOpened]);
        let mut d = Detector::default();
        assert!(d.whole([], &w, 0.0).is_empty(), "learnt: unlisted");
        let e = entry(true, 1);
        let n = d.changed([], [(K, &e)], &w, 1_000.0);
        assert_eq!(events(n.clone()), [Event::ServerOnline], "not lobby-opened");
        assert_eq!(
            (n[0].tag(), n[0].current),
            ("0000000000000007:server-online".into(), 1)
        );

        let mut d = Detector::default();
        assert!(d.whole([(K, &e)], &w, 0.0).is_empty(), "already listed");
        assert!(
            d.changed([], [(ServerKey(8), &e)], &w, 1.0).is_empty(),
            "not watched"
        );
    }

    #[test]
    fn one_back_within_the_grace_was_never_offline() {
        let w = watch(&[Event::ServerOnline, Event::LobbyOpened]);
        let mut d = Detector::default();
        d.whole([(K, &entry(false, 1))], &w, 0.0);
        assert!(d.changed([K], [], &w, 1_000.0).is_empty(), "left");
        let n = d.changed([], [(K, &entry(true, 1))], &w, 30_000.0);
        assert_eq!(
            events(n),
            [Event::LobbyOpened],
            "back in 29 s: only its lobby"
        );
        d.changed([K], [], &w, 40_000.0);
        let n = d.changed([], [(K, &entry(true, 1))], &w, 40_000.0 + 60_000.0);
        assert_eq!(events(n), [Event::ServerOnline], "gone a minute");
    }

    #[test]
    fn lobby_and_players_fire_on_the_change_and_once_per_cooldown() {
        let w = watch(&[Event::LobbyOpened, Event::PlayersReached]);
        let mut d = Detector::default();
        d.whole([(K, &entry(false, 1))], &w, 0.0);
        let n = d.changed([K], [(K, &entry(true, 3))], &w, 1_000.0);
        assert_eq!(events(n), [Event::LobbyOpened, Event::PlayersReached]);
        assert!(
            d.changed([K], [(K, &entry(true, 4))], &w, 2_000.0)
                .is_empty(),
            "above"
        );
        // Flapping: closes and opens again within the cooldown.
        d.changed([K], [(K, &entry(false, 1))], &w, 3_000.0);
        assert!(d
            .changed([K], [(K, &entry(true, 3))], &w, 4_000.0)
            .is_empty());
        d.changed([K], [(K, &entry(false, 1))], &w, 5_000.0);
        let later = 1_000.0 + (DEFAULT_COOLDOWN * 1000) as f64;
        let n = d.changed([K], [(K, &entry(true, 3))], &w, later);
        assert_eq!(events(n), [Event::LobbyOpened, Event::PlayersReached]);
    }

    #[test]
    fn only_the_events_watched_show() {
        let w = watch(&[Event::PlayersReached]);
        let mut d = Detector::default();
        d.whole([], &w, 0.0);
        assert!(
            d.changed([], [(K, &entry(true, 3))], &w, 1.0).is_empty(),
            "online"
        );
        assert!(d.changed([K], [(K, &entry(false, 3))], &w, 2.0).is_empty());
        let n = d.changed([K], [(K, &entry(false, 2)), (K, &entry(false, 2))], &w, 3.0);
        assert!(n.is_empty(), "falling");
        let n = d.changed([K], [(K, &entry(false, 3))], &w, 4.0);
        assert_eq!(events(n), [Event::PlayersReached]);
    }

    #[test]
    fn a_whole_list_after_a_change_compares_like_a_delta() {
        let w = watch(&[Event::LobbyOpened]);
        let mut d = Detector::default();
        d.whole([(K, &entry(false, 1))], &w, 0.0);
        let n = d.whole([(K, &entry(true, 1))], &w, 1.0);
        assert_eq!(events(n), [Event::LobbyOpened]);
        // A watch removed is forgotten; made again, it learns afresh.
        d.whole([(K, &entry(false, 1))], &[], 2.0);
        assert!(d.whole([(K, &entry(true, 1))], &w, 3.0).is_empty());
    }
}
