use std::{fs, sync::atomic::Ordering::Relaxed};

use protocol::api::{HistoryRange, LobbyPoint, ServerPoint};

use super::*;
use crate::db::store::range::{Tier, Window};

/// The store's tests, each run on the embedded database (one test each)
/// and on a scratch PostgreSQL cluster (one cluster, a database each).
macro_rules! on_both_engines {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[test]
                fn $name() {
                    super::$name(super::History::open(None, super::MINUTE).unwrap());
                }
            )*
        }

        #[test]
        fn on_postgres() {
            let cluster = lobby_testkit::postgres::Cluster::start().unwrap();
            $(
                let url = cluster.create_database(stringify!($name)).unwrap();
                let url: DatabaseUrl = url.parse().unwrap();
                $name(History::connect(&url, MINUTE));
            )*
        }
    };
}

on_both_engines!(
    samples_give_points_offline_shares_and_gaps,
    twins_count_once_and_a_renamed_server_keeps_its_history,
    old_samples_go_in_batches_and_their_sums_stay,
    hours_fold_into_days_once_even_when_the_clock_goes_back,
    a_sample_is_recorded_once,
    hostile_rows_are_errors_not_panics,
    push_key_and_subscriptions_are_kept_and_read_back_bounded,
    push_subscriptions_not_renewed_expire_and_a_source_is_purged,
    a_push_subscription_costs_about_4_kb,
    briefly_seen_servers_are_forgotten_after_a_day,
    a_sample_is_written_in_place,
    the_vacuum_does_not_wait_for_readers,
    peaks_rooms_and_the_week,
    a_cards_slot_is_held_by_one_at_a_time_and_taken_when_its_lease_ends,
    a_delivery_is_written_only_for_a_webhook_enabled_when_it_was_decided,
);

const MINUTE: Duration = Duration::from_secs(60);

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
/// A whole day, so that hourly and daily intervals start at round numbers.
const T0: i64 = 19_000 * 24 * HOUR;

fn server(key: u64, name: &str, players: u32) -> ServerSample {
    ServerSample {
        key,
        name: name.into(),
        address: Some("192.0.2.1".into()),
        port: Some(20000 + key as u16),
        players,
        max: 4,
        open: players < 4,
        mode: 1,
    }
}

fn samples_give_points_offline_shares_and_gaps(history: History) {
    // Minute 0: a and b; minute 1: a only; minutes 2-4: bridge down; 5: a, b.
    history
        .write(T0, &[server(1, "a", 2), server(2, "b", 4)])
        .unwrap();
    history.write(T0 + MIN, &[server(1, "a", 3)]).unwrap();
    history
        .write(T0 + 5 * MIN, &[server(1, "a", 1), server(2, "b", 4)])
        .unwrap();
    let now = T0 + 5 * MIN + 1;
    let mut store = history.store();

    let (step, lobby) = store.lobby_history(HistoryRange::Hour, MIN, now).unwrap();
    assert_eq!(step, MIN);
    assert_eq!(
        lobby,
        [
            LobbyPoint(T0, 2.0, 6.0, Some(6)),
            LobbyPoint(T0 + MIN, 1.0, 3.0, Some(3)),
            LobbyPoint(T0 + 5 * MIN, 2.0, 5.0, Some(5)),
        ],
        "no invented points"
    );

    let b = store.server(2).unwrap().unwrap();
    assert_eq!(b.first_seen, T0);
    assert_eq!(b.last_seen, T0 + 5 * MIN);
    let (_, points) = store
        .server_history(2, b.first_seen, HistoryRange::Hour, MIN, now)
        .unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(points[1], ServerPoint(T0 + MIN, None, None, 0.0, 0.0, None));
    assert_eq!(
        points[2],
        ServerPoint(T0 + 5 * MIN, Some(4.0), Some(4), 1.0, 0.0, Some(4))
    );

    // The hourly tier: means over the hour's three samples.
    let (step, points) = store
        .server_history(1, T0, HistoryRange::Week, MIN, now)
        .unwrap();
    assert_eq!(step, HOUR);
    assert_eq!(points.len(), 1);
    let ServerPoint(_, players, _, online, _, _) = points[0];
    assert_eq!((players, online), (Some(2.0), 1.0));
    let (_, points) = store
        .server_history(2, T0, HistoryRange::Month, MIN, now)
        .unwrap();
    let ServerPoint(_, _, _, online, _, _) = points[0];
    assert_eq!(online, 0.667);
    let (step, lobby) = store.lobby_history(HistoryRange::Year, MIN, now).unwrap();
    assert_eq!((step, lobby.len()), (24 * HOUR, 1));
    let LobbyPoint(_, servers, _, _) = lobby[0];
    assert_eq!(servers, 1.667);
    assert!(store.server(3).unwrap().is_none());
}

fn twins_count_once_and_a_renamed_server_keeps_its_history(history: History) {
    history
        .write(T0, &[server(1, "a", 2), server(1, "a twin", 3)])
        .unwrap();
    history.write(T0 + MIN, &[server(1, "renamed", 1)]).unwrap();
    let mut store = history.store();
    let row = store.server(1).unwrap().unwrap();
    assert_eq!(row.sample.name, "renamed");
    assert_eq!(row.first_seen, T0);
    let (_, lobby) = store
        .lobby_history(HistoryRange::Hour, MIN, T0 + MIN)
        .unwrap();
    let LobbyPoint(_, servers, players, _) = lobby[0];
    assert_eq!((servers, players), (1.0, 2.0));
}

fn old_samples_go_in_batches_and_their_sums_stay(history: History) {
    // Seen two hours before too: not a brief server, which would be
    // forgotten after a day.
    history.write(T0 - 2 * HOUR, &[server(1, "a", 1)]).unwrap();
    for i in 0..10 {
        history.write(T0 + i * MIN, &[server(1, "a", 1)]).unwrap();
    }
    let later = T0 + 49 * HOUR;
    let mut store = history.store();
    assert_eq!(
        store.prune(later, 4).unwrap(),
        6,
        "the server's two rows of hours, four lobby samples"
    );
    assert_eq!(store.prune(later, 100).unwrap(), 7);
    assert_eq!(store.prune(later, 100).unwrap(), 0);
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Hour, MIN, later)
        .unwrap();
    assert!(points.is_empty(), "samples are gone");
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Week, MIN, later)
        .unwrap();
    assert_eq!(points.len(), 1, "the hour's point stays");
    let ServerPoint(_, _, _, online, _, _) = points[0];
    assert_eq!(online, 1.0);
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Week, MIN, T0 + 91 * 24 * HOUR)
        .unwrap();
    assert!(points.is_empty());
    store.prune(T0 + 91 * 24 * HOUR, 100).unwrap();
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Year, MIN, T0 + 91 * 24 * HOUR)
        .unwrap();
    assert_eq!(points.len(), 1, "the day's point stays 2 years");
}

