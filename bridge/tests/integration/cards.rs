//! Cards (`docs/protocol.md` §2.6): `/card/{key}.png` and `/card.png`
//! against the real bridge, decoded as PNGs: 1200×630, a name of every
//! kind of text (right to left, CJK, emoji, 100 characters) drawn within
//! the card's margins, `ETag` and `304`, `Cache-Control`, the 404 of a key
//! never seen, the 429 of a spent budget, and a card drawn once per face
//! however often it is asked for.

use crate::common;

use std::net::{IpAddr, Ipv4Addr};

use common::*;

/// A second client address (loopback), for the budget's 429.
const OTHER: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3));
/// The margins the card keeps free of text, less a little for
/// anti-aliasing's edge (the bridge keeps 60 px).
const MARGIN: usize = 56;
/// The grey panel's rows: the name's.
const NAME_ROWS: std::ops::Range<usize> = 0..400;
/// Every row: the name, the mode and the message.
const ALL_ROWS: std::ops::Range<usize> = 0..630;

/// Cards the bridge drew so far.
async fn drawn(bridge: &TestBridge) -> f64 {
    metric(bridge.addr, "bridge_cards_drawn_total").await
}

/// A header's value in a raw head (names compared without case).
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines().skip(1).find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// A decoded card: its width, height and RGB(A) pixels.
struct Image {
    width: usize,
    height: usize,
    channels: usize,
    pixels: Vec<u8>,
}

impl Image {
    fn decode(png_bytes: &[u8]) -> Self {
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().expect("a PNG");
        let mut pixels = vec![0; reader.output_buffer_size().expect("a size")];
        let info = reader.next_frame(&mut pixels).expect("its pixels");
        pixels.truncate(info.buffer_size());
        Image {
            width: info.width as usize,
            height: info.height as usize,
            channels: info.color_type.samples(),
            pixels,
        }
    }

    fn at(&self, x: usize, y: usize) -> &[u8] {
        let i = (y * self.width + x) * self.channels;
        &self.pixels[i..i + self.channels]
    }

    /// Pixels in `rows` and `columns` that differ from their row's
    /// background (the panels' colour is the same across a row): where
    /// text was drawn.
    fn drawn(
        &self,
        rows: std::ops::Range<usize>,
        columns: impl Iterator<Item = usize> + Clone,
    ) -> usize {
        rows.map(|y| {
            let background = self.at(self.width - 1, y);
            columns
                .clone()
                .filter(|&x| self.at(x, y) != background)
                .count()
        })
        .sum()
    }
}

#[tokio::test]
async fn every_kind_of_name_is_drawn_within_the_card() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let bridge = TestBridge::embedding(&master, history_config(&master, dir.path())).await;
    let names = [
        "Alpha".to_owned(),
        "שרת עברי مرحبا بكم في الخادم".to_owned(),
        "日本語のサーバー 中文服务器 한국어 서버".to_owned(),
        "🎮🔥 party 👨‍👩‍👧 ✨ Ünïcödé".to_owned(),
        "W".repeat(100),
        "mixed Ω Ж ש ع 中 🎮 "
            .repeat(5)
            .trim()
            .chars()
            .take(100)
            .collect(),
    ];
    let mut games = Vec::new();
    for (i, name) in names.iter().enumerate() {
        games.push(game_server(master.addr, name, 20001 + i as u16).await);
    }
    wait_registered(&master, names.len()).await;
    let listed = listed_keys(&bridge, names.len()).await;
    let mut paths: Vec<String> = listed
        .iter()
        .map(|(_, key)| format!("/card/{key}.png"))
        .collect();
    paths.push("/card.png".into());
    for path in &paths {
        let (status, head, body) = http_get(bridge.addr, path, "").await;
        assert_eq!(status, 200, "{path}: {}", String::from_utf8_lossy(&body));
        assert_eq!(header(&head, "content-type"), Some("image/png"), "{head}");
        let card = Image::decode(&body);
        assert_eq!((card.width, card.height), (1200, 630), "{path}");
        let left = card.drawn(ALL_ROWS, 0..MARGIN);
        let right = card.drawn(ALL_ROWS, card.width - MARGIN..card.width);
        assert_eq!((left, right), (0, 0), "{path}: text in the margins");
        let name = card.drawn(NAME_ROWS, MARGIN..card.width - MARGIN);
        assert!(name > 500, "{path}: no name drawn ({name} pixels)");
    }
    drop(games);
    bridge.shutdown().await;
}

