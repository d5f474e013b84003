//! One refresh round: every source queried at once, every query bounded by
//! the round's deadline, a master's list screened before any of it is
//! queried, every server's answers cut to its share of the push
//! ([`super::budget`]).

use std::{
    net::{SocketAddr, SocketAddrV4},
    time::Duration,
};

use futures_util::future::join_all;
use gamequery::{
    a2s, gameagent,
    screen::{screen_master_list, ListPolicy},
    Client,
};
use master::logtext::cut;
use protocol::bridge::{GamePlayer, GameRule, GameServer, GameSourceKind};
use tokio::time::{timeout_at, Instant};
use tracing::debug;

use super::{
    budget::{fit, Budget},
    error::{ServerError, SourceError},
    round::{skipped_text, Round, ServerRound, SourceRound},
};
use crate::config::Config;

/// Queries every source once. Whatever has not answered by
/// `config.game_refresh_deadline` is offline ("no answer in time"), so a
/// round never takes longer than that, however many silent servers a master
/// lists.
pub async fn refresh(client: &Client, config: &Config) -> Round {
    let deadline = Instant::now() + config.game_refresh_deadline;
    let policy = ListPolicy {
        allow_private: config.game_allow_private,
        max_servers: config.game_max_servers,
    };
    let a2s = join_all(config.a2s.iter().map(|l| a2s_source(client, l, deadline)));
    let masters = join_all(
        config
            .gameagent_masters
            .iter()
            .map(|l| gameagent_source(client, l, policy, deadline)),
    );
    let (a2s, masters) = tokio::join!(a2s, masters);
    Round {
        sources: a2s.into_iter().chain(masters).collect(),
    }
}

/// Resolves `host:port`, preferring IPv4 (GameAgent lists only IPv4).
async fn resolve(label: &str, deadline: Instant) -> Result<SocketAddr, SourceError> {
    let addrs: Vec<SocketAddr> = timeout_at(deadline, tokio::net::lookup_host(label))
        .await
        .map_err(|_| SourceError::Deadline)?
        .map_err(|source| SourceError::Resolve {
            label: label.to_owned(),
            source,
        })?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| SourceError::NoAddress {
            label: label.to_owned(),
        })
}

fn millis(d: Duration) -> Option<u32> {
    u32::try_from(d.as_millis()).ok()
}

/// An operator's `--a2s` target: queried whatever its address.
async fn a2s_source(client: &Client, label: &str, deadline: Instant) -> SourceRound {
    let mut source = SourceRound::new(GameSourceKind::A2s, label);
    match resolve(label, deadline).await {
        Ok(addr) => source
            .servers
            .push(a2s_server(client, addr, deadline).await),
        Err(e) => source.error = Some(e),
    }
    source
}

async fn a2s_server(client: &Client, addr: SocketAddr, deadline: Instant) -> ServerRound {
    let (info, rtt) = match timeout_at(deadline, client.a2s_info(addr)).await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return ServerRound::offline(addr, addr.port(), e.into()),
        Err(_) => return ServerRound::offline(addr, addr.port(), ServerError::Deadline),
    };
    let the_ship = info.app_id.is_some_and(a2s::is_the_ship);
    // The info arrived: the server is online even if its players or rules
    // are cut off by the deadline.
    let (players, rules) = tokio::join!(
        timeout_at(deadline, client.a2s_players(addr, the_ship)),
        timeout_at(deadline, client.a2s_rules(addr))
    );
    let players = match players {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            debug!(%addr, error = %cut(&e), "A2S_PLAYER failed");
            Vec::new()
        }
        Err(_) => Vec::new(),
    };
    let rules = match rules {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            debug!(%addr, error = %cut(&e), "A2S_RULES failed");
            Vec::new()
        }
        Err(_) => Vec::new(),
    };
    let server = GameServer {
        address: Some(addr.ip().to_string()),
        port: Some(info.port.unwrap_or(addr.port())),
        online: true,
        error: None,
        name: info.name,
        map: info.map,
        game: info.game,
        mode: String::new(),
        version: info.version.unwrap_or_default(),
        players: u32::from(info.players),
        max_players: u32::from(info.max_players),
        bots: u32::from(info.bots),
        password: Some(info.password),
        vac: Some(info.vac),
        ping_ms: millis(rtt),
        player_list: players
            .into_iter()
            .map(|p| GamePlayer {
                name: p.name,
                score: i64::from(p.score),
                // The Ship and bots send -1; fractions are noise.
                time_secs: (p.duration.is_finite() && p.duration >= 0.0)
                    .then(|| p.duration.min(u32::MAX as f32) as u32),
                ping_ms: None,
                deaths: p.deaths,
                money: p.money,
            })
            .collect(),
        rules: rules
            .into_iter()
            .map(|r| GameRule {
                name: r.name,
                value: r.value,
            })
            .collect(),
    };
    ServerRound::online(fit(server, &Budget::NAMED))
}

/// A master's list, screened by `policy`, and each kept server's answers.
async fn gameagent_source(
    client: &Client,
    label: &str,
    policy: ListPolicy,
    deadline: Instant,
) -> SourceRound {
    let mut source = SourceRound::new(GameSourceKind::GameAgent, label);
    let master = match resolve(label, deadline).await {
        Ok(addr) => addr,
        Err(e) => {
            source.error = Some(e);
            return source;
        }
    };
    let list = match timeout_at(deadline, client.gameagent_master(master)).await {
        Ok(Ok(list)) => list,
        Ok(Err(e)) => {
            source.error = Some(e.into());
            return source;
        }
        Err(_) => {
            source.error = Some(SourceError::Deadline);
            return source;
        }
    };
    let screened = screen_master_list(&list, policy);
    if let Some(note) = skipped_text(&screened.skipped) {
        debug!(master = %label, listed = list.len(), "{note}");
    }
    source.skipped = screened.skipped;
    source.servers = join_all(
        screened
            .servers
            .into_iter()
            .map(|s| gameagent_server(client, s, deadline)),
    )
    .await;
    source
}

async fn gameagent_server(client: &Client, game: SocketAddrV4, deadline: Instant) -> ServerRound {
    let query = SocketAddr::V4(SocketAddrV4::new(
        *game.ip(),
        gameagent::query_port(game.port()),
    ));
    let game_addr = SocketAddr::V4(game);
    let (status, rtt) = match timeout_at(deadline, client.gameagent_status(query)).await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => return ServerRound::offline(game_addr, game.port(), e.into()),
        Err(_) => return ServerRound::offline(game_addr, game.port(), ServerError::Deadline),
    };
    let players = match timeout_at(deadline, client.gameagent_players(query)).await {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => {
            debug!(%query, error = %cut(&e), "GameAgent player query failed");
            Vec::new()
        }
        Err(_) => Vec::new(),
    };
    let server = GameServer {
        address: Some(game.ip().to_string()),
        port: Some(game.port()),
        online: true,
        error: None,
        name: status.session_name,
        map: status.level,
        game: status.game_name,
        mode: status.game_type,
        version: status.version,
        players: status.players,
        max_players: status.max_players,
        bots: 0,
        password: None,
        vac: None,
        ping_ms: millis(rtt),
        player_list: players
            .into_iter()
            .map(|p| GamePlayer {
                name: p.name.unwrap_or_default(),
                score: i64::from(p.frags),
                time_secs: None,
                ping_ms: Some(p.ping),
                deaths: None,
                money: None,
            })
            .collect(),
        rules: status
            .keys
            .into_iter()
            .map(|(name, value)| GameRule { name, value })
            .collect(),
    };
    ServerRound::online(fit(server, &Budget::LISTED))
}