/// A webhook row for the card slot tests, made at `T0`.
fn card_webhook(id: &str) -> crate::db::store::WebhookRow {
    crate::db::store::WebhookRow {
        id: id.into(),
        spec: "{}".into(),
        secret: "whsec_AAAA".into(),
        enabled: true,
        failures: 0,
        created_ms: T0,
    }
}

/// A status card's send slot (migration 9): of two claims in one window
/// one wins; a holder's late write keeps another's claim; a claim whose
/// lease ended is taken; a slot given back unsent is free at once.
fn a_cards_slot_is_held_by_one_at_a_time_and_taken_when_its_lease_ends(history: History) {
    use crate::db::store::{CardClaim, CardRow};
    const EVERY: i64 = 10_000;
    const LEASE: i64 = 30_000;
    let store = crate::db::store::WebhookStore::new(history.database().clone());
    let id = "wh_00000000000000c4";
    let row = card_webhook(id);
    assert!(store.insert(&row, 50).unwrap());
    let claim = |now| store.claim_card(id, now, EVERY, LEASE).unwrap();
    let first = T0 + LEASE;
    assert_eq!(
        claim(T0),
        CardClaim::Won {
            msg: None,
            claim: first
        }
    );
    // Another bridge, a moment later: it waits for the window the holder
    // starts.
    assert_eq!(claim(T0 + 1), CardClaim::Later { at: T0 + 1 + EVERY });
    assert_eq!(
        claim(T0 + LEASE - 1),
        CardClaim::Later {
            at: T0 + LEASE - 1 + EVERY
        }
    );
    // The holder died: its claim is taken when its lease ends.
    let second = T0 + LEASE + LEASE;
    assert_eq!(
        claim(T0 + LEASE),
        CardClaim::Won {
            msg: None,
            claim: second
        }
    );
    // The first holder, late after all, stores its post but takes
    // nothing from the second.
    assert!(store
        .set_card(id, Some("42"), T0 + LEASE + 5, first)
        .unwrap());
    store.release_card(id, first).unwrap();
    let card = store.card(id).unwrap().unwrap();
    assert_eq!(
        card,
        CardRow {
            msg: Some("42".into()),
            edit_ms: T0 + LEASE + 5,
            claim_ms: second
        }
    );
    let edited = T0 + LEASE + 10;
    assert!(store.set_card(id, Some("42"), edited, second).unwrap());
    assert_eq!(store.card(id).unwrap().unwrap().claim_ms, 0, "given back");
    let claim = |now| store.claim_card(id, now, EVERY, LEASE).unwrap();
    assert_eq!(
        claim(edited + 1),
        CardClaim::Later { at: edited + EVERY },
        "within its window"
    );
    let third = edited + EVERY + LEASE;
    assert_eq!(
        claim(edited + EVERY),
        CardClaim::Won {
            msg: Some("42".into()),
            claim: third
        }
    );
    // Given back unsent: the next claim needs no new window.
    store.release_card(id, third).unwrap();
    assert!(matches!(
        store
            .claim_card(id, edited + EVERY + 1, EVERY, LEASE)
            .unwrap(),
        CardClaim::Won { .. }
    ));
    assert_eq!(
        store.claim_card("wh_gone", T0, EVERY, LEASE).unwrap(),
        CardClaim::Gone
    );
    assert!(!store.set_card("wh_gone", None, T0, 1).unwrap());
}

/// Bridges (each its own connection from `open`) claiming a status
/// card's slot at the same moment: in every round exactly one wins.
fn bridges_claiming_a_card_at_once_win_it_once(open: impl Fn() -> History) {
    use crate::db::store::CardClaim;
    const BRIDGES: usize = 4;
    const ROUNDS: i64 = 20;
    const EVERY: i64 = 10_000;
    const LEASE: i64 = 30_000;
    let bridges: Vec<_> = (0..BRIDGES)
        .map(|_| crate::db::store::WebhookStore::new(open().database().clone()))
        .collect();
    let id = "wh_00000000000000c5";
    let row = card_webhook(id);
    assert!(bridges[0].insert(&row, 50).unwrap());
    let start = std::sync::Barrier::new(BRIDGES);
    for round in 0..ROUNDS {
        // Each round after the last one's claim ended, never given back.
        let now = T0 + round * LEASE;
        let won = std::thread::scope(|scope| {
            let claims: Vec<_> = bridges
                .iter()
                .map(|b| {
                    let start = &start;
                    scope.spawn(move || {
                        start.wait();
                        b.claim_card(id, now, EVERY, LEASE).unwrap()
                    })
                })
                .collect();
            claims
                .into_iter()
                .map(|c| c.join().unwrap())
                .filter(|c| matches!(c, CardClaim::Won { .. }))
                .count()
        });
        assert_eq!(won, 1, "round {round}");
    }
}

#[test]
fn bridges_claiming_a_card_at_once_on_one_file_win_it_once() {
    let dir = tempfile::tempdir().unwrap();
    bridges_claiming_a_card_at_once_win_it_once(|| {
        History::open(Some(dir.path()), MINUTE).unwrap()
    });
}

#[test]
fn bridges_claiming_a_card_at_once_on_postgres_win_it_once() {
    let cluster = lobby_testkit::postgres::Cluster::start().unwrap();
    let url: DatabaseUrl = cluster.create_database("card").unwrap().parse().unwrap();
    bridges_claiming_a_card_at_once_win_it_once(|| History::connect(&url, MINUTE));
}

