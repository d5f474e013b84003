use std::fs;

use super::*;

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

#[test]
fn samples_give_points_offline_shares_and_gaps() {
    let history = History::open(None, Duration::from_secs(60)).unwrap();
    // Minute 0: a and b; minute 1: a only; minutes 2-4: bridge down; 5: a, b.
    history
        .write(T0, &[server(1, "a", 2), server(2, "b", 4)])
        .unwrap();
    history.write(T0 + MIN, &[server(1, "a", 3)]).unwrap();
    history
        .write(T0 + 5 * MIN, &[server(1, "a", 1), server(2, "b", 4)])
        .unwrap();
    let now = T0 + 5 * MIN + 1;
    let store = history.store();

    let (step, lobby) = store.lobby_history(Range::Hour, MIN, now).unwrap();
    assert_eq!(step, MIN);
    let times: Vec<i64> = lobby.iter().map(|p| p.t).collect();
    assert_eq!(times, [T0, T0 + MIN, T0 + 5 * MIN], "no invented points");
    assert_eq!((lobby[0].servers, lobby[0].players), (2.0, 6.0));
    assert_eq!((lobby[1].servers, lobby[1].players), (1.0, 3.0));

    let b = store.server(2).unwrap().unwrap();
    assert_eq!(b.first_seen, T0);
    assert_eq!(b.last_seen, T0 + 5 * MIN);
    let (_, points) = store
        .server_history(2, b.first_seen, Range::Hour, MIN, now)
        .unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(
        points[1],
        ServerPoint {
            t: T0 + MIN,
            players: None,
            max: None,
            online: 0.0,
            open: 0.0
        }
    );
    assert_eq!(points[2].players, Some(4.0));
    assert_eq!((points[2].online, points[2].open), (1.0, 0.0));

    // The hourly tier: means over the hour's three samples.
    let (step, points) = store.server_history(1, T0, Range::Week, MIN, now).unwrap();
    assert_eq!(step, HOUR);
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].players, Some(2.0));
    assert_eq!(points[0].online, 1.0);
    let (_, points) = store.server_history(2, T0, Range::Month, MIN, now).unwrap();
    assert_eq!(points[0].online, 0.667);
    let (step, lobby) = store.lobby_history(Range::Year, MIN, now).unwrap();
    assert_eq!((step, lobby.len()), (24 * HOUR, 1));
    assert_eq!(lobby[0].servers, 1.667);
    assert!(store.server(3).unwrap().is_none());
}

#[test]
fn twins_count_once_and_a_renamed_server_keeps_its_history() {
    let history = History::open(None, Duration::from_secs(60)).unwrap();
    history
        .write(T0, &[server(1, "a", 2), server(1, "a twin", 3)])
        .unwrap();
    history.write(T0 + MIN, &[server(1, "renamed", 1)]).unwrap();
    let store = history.store();
    let row = store.server(1).unwrap().unwrap();
    assert_eq!(row.sample.name, "renamed");
    assert_eq!(row.first_seen, T0);
    let (_, lobby) = store.lobby_history(Range::Hour, MIN, T0 + MIN).unwrap();
    assert_eq!((lobby[0].servers, lobby[0].players), (1.0, 2.0));
}

#[test]
fn old_samples_go_in_batches_and_their_sums_stay() {
    let history = History::open(None, Duration::from_secs(60)).unwrap();
    for i in 0..10 {
        history.write(T0 + i * MIN, &[server(1, "a", 1)]).unwrap();
    }
    let later = T0 + 49 * HOUR;
    let mut store = history.store();
    assert_eq!(
        store.prune(later, 4).unwrap(),
        8,
        "four of each sample table"
    );
    assert_eq!(store.prune(later, 100).unwrap(), 12);
    assert_eq!(store.prune(later, 100).unwrap(), 0);
    let (_, points) = store
        .server_history(1, T0, Range::Hour, MIN, later)
        .unwrap();
    assert!(points.is_empty(), "samples are gone");
    let (_, points) = store
        .server_history(1, T0, Range::Week, MIN, later)
        .unwrap();
    assert_eq!(points.len(), 1, "the hour's point stays");
    assert_eq!(points[0].online, 1.0);
    let (_, points) = store
        .server_history(1, T0, Range::Week, MIN, T0 + 91 * 24 * HOUR)
        .unwrap();
    assert!(points.is_empty());
    store.prune(T0 + 91 * 24 * HOUR, 100).unwrap();
    let (_, points) = store
        .server_history(1, T0, Range::Year, MIN, T0 + 91 * 24 * HOUR)
        .unwrap();
    assert_eq!(points.len(), 1, "the day's point stays 2 years");
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
