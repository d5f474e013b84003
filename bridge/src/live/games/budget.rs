//! What one server may take of every `bridgeGameServers` push. A server's
//! replies are a stranger's, and a GameAgent master (another stranger)
//! decides how many servers there are: without a bound, one master listing
//! hostile servers made every viewer download hundreds of megabytes per
//! push. Whatever the decoders kept, [`fit`] cleans and cuts every text
//! field again, keeps the best-scoring players and the first rules up to a
//! count, and then fills the server's [`Budget`] in bytes: players first,
//! best score first, then rules in the server's order with the bytes left,
//! each list stopping at the first element that does not fit. So rules go
//! before any player does, and the lowest-scoring players before the
//! others.

use gamequery::limits::{best_scoring, clean_text, Limits};
use protocol::{
    bridge::{GamePlayer, GameRule, GameServer},
    json::json_len,
};

/// The most one server may take of a push.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Bytes of the server's JSON in the message (address and port
    /// included), players and rules included.
    pub bytes: usize,
    /// Players at most: the best-scoring.
    pub players: usize,
    /// Rules (status keys) at most: the first, in the server's order.
    pub rules: usize,
}

impl Budget {
    /// A server a GameAgent master listed: strangers decide how many there
    /// are (up to `--game-max-servers` per master), so each gets little:
    /// 512 of them make at most 1.8 MB. A real Serious Engine server (16
    /// players, a handful of status keys) takes under 2 KB.
    pub const LISTED: Self = Self {
        bytes: 3584,
        players: 64,
        rules: 64,
    };
    /// An `--a2s` server: the operator decides how many there are, and
    /// Source servers send a hundred or more rules worth seeing.
    pub const NAMED: Self = Self {
        bytes: 16 * 1024,
        players: 64,
        rules: 256,
    };
}

/// Characters of an error text (a server's or a source's) in a push; the
/// bridge writes these, but a reason can quote what a server sent.
pub const ERROR_CHARS: usize = 160;

/// The text limits [`fit`] applies, the decoders' defaults: idempotent, so
/// text the decoders already cut stays as it is.
const TEXT: Limits = Limits::DEFAULT;