/// Peaks at every resolution, the week's hours, and what rows recorded
/// before peaks (migration 7) give: `null` where they cannot tell.
fn peaks_rooms_and_the_week(history: History) {
    use protocol::api::WeekHour;
    // T0 is a Saturday; 19:00 UTC.
    let h19 = T0 + 19 * HOUR;
    history
        .write(h19, &[server(1, "a", 1), server(2, "b", 4)])
        .unwrap();
    history.write(h19 + MIN, &[server(1, "a", 3)]).unwrap();
    history.write(h19 + 2 * MIN, &[server(1, "a", 2)]).unwrap();
    history.write(h19 + HOUR, &[server(1, "a", 0)]).unwrap();
    let now = h19 + 2 * HOUR + 1;
    let mut store = history.store();
    let peaks = |points: &[ServerPoint]| points.iter().map(|p| (p.0, p.5)).collect::<Vec<_>>();
    let (_, points) = store
        .server_history(1, h19, HistoryRange::Day, MIN, now)
        .unwrap();
    assert_eq!(
        peaks(&points),
        [
            (h19, Some(1)),
            (h19 + MIN, Some(3)),
            (h19 + 2 * MIN, Some(2)),
            (h19 + HOUR, Some(0))
        ]
    );
    let (_, points) = store
        .server_history(1, h19, HistoryRange::Week, MIN, now)
        .unwrap();
    assert_eq!(peaks(&points), [(h19, Some(3)), (h19 + HOUR, Some(0))]);
    assert_eq!(points[0].1, Some(2.0), "the mean beside the peak");
    let (step, points) = store
        .server_history(1, h19, HistoryRange::Quarter, MIN, now)
        .unwrap();
    assert_eq!(step, 2 * HOUR);
    assert_eq!(
        peaks(&points),
        [(T0 + 18 * HOUR, Some(3)), (T0 + 20 * HOUR, Some(0))]
    );
    let (_, points) = store
        .server_history(1, h19, HistoryRange::Year, MIN, now)
        .unwrap();
    assert_eq!(peaks(&points), [(T0, Some(3))]);
    let (_, points) = store
        .server_history(2, h19, HistoryRange::Year, MIN, now)
        .unwrap();
    assert_eq!(peaks(&points), [(T0, Some(4))]);
    let lobby_peaks = |range| {
        let (_, points) = store_lobby(&history, range, now);
        points.iter().map(|p| p.3).collect::<Vec<_>>()
    };
    drop(store);
    assert_eq!(
        lobby_peaks(HistoryRange::Day),
        [Some(5), Some(3), Some(2), Some(0)]
    );
    assert_eq!(lobby_peaks(HistoryRange::Week), [Some(5), Some(0)]);
    assert_eq!(lobby_peaks(HistoryRange::Year), [Some(5)]);

    // The week: Saturday 19:00 and 20:00 UTC, nothing else.
    let sat19 = 5 * 24 + 19;
    let mut store = history.store();
    let week = store.server_week(1, now).unwrap();
    assert_eq!(week.len(), 168);
    assert_eq!(
        week[sat19],
        WeekHour(Some(2.0), Some(3), Some(1.0), Some(1.0))
    );
    assert_eq!(
        week[sat19 + 1],
        WeekHour(Some(0.0), Some(0), Some(1.0), Some(0.0)),
        "open, but nobody to play with"
    );
    let empty = WeekHour(None, None, None, None);
    assert_eq!(week.iter().filter(|&&h| h != empty).count(), 2);
    let week = store.server_week(2, now).unwrap();
    assert_eq!(
        week[sat19],
        WeekHour(Some(4.0), Some(4), Some(0.0), Some(0.0)),
        "full"
    );
    assert_eq!(
        week[sat19 + 1],
        WeekHour(None, None, Some(0.0), Some(0.0)),
        "offline while the lobby was sampled"
    );
    let lobby = store.lobby_week(now).unwrap();
    assert_eq!(
        lobby[sat19],
        WeekHour(Some(3.333), Some(5), Some(1.0), Some(1.0))
    );
    assert_eq!(
        lobby[sat19 + 1],
        WeekHour(Some(0.0), Some(0), Some(1.0), Some(0.0))
    );
    assert_eq!(lobby.iter().filter(|&&h| h != empty).count(), 2);
    // 28 days later the hours have left the week.
    let later = now + 28 * 24 * HOUR;
    assert!(store.lobby_week(later).unwrap().iter().all(|&h| h == empty));

    // Rows as recorded before peaks: hour 19 folded in the older 10-byte
    // layout (3 samples, 6 players, max 4, open 3), the lobby's unknown.
    let old = [19, 3, 0, 6, 0, 0, 0, 4, 3, 0];
    let sql = format!(
        "UPDATE server_days SET peak = NULL, hours = {} WHERE key = 1; \
         UPDATE lobby_hourly SET peak = NULL, open_n = NULL, room_n = NULL WHERE t = {h19}; \
         UPDATE lobby_daily SET peak = NULL;",
        store.blob_literal(&old)
    );
    store.execute_raw(&sql).unwrap();
    let (_, points) = store
        .server_history(1, h19, HistoryRange::Week, MIN, now)
        .unwrap();
    assert_eq!(peaks(&points), [(h19, None), (h19 + HOUR, Some(0))]);
    assert_eq!(points[0].1, Some(2.0), "the mean is still known");
    let (_, points) = store
        .server_history(1, h19, HistoryRange::Year, MIN, now)
        .unwrap();
    assert_eq!(peaks(&points), [(T0, None)], "a day with an hour unknown");
    let (_, points) = store
        .server_history(1, h19, HistoryRange::Day, MIN, now)
        .unwrap();
    assert_eq!(points[1].5, Some(3), "samples have their players");
    let week = store.server_week(1, now).unwrap();
    assert_eq!(week[sat19], WeekHour(Some(2.0), None, Some(1.0), None));
    assert_eq!(
        week[sat19 + 1],
        WeekHour(Some(0.0), Some(0), Some(1.0), Some(0.0))
    );
    let lobby = store.lobby_week(now).unwrap();
    assert_eq!(lobby[sat19], WeekHour(Some(3.333), None, None, None));
    drop(store);
    assert_eq!(lobby_peaks(HistoryRange::Week), [None, Some(0)]);
    assert_eq!(lobby_peaks(HistoryRange::Year), [None]);
}

fn store_lobby(history: &History, range: HistoryRange, now: i64) -> (i64, Vec<LobbyPoint>) {
    history.store().lobby_history(range, MIN, now).unwrap()
}

#[test]
fn history_survives_reopening_and_damage_is_an_error_at_start() {
    let dir = tempfile::tempdir().unwrap();
    {
        let history = History::open(Some(dir.path()), Duration::from_secs(60)).unwrap();
        history.write(T0, &[server(1, "a", 2)]).unwrap();
    }
    let history = History::open(Some(dir.path()), Duration::from_secs(60)).unwrap();
    assert_eq!(
        history.store().server(1).unwrap().unwrap().sample.players,
        2
    );
    drop(history);

    let corrupt = tempfile::tempdir().unwrap();
    fs::write(corrupt.path().join(DB_FILE), vec![0x5a; 8192]).unwrap();
    let err = History::open(Some(corrupt.path()), Duration::from_secs(60))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(DB_FILE) && err.contains("not a database"),
        "{err}"
    );

    let newer = tempfile::tempdir().unwrap();
    {
        let conn = rusqlite::Connection::open(newer.path().join(DB_FILE)).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let err = History::open(Some(newer.path()), Duration::from_secs(60))
        .unwrap_err()
        .to_string();
    assert!(err.contains("newer than this bridge"), "{err}");
}

#[test]
fn samples_are_taken_in_the_middle_of_their_interval() {
    let minute = Duration::from_secs(60);
    let delay = |now| first_sample_delay(minute, now).as_millis() as i64;
    assert_eq!(delay(T0), 30_000);
    assert_eq!(delay(T0 + 30_000), 0);
    assert_eq!(delay(T0 + 30_001), 59_999);
    assert_eq!(delay(T0 + 59_999), 30_001);
    // Every first sample, then every interval after it, is mid-interval.
    for now in [T0 + 1, T0 + 12_345, T0 + 45_000] {
        let t = now + delay(now);
        assert_eq!(t.rem_euclid(MIN), 30_000, "from {now}");
    }
    assert_eq!(
        first_sample_delay(Duration::from_secs(1), T0 + 400).as_millis(),
        100
    );
}