#[tokio::test]
async fn cards_are_cached_revalidated_and_refused_like_badges() {
    let master = TestMaster::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut c = history_config(&master, dir.path());
    c.api_rate_per_sec = 1;
    c.api_burst = 20;
    let bridge = TestBridge::embedding(&master, c).await;
    let mut game = game_server(master.addr, "Alpha", 20001).await;
    wait_registered(&master, 1).await;
    let key = listed_keys(&bridge, 1).await[0].1.clone();
    let path = format!("/card/{key}.png");

    let (status, head, body) = http_get(bridge.addr, &path, "").await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&head, "cache-control"),
        Some("public, max-age=60"),
        "{head}"
    );
    let etag = header(&head, "etag").expect("an ETag").to_owned();
    assert_eq!(drawn(&bridge).await, 1.0);
    // Asked again: the same bytes, not drawn again; revalidated: 304.
    let again = http_get(bridge.addr, &path, "").await;
    assert_eq!((again.0, &again.2), (200, &body));
    let (status, _, empty) =
        http_get(bridge.addr, &path, &format!("If-None-Match: {etag}\r\n")).await;
    assert_eq!((status, empty.len()), (304, 0));
    assert_eq!(drawn(&bridge).await, 1.0);

    // A change of another server leaves this card's face, and its PNG, as
    // they were; a change of its own draws it anew.
    let other = game_server(master.addr, "Beta", 20002).await;
    wait_registered(&master, 2).await;
    listed_keys(&bridge, 2).await;
    let after = http_get(bridge.addr, &path, "").await;
    assert_eq!((after.0, &after.2), (200, &body));
    assert_eq!(drawn(&bridge).await, 1.0);
    let stats = r#"{"command":"msUpdateGameServerStats","content":{"players":{"current":3,"max":4},"isLobbyOpen":false,"gameplayMode":2}}"#;
    tokio::io::AsyncWriteExt::write_all(
        &mut game,
        format!("{}{stats}\n", stats.len() + 1).as_bytes(),
    )
    .await
    .unwrap();
    until_json(&bridge, &format!("/api/servers/{key}"), |s, _, v| {
        s == 200 && v["players"]["current"] == 3
    })
    .await;
    let changed = http_get(bridge.addr, &path, &format!("If-None-Match: {etag}\r\n")).await;
    assert_eq!(changed.0, 200, "a changed card is not 304");
    assert_ne!(header(&changed.1, "etag"), Some(etag.as_str()));
    assert_ne!(changed.2, body);
    assert_eq!(drawn(&bridge).await, 2.0);

    // Never seen: 404 as JSON, like a badge's.
    for missing in ["/card/0000000000000000.png", "/card/nothing", "/card/.png"] {
        let (status, head, body) = http_get(bridge.addr, missing, "").await;
        assert_eq!(status, 404, "{missing}");
        assert!(
            header(&head, "content-type").is_some_and(|t| t.starts_with("application/json")),
            "{missing}: {head}"
        );
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert!(v["error"].is_string(), "{v}");
    }

    // A spent budget: the address's tokens run out and it gets 429 with
    // Retry-After, for cards never drawn too (nothing drawn unpaid).
    let before = drawn(&bridge).await;
    let mut statuses = Vec::new();
    for n in 0..40u64 {
        let path = match n % 2 {
            0 => "/card.png".to_owned(),
            _ => format!("/card/{n:016x}.png"),
        };
        let (status, head, _) = http_request(OTHER, bridge.addr, "GET", &path, "").await;
        if status == 429 {
            assert!(header(&head, "retry-after").is_some(), "{head}");
        }
        statuses.push(status);
    }
    assert!(
        statuses.contains(&429),
        "the budget never ran out: {statuses:?}"
    );
    assert!(
        drawn(&bridge).await <= before + 1.0,
        "only the lobby's card may be drawn"
    );
    drop((game, other));
    bridge.shutdown().await;
}