/// `server` cut to `budget` (see the module): its JSON then takes at most
/// `budget.bytes`, as long as its own fields (cut to a few hundred bytes
/// each) leave room, and players and rules go first.
pub fn fit(mut server: GameServer, budget: &Budget) -> GameServer {
    for field in [
        &mut server.name,
        &mut server.map,
        &mut server.game,
        &mut server.mode,
        &mut server.version,
    ] {
        *field = clean_text(field, TEXT.text_chars);
    }
    if let Some(error) = &mut server.error {
        *error = clean_text(error, ERROR_CHARS);
    }
    let players = best_scoring(
        std::mem::take(&mut server.player_list),
        budget.players,
        |p| p.score,
    );
    let rules = std::mem::take(&mut server.rules);
    // Each element costs its JSON and a comma (one comma too many: the
    // estimate errs on the safe side).
    let mut room = budget.bytes.saturating_sub(json_len(&server));

    let mut players: Vec<GamePlayer> = players
        .into_iter()
        .map(|p| GamePlayer {
            name: clean_text(&p.name, TEXT.text_chars),
            ..p
        })
        .collect();
    let mut ranked: Vec<(i64, usize)> = players
        .iter()
        .enumerate()
        .map(|(i, p)| (p.score, i))
        .collect();
    ranked.sort_by_key(|&(score, i)| (std::cmp::Reverse(score), i));
    let mut keep = vec![false; players.len()];
    for (_, i) in ranked {
        let cost = players.get(i).map_or(usize::MAX, |p| json_len(p) + 1);
        if cost > room {
            break;
        }
        room -= cost;
        if let Some(k) = keep.get_mut(i) {
            *k = true;
        }
    }
    let mut kept = keep.into_iter();
    players.retain(|_| kept.next().unwrap_or(false));
    server.player_list = players;

    for rule in rules.into_iter().take(budget.rules) {
        let rule = GameRule {
            name: clean_text(&rule.name, TEXT.rule_name_chars),
            value: clean_text(&rule.value, TEXT.rule_value_chars),
        };
        let cost = json_len(&rule) + 1;
        if cost > room {
            break;
        }
        room -= cost;
        server.rules.push(rule);
    }
    server
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hostile(n: usize) -> String {
        "\u{1f}".repeat(n)
    }

    fn player(name: String, score: i64) -> GamePlayer {
        GamePlayer {
            name,
            score,
            ping_ms: Some(20),
            ..GamePlayer::default()
        }
    }

    /// What the decoders would never let through: megabytes of text,
    /// thousands of players and rules.
    fn huge() -> GameServer {
        GameServer {
            address: Some("203.0.113.7".into()),
            port: Some(25600),
            online: true,
            name: hostile(100_000),
            map: hostile(100_000),
            game: hostile(100_000),
            mode: hostile(100_000),
            version: hostile(100_000),
            players: 5000,
            max_players: 5000,
            player_list: (0..5000).map(|i| player(hostile(1000), i)).collect(),
            rules: (0..5000)
                .map(|_| GameRule {
                    name: hostile(1000),
                    value: hostile(1000),
                })
                .collect(),
            ..GameServer::default()
        }
    }

    fn encoded(s: &GameServer) -> String {
        serde_json::to_string(s).unwrap()
    }

    #[test]
    fn a_huge_server_fits_its_budget() {
        for budget in [Budget::LISTED, Budget::NAMED] {
            let s = fit(huge(), &budget);
            let json = encoded(&s);
            assert!(
                json.len() <= budget.bytes,
                "{} > {}",
                json.len(),
                budget.bytes
            );
            assert!(!json.contains("\\u001f"), "control characters left");
            assert_eq!(s.name.chars().count(), TEXT.text_chars);
            assert!(s.name.ends_with(gamequery::limits::ELLIPSIS));
            // Rules go first: players fill the room, the best first, and
            // rules only get what the most players allowed leave.
            assert!(!s.player_list.is_empty());
            if s.player_list.len() < budget.players {
                assert!(s.rules.is_empty(), "{} rules kept", s.rules.len());
            }
            let scores: Vec<i64> = s.player_list.iter().map(|p| p.score).collect();
            let n = scores.len() as i64;
            assert_eq!(scores, (5000 - n..5000).collect::<Vec<_>>());
            assert_eq!(s.players, 5000, "the server's own count stays");
        }
    }

    #[test]
    fn a_real_server_keeps_everything() {
        let s = GameServer {
            address: Some("203.0.113.7".into()),
            port: Some(25600),
            online: true,
            name: "Awesome; Server".into(),
            map: "Yodeller".into(),
            game: "serioussamse".into(),
            mode: "Fragmatch".into(),
            version: "1.10".into(),
            players: 16,
            max_players: 16,
            ping_ms: Some(40),
            player_list: (0..16)
                .map(|i| player(format!("Serious Sam number {i}"), i))
                .collect(),
            rules: [
                "players",
                "maxplayers",
                "level",
                "gametype",
                "version",
                "gamename",
            ]
            .iter()
            .map(|k| GameRule {
                name: (*k).into(),
                value: "Fragmatch".into(),
            })
            .collect(),
            ..GameServer::default()
        };
        assert_eq!(fit(s.clone(), &Budget::LISTED), s);
        assert!(encoded(&s).len() < 2048, "{}", encoded(&s).len());
    }

    #[test]
    fn counts_are_capped_before_bytes() {
        let s = GameServer {
            player_list: (0..100).map(|i| player(String::new(), i % 7)).collect(),
            rules: (0..100)
                .map(|i| GameRule {
                    name: i.to_string(),
                    value: String::new(),
                })
                .collect(),
            ..GameServer::default()
        };
        let budget = Budget {
            bytes: 1 << 20,
            players: 10,
            rules: 5,
        };
        let s = fit(s, &budget);
        assert_eq!(s.player_list.len(), 10);
        assert!(s.player_list.iter().all(|p| p.score == 6 || p.score == 5));
        let names: Vec<&str> = s.rules.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["0", "1", "2", "3", "4"]);
    }

    #[test]
    fn rules_are_dropped_before_players() {
        let s = GameServer {
            player_list: (0..20).map(|i| player(format!("p{i}"), i)).collect(),
            rules: (0..20)
                .map(|i| GameRule {
                    name: format!("rule{i}"),
                    value: "1".into(),
                })
                .collect(),
            ..GameServer::default()
        };
        let all = encoded(&s).len();
        let without_rules = encoded(&GameServer {
            rules: vec![],
            ..s.clone()
        })
        .len();
        // Room for every player and a few rules.
        let budget = Budget {
            bytes: without_rules + (all - without_rules) / 3,
            ..Budget::LISTED
        };
        let cut = fit(s.clone(), &budget);
        assert_eq!(cut.player_list, s.player_list);
        assert!(!cut.rules.is_empty() && cut.rules.len() < 20);
        assert_eq!(cut.rules[..], s.rules[..cut.rules.len()]);
        assert!(encoded(&cut).len() <= budget.bytes);
    }
}