/// Writes `servers` sampled at `t` the way schema version 1 stored them:
/// one row per server per sample, hour and day.
fn record_v1(conn: &rusqlite::Connection, t: i64, servers: &[ServerSample]) {
    let (hour, day) = (t - t % HOUR, t - t % (24 * HOUR));
    let (mut count, mut players) = (0i64, 0i64);
    for s in servers {
        let key = s.key as i64;
        conn.execute(
            "INSERT INTO server_samples VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![key, t, s.players, s.max, s.open, s.mode],
        )
        .unwrap();
        count += 1;
        players += i64::from(s.players);
        conn.execute(
            "INSERT INTO servers VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) \
             ON CONFLICT (key) DO UPDATE SET name = ?2, address = ?3, port = ?4, \
             players = ?5, max = ?6, open = ?7, mode = ?8, last_seen = ?9",
            rusqlite::params![key, s.name, s.address, s.port, s.players, s.max, s.open, s.mode, t],
        )
        .unwrap();
        for (table, at) in [("server_hourly", hour), ("server_daily", day)] {
            conn.execute(
                &format!(
                    "INSERT INTO {table} VALUES (?1, ?2, 1, ?3, ?4, ?5) ON CONFLICT (key, t) \
                     DO UPDATE SET online_n = online_n + 1, players_sum = players_sum + ?3, \
                     max = MAX(max, ?4), open_n = open_n + ?5"
                ),
                rusqlite::params![key, at, s.players, s.max, s.open],
            )
            .unwrap();
        }
    }
    conn.execute(
        "INSERT INTO lobby_samples VALUES (?1, ?2, ?3)",
        rusqlite::params![t, count, players],
    )
    .unwrap();
    for (table, at) in [("lobby_hourly", hour), ("lobby_daily", day)] {
        conn.execute(
            &format!(
                "INSERT INTO {table} VALUES (?1, 1, ?2, ?3) ON CONFLICT (t) DO UPDATE SET \
                 n = n + 1, servers_sum = servers_sum + ?2, players_sum = players_sum + ?3"
            ),
            rusqlite::params![at, count, players],
        )
        .unwrap();
    }
}

#[test]
fn a_version_1_history_opens_packed_with_the_same_answers() {
    let samples: Vec<(i64, Vec<ServerSample>)> = vec![
        (T0 + 30_000, vec![server(1, "a", 2), server(2, "b", 4)]),
        (T0 + MIN + 30_000, vec![server(1, "a", 3)]),
        (
            T0 + 5 * MIN + 30_000,
            vec![server(1, "a", 1), server(2, "b", 4)],
        ),
        (T0 + 2 * HOUR + 30_000, vec![server(2, "b", 0)]),
        (T0 + 25 * HOUR + 30_000, vec![server(1, "a renamed", 5)]),
    ];
    let now = T0 + 25 * HOUR + MIN;
    let old = tempfile::tempdir().unwrap();
    {
        let conn = rusqlite::Connection::open(old.path().join(DB_FILE)).unwrap();
        conn.execute_batch(include_str!("../../../migrations/001_history.sql"))
            .unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        for (t, servers) in &samples {
            record_v1(&conn, *t, servers);
        }
    }
    let migrated = History::open(Some(old.path()), Duration::from_secs(60)).unwrap();
    let fresh = History::open(None, Duration::from_secs(60)).unwrap();
    for (t, servers) in &samples {
        fresh.write(*t, servers).unwrap();
    }
    let (mut migrated_store, mut fresh) = (migrated.store(), fresh.store());
    // Peaks of hours folded before they were recorded are unknown; the
    // samples' own are their players.
    let unpeaked = |(step, points): (i64, Vec<ServerPoint>), range: HistoryRange| {
        let folded = range.tier() != Tier::Samples;
        let points: Vec<ServerPoint> = points
            .into_iter()
            .map(|ServerPoint(t, p, m, on, op, peak)| {
                ServerPoint(t, p, m, on, op, if folded { None } else { peak })
            })
            .collect();
        (step, points)
    };
    for range in HistoryRange::ALL {
        assert_eq!(
            migrated_store.lobby_history(range, MIN, now).unwrap(),
            fresh.lobby_history(range, MIN, now).unwrap(),
            "{range:?}: the lobby's peaks come from its samples, all still kept"
        );
        for key in [1, 2] {
            let row = migrated_store.server(key).unwrap().unwrap();
            assert_eq!(Some(&row), fresh.server(key).unwrap().as_ref());
            let answer = migrated_store
                .server_history(key, row.first_seen, range, MIN, now)
                .unwrap();
            assert!(!answer.1.is_empty(), "{range:?} {key}");
            let fresh_answer = fresh
                .server_history(key, row.first_seen, range, MIN, now)
                .unwrap();
            if range.tier() != Tier::Samples {
                assert!(fresh_answer.1.iter().any(|p| p.5.is_some()));
                // The live hour, not folded yet, has its samples' peak.
                let step = range.window(MIN, now).1;
                let live = T0 + 25 * HOUR;
                assert!(answer
                    .1
                    .iter()
                    .filter(|p| p.0 < live - live.rem_euclid(step))
                    .all(|p| p.5.is_none()));
            }
            assert_eq!(
                unpeaked(answer, range),
                unpeaked(fresh_answer, range),
                "{range:?} {key}"
            );
        }
    }
    drop(migrated_store);
    drop(migrated);
    let conn = rusqlite::Connection::open(old.path().join(DB_FILE)).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 9, "migrated to the latest schema");
    let old_tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_schema WHERE name IN \
             ('server_samples', 'server_hourly', 'server_daily')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(old_tables, 0, "the version 1 tables are dropped");
}

fn hours_fold_into_days_once_even_when_the_clock_goes_back(history: History) {
    history.write(T0, &[server(1, "a", 2)]).unwrap();
    history.write(T0 + HOUR, &[server(1, "a", 4)]).unwrap();
    // The clock set back into the hour folded already, then forward.
    history.write(T0 + MIN, &[server(1, "a", 6)]).unwrap();
    history.write(T0 + 2 * HOUR, &[server(1, "a", 1)]).unwrap();
    let now = T0 + 2 * HOUR + 1;
    let mut store = history.store();
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Week, MIN, now)
        .unwrap();
    let players: Vec<Option<f64>> = points.iter().map(|&ServerPoint(_, p, ..)| p).collect();
    assert_eq!(players, [Some(4.0), Some(4.0), Some(1.0)]);
    assert!(
        points
            .iter()
            .all(|&ServerPoint(_, _, _, online, _, _)| online == 1.0),
        "{points:?}"
    );
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Year, MIN, now)
        .unwrap();
    assert_eq!(points.len(), 1);
    let ServerPoint(_, players, _, online, _, _) = points[0];
    assert_eq!(players, Some(3.25), "each sample counted once");
    assert_eq!(online, 1.0);
}

/// The same sample time twice (two bridges, or a handover): the second
/// changes nothing and says so.
fn a_sample_is_recorded_once(history: History) {
    assert_eq!(
        history.write(T0, &[server(1, "a", 2)]).unwrap(),
        Recorded::Written
    );
    assert_eq!(
        history.write(T0, &[server(1, "a", 3)]).unwrap(),
        Recorded::Already
    );
    history.write(T0 + MIN, &[server(1, "a", 4)]).unwrap();
    let mut store = history.store();
    let (_, lobby) = store
        .lobby_history(HistoryRange::Week, MIN, T0 + MIN)
        .unwrap();
    assert_eq!(lobby, [LobbyPoint(T0, 1.0, 3.0, Some(4))], "2 and 4, not 3");
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Hour, MIN, T0 + MIN)
        .unwrap();
    assert_eq!(points.len(), 2);
    let ServerPoint(_, players, ..) = points[0];
    assert_eq!(players, Some(2.0));
    assert_eq!(history.counters().samples.load(Relaxed), 2);
}

/// Rows no bridge writes (a damaged or hostile database): an error or a
/// bounded value, never a panic or an unbounded allocation.
fn hostile_rows_are_errors_not_panics(history: History) {
    history
        .write(T0, &[server(1, "a", 2), server(2, "b", 1)])
        .unwrap();
    let mut store = history.store();
    let (f, big) = (store.false_literal(), store.repeat_blob(1 << 20));
    store
        .execute_raw(&format!(
            "UPDATE servers SET name = '', max = 9999 WHERE key = 1; \
             UPDATE servers SET port = 70000 WHERE key = 2; \
             INSERT INTO servers (key, name, address, port, players, max, open, mode, first_seen, last_seen) \
             VALUES (3, 'c', 'not an address!', 1, -5, 4, {f}, 1, 0, 0); \
             UPDATE server_hours SET samples = {big} WHERE key = 1;",
        ))
        .unwrap();
    for key in [1, 2, 3] {
        assert!(
            matches!(store.server(key), Err(StoreError::InvalidRow { .. })),
            "key {key}"
        );
    }
    // A 1 MiB hour is cut to the most an hour can hold.
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Hour, MIN, T0 + MIN)
        .unwrap();
    assert!(points.len() <= 2, "{}", points.len());
}

/// An event's delivery is written only to a webhook that is there and
/// was enabled when the event was decided: not to one disabled since, nor
/// to one enabled again after it.
fn a_delivery_is_written_only_for_a_webhook_enabled_when_it_was_decided(history: History) {
    use crate::db::store::{NewDelivery, WebhookRow, WebhookStore};
    let hooks = WebhookStore::new(history.database().clone());
    let id = "wh_00000000000000aa";
    let hook = WebhookRow {
        id: id.into(),
        spec: "{}".into(),
        secret: "whsec_x".into(),
        enabled: true,
        failures: 0,
        created_ms: 1_000,
    };
    assert!(hooks.insert(&hook, 50).unwrap());
    let delivery = |event: &str, at_ms: i64| NewDelivery {
        channel: "webhook",
        target: id.into(),
        msg_id: format!("msg_{event}"),
        event: event.into(),
        key: 7,
        body: "{}".into(),
        at_ms,
        until_ms: at_ms,
        dedupe_ms: at_ms,
        writer: "w".into(),
        max_pending: i64::MAX,
    };
    let written = |d: NewDelivery| history.database().lock().enqueue(&[d]).unwrap();
    assert_eq!(
        written(delivery("before-created", 500)),
        0,
        "decided before it was made"
    );
    assert_eq!(written(delivery("server-online", 2_000)), 1, "enabled");
    assert!(hooks.set_state(id, false, 0).unwrap());
    assert_eq!(written(delivery("server-offline", 3_000)), 0, "disabled");
    // Enabled again now (far after 4,000): an event decided before is not
    // written.
    assert!(hooks.set_state(id, true, 0).unwrap());
    assert_eq!(
        written(delivery("server-full", 4_000)),
        0,
        "decided while disabled"
    );
    assert_eq!(
        written(delivery("server-full", now_ms())),
        1,
        "enabled again"
    );
    assert_eq!(
        written(NewDelivery {
            target: "wh_00000000000000bb".into(),
            ..delivery("server-online", now_ms())
        }),
        0,
        "no such webhook"
    );
}

/// SQLite keeps any type in any column: a text where a server's port,
/// maximum or mode goes is an error when read back, never a 0.
#[test]
fn a_text_in_a_servers_number_is_an_error_on_one_file() {
    let history = History::open(None, MINUTE).unwrap();
    history
        .write(
            T0,
            &[server(1, "a", 2), server(2, "b", 1), server(3, "c", 1)],
        )
        .unwrap();
    let mut store = history.store();
    store
        .execute_raw(
            "UPDATE servers SET port = 'x' WHERE key = 1; \
             UPDATE servers SET max = 'x' WHERE key = 2; \
             UPDATE servers SET mode = 'x' WHERE key = 3;",
        )
        .unwrap();
    for key in [1, 2, 3] {
        let read = store.server(key);
        assert!(read.is_err(), "key {key}: {read:?}");
    }
}

/// Web Push's rows (`push::store`): the VAPID key is created once, a
/// subscription is replaced in place, and texts and keys no bridge writes
/// are read back cut to their bound.
fn push_subscriptions_not_renewed_expire_and_a_source_is_purged(history: History) {
    use crate::db::store::{PushRow as Row, PushStore};
    let push = PushStore::new(history.database().clone());
    let row = |id: &str, t: i64, source: &str| Row {
        id: format!("{id:0>16}"),
        subscription: "{}".into(),
        watches: "[]".into(),
        source: source.into(),
        auth: "secret".into(),
        created_ms: t,
        updated_ms: t,
    };
    let ids = |rows: Vec<Row>| -> Vec<String> { rows.into_iter().map(|r| r.id).collect() };
    // Made at 10, 20, 25 and 30; the first renewed at 40.
    for (id, t, source) in [
        ("a", 10, "192.0.2.1"),
        ("b", 20, "192.0.2.1"),
        ("d", 25, "2001:db8::"),
        ("c", 30, "192.0.2.1"),
    ] {
        assert!(push.put(&row(id, t, source)).unwrap());
    }
    assert!(push
        .put(&Row {
            created_ms: 10,
            ..row("a", 40, "192.0.2.1")
        })
        .unwrap());
    // Nothing made or renewed before 20; then, with the clock at 26, the
    // least recently renewed first, as many as asked for.
    assert!(push.expire(20, 10).unwrap().is_empty());
    assert_eq!(push.expire(26, 1).unwrap(), [format!("{:0>16}", "b")]);
    assert_eq!(push.expire(26, 10).unwrap(), [format!("{:0>16}", "d")]);
    assert_eq!(
        ids(push.load().unwrap()),
        [format!("{:0>16}", "a"), format!("{:0>16}", "c")]
    );
    // Every bridge hears of each deletion.
    let (_, changes) = history.store().changes(0, 100).unwrap();
    for gone in ["b", "d"] {
        let id = format!("{gone:0>16}");
        assert!(
            changes.iter().any(|c| c.kind == "push" && c.id == id),
            "{id}: {changes:?}"
        );
    }
    // Purging a source takes its oldest first, and only its own.
    assert!(push.put(&row("e", 50, "198.51.100.7")).unwrap());
    assert_eq!(
        push.purge("192.0.2.1", 1).unwrap(),
        [format!("{:0>16}", "a")]
    );
    assert_eq!(
        push.purge("192.0.2.1", 10).unwrap(),
        [format!("{:0>16}", "c")]
    );
    assert!(push.purge("192.0.2.1", 10).unwrap().is_empty());
    assert_eq!(ids(push.load().unwrap()), [format!("{:0>16}", "e")]);
}

/// What one stored subscription costs the database, measured on a
/// browser's real shapes: an FCM endpoint, and the most watches a request
/// may carry (20, each with all four events and a threshold). SECURITY.md
/// states the figure.
fn a_push_subscription_costs_about_4_kb(history: History) {
    use crate::db::store::{PushRow as Row, PushStore};
    let push = PushStore::new(history.database().clone());
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
    const N: usize = 1_000;
    let b64 = |n: usize, seed: usize| -> String {
        let bytes: Vec<u8> = (0..n).map(|i| (i * 31 + seed * 7) as u8).collect();
        URL_SAFE_NO_PAD.encode(bytes)
    };
    let engine = if history.store().postgres().is_some() {
        "PostgreSQL"
    } else {
        "SQLite"
    };
    let mut per_row = Vec::new();
    for (round, watches) in [(0, 20u64), (1, 1)] {
        let watches = serde_json::Value::Array(
            (0..watches)
                .map(|w| {
                    serde_json::json!({"key": format!("{:016x}", 0x00ab_cdef_0123_4567_u64 + w),
                        "events": ["lobby-opened", "players-reached", "server-offline", "server-online"],
                        "threshold": 4})
                })
                .collect(),
        )
        .to_string();
        let size = || history.store().size_bytes().unwrap();
        let before = size();
        for i in round * N..(round + 1) * N {
            let endpoint = format!(
                "https://fcm.googleapis.com/fcm/send/{}:APA91b{}",
                b64(8, i),
                b64(110, i)
            );
            let subscription = serde_json::json!({"endpoint": endpoint, "expirationTime": null,
                "keys": {"p256dh": b64(65, i), "auth": b64(16, i)}})
            .to_string();
            let row = Row {
                id: format!("{i:016x}"),
                subscription,
                watches: watches.clone(),
                source: format!("2001:db8:{i:x}::"),
                auth: b64(16, i),
                created_ms: i as i64,
                updated_ms: i as i64,
            };
            assert!(push.put(&row).unwrap());
        }
        per_row.push((size() - before) / N as u64);
    }
    eprintln!(
        "{engine}: a push subscription costs {} bytes with 20 watches, {} with one",
        per_row[0], per_row[1]
    );
    assert!((500..=6_000).contains(&per_row[0]), "{per_row:?}");
    assert!(per_row[1] <= per_row[0], "{per_row:?}");
}

fn push_key_and_subscriptions_are_kept_and_read_back_bounded(history: History) {
    use crate::db::store::{PushRow as Row, PushStore};
    let push = PushStore::new(history.database().clone());
    assert_eq!(push.vapid_secret(&[7; 32]).unwrap(), vec![7; 32]);
    assert_eq!(push.vapid_secret(&[8; 32]).unwrap(), vec![7; 32]);
    let row = |id: &str, t: i64| Row {
        id: id.into(),
        subscription: "{}".into(),
        watches: "[]".into(),
        source: "192.0.2.1".into(),
        auth: "secret".into(),
        created_ms: t,
        updated_ms: t,
    };
    assert!(push.put(&row("00000000000000aa", 1)).unwrap());
    assert!(push
        .put(&Row {
            watches: "[1]".into(),
            ..row("00000000000000aa", 5)
        })
        .unwrap());
    let stolen = Row {
        auth: "another".into(),
        watches: "[2]".into(),
        ..row("00000000000000aa", 6)
    };
    assert!(!push.put(&stolen).unwrap(), "another auth replaces nothing");
    let rows = push.load().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].created_ms, rows[0].updated_ms), (1, 5));
    assert_eq!(rows[0].watches, "[1]");
    let long = "x".repeat(20_000);
    let big = history.store().repeat_blob(1 << 16);
    history
        .store()
        .execute_raw(&format!(
            "INSERT INTO push_subscriptions \
             (id, subscription, watches, source, auth, created_ms, updated_ms) \
             VALUES ('zz', '{long}', '{long}', '{long}', '{long}', 2, 2); \
             UPDATE push_vapid SET secret = {big};"
        ))
        .unwrap();
    let rows = push.load().unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows[1].subscription.len() <= 8 * 1024 && rows[1].source.len() <= 8 * 1024);
    assert_eq!(
        push.vapid_secret(&[9; 32]).unwrap().len(),
        64,
        "cut to 64 bytes"
    );
    assert!(!push.delete("00000000000000aa", Some("another")).unwrap());
    assert!(push.delete("zz", None).unwrap());
    assert!(!push.delete("zz", None).unwrap());
}

const DAY: i64 = 24 * HOUR;

fn briefly_seen_servers_are_forgotten_after_a_day(history: History) {
    // a: listed for two hours; b: for ten minutes; c: ten minutes, then
    // again two hours later (a life of two hours).
    for i in (0..=120).step_by(10) {
        let mut listed = vec![server(1, "a", 1)];
        if i <= 10 {
            listed.push(server(2, "b", 1));
        }
        if i <= 10 || i == 120 {
            listed.push(server(3, "c", 1));
        }
        history.write(T0 + i * MIN, &listed).unwrap();
    }
    let b_last = T0 + 10 * MIN;
    let mut store = history.store();
    let prune_all = |store: &mut Store, now: i64| {
        for _ in 0..20 {
            if store.prune(now, 100).unwrap() == 0 {
                return;
            }
        }
        panic!("pruning did not end");
    };
    // Within a day of its last sighting, b stays.
    prune_all(&mut store, b_last + DAY - MIN);
    assert!(store.server(2).unwrap().is_some(), "b went too early");
    // Then it is forgotten, details and history (its key answers 404, and
    // no row of it is left to give a point where it was online); a and c
    // stay.
    let later = b_last + DAY + MIN;
    prune_all(&mut store, later);
    assert!(store.server(2).unwrap().is_none(), "b is still there");
    for range in [HistoryRange::Day, HistoryRange::Month, HistoryRange::Year] {
        let (_, points) = store.server_history(2, T0, range, MIN, later).unwrap();
        assert!(
            points
                .iter()
                .all(|&ServerPoint(_, players, _, online, _, _)| online == 0.0 && players.is_none()),
            "b's {range:?}: {points:?}"
        );
    }
    for key in [1, 3] {
        let row = store.server(key).unwrap().expect("a long life stays");
        let (_, points) = store
            .server_history(key, row.first_seen, HistoryRange::Month, MIN, later)
            .unwrap();
        assert!(!points.is_empty(), "server {key} lost its history");
    }
    // The lobby's totals still count b.
    let (_, lobby) = store
        .lobby_history(HistoryRange::Month, MIN, later)
        .unwrap();
    let LobbyPoint(t, servers, _, _) = lobby[0];
    assert_eq!(t, T0);
    assert_eq!(
        servers, 1.667,
        "three servers at two of six samples: {lobby:?}"
    );

    // A host churning new keys: the stored servers stay about a day's.
    drop(store);
    let churn_from = later + HOUR;
    let mut t = churn_from;
    for n in 0..(3 * 24) {
        let keys: Vec<ServerSample> = (0..10)
            .map(|i| server(1_000 + n * 10 + i, "churn", 1))
            .collect();
        history.write(t, &keys).unwrap();
        t += HOUR;
    }
    let mut store = history.store();
    prune_all(&mut store, t);
    let kept: Vec<u64> = (1_000..1_000 + 3 * 24 * 10)
        .filter(|&k| store.server(k).unwrap().is_some())
        .collect();
    assert!(
        kept.len() <= 26 * 10 && kept.len() >= 24 * 10,
        "{} churned keys kept: a day's are about 240",
        kept.len()
    );
}

/// The embedded database capped at what it holds: new servers keep coming
/// (ten new keys each sample), and the servers recorded before go on being
/// recorded at every sample; room comes from servers not listed any more,
/// the least seen and newest first.
#[test]
fn a_full_database_keeps_recording_the_servers_already_there() {
    let dir = tempfile::tempdir().unwrap();
    let history = History::open(Some(dir.path()), MINUTE).unwrap();
    let regulars: Vec<ServerSample> = (1..=20).map(|k| server(k, "regular", 2)).collect();
    // An hour of samples: the regulars, and ten passing keys each.
    let mut t = T0;
    let mut passing = 100u64;
    for _ in 0..60 {
        let mut listed = regulars.clone();
        listed.extend((0..10).map(|i| server(passing + i, "passing", 1)));
        passing += 10;
        history.write(t, &listed).unwrap();
        t += MIN;
    }
    let passed_before = passing;
    history.store().checkpoint().unwrap();
    let size = history.store().size_bytes().unwrap();
    history.cap(size).unwrap();

    // Two more hours with fifty new keys a sample: every sample is
    // recorded, with every regular in it.
    for _ in 0..120 {
        let mut listed = regulars.clone();
        listed.extend((0..50).map(|i| server(passing + i, "new", 1)));
        passing += 50;
        assert_eq!(history.write(t, &listed).unwrap(), Recorded::Written);
        t += MIN;
    }
    let mut store = history.store();
    for s in &regulars {
        let row = store.server(s.key).unwrap().expect("a regular stays");
        assert_eq!(row.last_seen, t - MIN, "regular {} not recorded", s.key);
        let (_, points) = store
            .server_history(s.key, row.first_seen, HistoryRange::Day, MIN, t)
            .unwrap();
        assert_eq!(points.len(), 180, "regular {}: every sample", s.key);
    }
    // Room came from the passing keys, the newest first.
    let (gone, kept): (Vec<u64>, Vec<u64>) =
        (100..passed_before).partition(|&k| store.server(k).unwrap().is_none());
    assert!(!gone.is_empty(), "nothing was given up");
    // Ten passing keys a sample: a key's sample is (key - 100) / 10.
    let sample = |k: &u64| (k - 100) / 10;
    if let (Some(oldest_gone), Some(newest_kept)) =
        (gone.iter().map(sample).min(), kept.iter().map(sample).max())
    {
        assert!(
            oldest_gone >= newest_kept,
            "a key of sample {newest_kept} kept while one of the later sample {oldest_gone} went"
        );
    }
    let new_kept = (passed_before..passing)
        .filter(|&k| store.server(k).unwrap().is_some())
        .count();
    eprintln!(
        "capped at {size} bytes: {} passing keys given up, {} kept; {new_kept} of {} new keys recorded",
        gone.len(),
        kept.len(),
        passing - passed_before
    );
}

/// The players of server `key` at minute `m` of the tests' hours.
fn players_at(key: u64, m: i64) -> u32 {
    ((m as u64 * 7 + key) % 5) as u32
}

/// Writes a sample a minute, in the middle of each, for `minutes` from
/// `from`: servers 1 and 2 in every one but server 2 not at minute 10 of
/// an hour, server 3 only from minute 20.
fn write_minutes(history: &History, from: i64, minutes: std::ops::Range<i64>) {
    for m in minutes {
        let t = from + m * MIN + 30_000;
        let minute = (t % HOUR) / MIN;
        let mut listed = vec![server(1, "a", players_at(1, m))];
        if minute != 10 {
            listed.push(server(2, "b", players_at(2, m)));
        }
        if minute >= 20 {
            listed.push(server(3, "c", players_at(3, m)));
        }
        history.write(t, &listed).unwrap();
    }
}

/// The vacuum after a sample (PostgreSQL's) runs on a connection of its
/// own: it finishes while a reader holds the store, and is counted. On
/// SQLite there is nothing to vacuum, and nothing is counted.
fn the_vacuum_does_not_wait_for_readers(history: History) {
    write_minutes(&history, T0, 0..2);
    let vacuums = history.vacuum.lock().unwrap().is_some();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        let reader = history.store();
        s.spawn(|| tx.send(history.tidy()));
        let tidied = rx.recv_timeout(Duration::from_secs(30));
        // Let go of the store before failing, or the vacuum's thread
        // would wait for it forever.
        drop(reader);
        tidied
            .expect("the vacuum waited for the reader")
            .expect("vacuumed");
    });
    let counted = history.counters().tidy_micros.load(Relaxed);
    assert_eq!(counted > 0, vacuums, "counted {counted} µs");
}

/// In PostgreSQL an hour's row is made at its first sample with a slot for
/// each sample still to come in the hour, and every later sample is
/// written into it in place: a sample that made a row grow (which moves
/// the row off its page and leaves a dead version behind) fails here. In
/// SQLite a row holds only its records: one that holds an empty slot
/// fails.
fn a_sample_is_written_in_place(history: History) {
    use crate::db::store::packed::SAMPLE_BYTES;
    if !history.store().keeps_rows_in_place() {
        write_minutes(&history, T0, 0..60);
        let mut store = history.store();
        for (key, records) in [(1, 60), (2, 59), (3, 40)] {
            let row = store.hour_row(key, T0).unwrap().unwrap();
            assert_eq!(row.len(), records * SAMPLE_BYTES, "key {key}");
        }
        return;
    }
    // The hour before: 60 samples.
    write_minutes(&history, T0, 0..60);
    let hour = T0 + HOUR;
    let mut sizes = std::collections::HashMap::new();
    for m in 0..60 {
        write_minutes(&history, hour, m..m + 1);
        let mut store = history.store();
        for key in [1, 2, 3] {
            let Some(row) = store.hour_row(key, hour).unwrap() else {
                assert!(key == 3 && m < 20, "key {key} at minute {m}");
                continue;
            };
            let size = *sizes.entry(key).or_insert(row.len());
            assert_eq!(row.len(), size, "key {key}'s row grew at minute {m}");
        }
    }
    assert_eq!(
        sizes[&1],
        60 * SAMPLE_BYTES,
        "made for the hour's 60 samples"
    );
    assert_eq!(sizes[&2], 60 * SAMPLE_BYTES);
    assert_eq!(sizes[&3], 40 * SAMPLE_BYTES, "first listed at minute 20");
    // Every sample reads back, the empty slot of the one that missed
    // server 2 included.
    let now = hour + HOUR - 1;
    let mut store = history.store();
    for key in [1, 2, 3] {
        let (_, points) = store
            .server_history(key, T0, HistoryRange::Hour, MIN, now)
            .unwrap();
        let players: Vec<Option<f64>> = points
            .iter()
            .filter(|&&ServerPoint(t, ..)| t >= hour)
            .map(|&ServerPoint(_, players, ..)| players)
            .collect();
        assert_eq!(players.len(), 60, "key {key}");
        for (m, &players) in players.iter().enumerate() {
            let m = m as i64;
            let listed = match key {
                2 => m != 10,
                3 => m >= 20,
                _ => true,
            };
            let expected = listed.then(|| f64::from(players_at(key, m)));
            assert_eq!(players, expected, "key {key} minute {m}");
        }
    }
}

/// Everything the store answers of servers 1-3 and the lobby at `now`.
fn answers(history: &History, now: i64) -> Vec<String> {
    let mut store = history.store();
    let mut out = Vec::new();
    for range in [
        HistoryRange::Hour,
        HistoryRange::Day,
        HistoryRange::Week,
        HistoryRange::Month,
    ] {
        out.push(format!(
            "{:?}",
            store.lobby_history(range, MIN, now).unwrap()
        ));
        for key in [1, 2, 3] {
            let row = store.server(key).unwrap().unwrap();
            out.push(format!("{row:?}"));
            let answer = store
                .server_history(key, row.first_seen, range, MIN, now)
                .unwrap();
            out.push(format!("{range:?} {key}: {answer:?}"));
        }
    }
    out
}

/// A history written before migration 5 (hour rows without empty slots,
/// as `downgrade` leaves them) reads back the same once migrated; in
/// PostgreSQL the newest hour's rows get their empty slots and are then
/// written in place, in SQLite they keep holding only their records.
fn a_converted_history_reads_back_the_same(open: impl Fn() -> History, downgrade: String) {
    use crate::db::store::packed::SAMPLE_BYTES;
    let hour = T0 + HOUR;
    let now = hour + 21 * MIN;
    let before = {
        let history = open();
        write_minutes(&history, T0, 0..60);
        write_minutes(&history, hour, 0..20);
        let before = answers(&history, now);
        let mut store = history.store();
        store.execute_raw(&downgrade).unwrap();
        let row = store.hour_row(1, hour).unwrap().unwrap();
        assert_eq!(row.len(), 20 * SAMPLE_BYTES, "the old layout");
        before
    };
    let history = open();
    assert_eq!(answers(&history, now), before, "the same answers");
    let slots = history.store().keeps_rows_in_place();
    let row = history.store().hour_row(1, hour).unwrap().unwrap();
    let (made, written) = if slots { (60, 60) } else { (20, 21) };
    assert_eq!(
        row.len(),
        made * SAMPLE_BYTES,
        "slots for the rest of the hour in PostgreSQL only"
    );
    write_minutes(&history, hour, 20..21);
    let mut store = history.store();
    assert_eq!(
        store.hour_row(1, hour).unwrap().unwrap().len(),
        written * SAMPLE_BYTES
    );
    let (_, points) = store
        .server_history(1, T0, HistoryRange::Hour, MIN, hour + 21 * MIN)
        .unwrap();
    assert_eq!(
        points
            .last()
            .and_then(|&ServerPoint(_, players, ..)| players),
        Some(f64::from(players_at(1, 20)))
    );
}

#[test]
fn a_converted_embedded_history_reads_back_the_same() {
    let dir = tempfile::tempdir().unwrap();
    a_converted_history_reads_back_the_same(
        || History::open(Some(dir.path()), MINUTE).unwrap(),
        "UPDATE server_hours SET samples = substr(samples, 1, instr(samples, X'FFFFFFFFFFFF') - 1) \
         WHERE instr(samples, X'FFFFFFFFFFFF') > 0; PRAGMA user_version = 4;"
            .to_owned() + UNDO_PEAKS,
    );
}

#[test]
fn a_converted_postgres_history_reads_back_the_same() {
    let cluster = lobby_testkit::postgres::Cluster::start().unwrap();
    let url: DatabaseUrl = cluster
        .create_database("converted")
        .unwrap()
        .parse()
        .unwrap();
    a_converted_history_reads_back_the_same(
        || History::connect(&url, MINUTE),
        "UPDATE server_hours SET samples = substring(samples FROM 1 FOR \
         position('\\xffffffffffff'::bytea IN samples) - 1) \
         WHERE position('\\xffffffffffff'::bytea IN samples) > 0; \
         DELETE FROM lobby_schema WHERE version >= 5;"
            .to_owned()
            + UNDO_PEAKS,
    );
}

/// What migration 7 added, taken away again (both engines).
const UNDO_PEAKS: &str = " ALTER TABLE server_days DROP COLUMN peak; \
     ALTER TABLE lobby_hourly DROP COLUMN peak; ALTER TABLE lobby_hourly DROP COLUMN open_n; \
     ALTER TABLE lobby_hourly DROP COLUMN room_n; ALTER TABLE lobby_daily DROP COLUMN peak;";
