//! Other games' servers (Valve A2S, Serious Engine GameAgent), queried over
//! UDP in the background with the same shared-state design as the master
//! list: one refresher, a `watch` channel every WebSocket reads the newest
//! `bridgeGameServers` from. Off unless `--a2s` or `--gameagent-master` is
//! given.

use std::{
    net::{SocketAddr, SocketAddrV4},
    sync::Arc,
    time::Duration,
};

use futures_util::future::join_all;
use gamequery::{a2s, gameagent, Client, QueryOptions};
use protocol::bridge::{
    GamePlayer, GameRule, GameServer, GameServers, GameSource, GameSourceKind, GamesMessage,
};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::config::Config;

/// The latest `bridgeGameServers`, as admins and as viewers get it.
#[derive(Debug, Clone)]
pub struct GamesSnapshot {
    /// Increases with every change, so a connection knows what it has sent.
    pub seq: u64,
    /// With addresses.
    pub full: Utf8Bytes,
    /// Without addresses when `--hide-addresses` is set, else `full`.
    pub viewer: Utf8Bytes,
}

/// The refresher's output channel.
#[derive(Debug)]
pub struct Games {
    tx: watch::Sender<Option<GamesSnapshot>>,
    hide_addresses: bool,
}

impl Games {
    /// A refresher for `config`, or `None` when no source is configured.
    pub fn from_config(config: &Config) -> Option<Self> {
        if config.a2s.is_empty() && config.gameagent_masters.is_empty() {
            return None;
        }
        let (tx, _) = watch::channel(None);
        Some(Self {
            tx,
            hide_addresses: config.hide_addresses,
        })
    }

    /// A receiver for one connection; it starts at the current state.
    pub fn subscribe(&self) -> watch::Receiver<Option<GamesSnapshot>> {
        self.tx.subscribe()
    }

    /// Publishes a refresh; unchanged contents wake nobody.
    pub fn publish(&self, servers: GameServers) {
        let full = GamesMessage::GameServers(servers.clone()).to_json();
        if self
            .tx
            .borrow()
            .as_ref()
            .is_some_and(|s| s.full.as_str() == full)
        {
            return;
        }
        let viewer = if self.hide_addresses {
            let mut hidden = servers;
            for server in hidden.sources.iter_mut().flat_map(|s| s.servers.iter_mut()) {
                server.address = None;
                server.port = None;
            }
            Utf8Bytes::from(GamesMessage::GameServers(hidden).to_json())
        } else {
            Utf8Bytes::from(full.clone())
        };
        self.tx.send_modify(|s| {
            let seq = s.as_ref().map_or(1, |s| s.seq + 1);
            *s = Some(GamesSnapshot {
                seq,
                full: Utf8Bytes::from(full),
                viewer,
            });
        });
    }

    /// Refreshes every `game_poll_interval` until `cancel` fires.
    pub async fn run(self: Arc<Self>, config: Config, cancel: CancellationToken) {
        let client = Client::new(QueryOptions {
            timeout: config.game_query_timeout,
            retries: config.game_query_retries,
            layout: None,
            max_in_flight: config.game_query_concurrency,
        });
        loop {
            let servers = tokio::select! {
                s = refresh(&client, &config) => s,
                () = cancel.cancelled() => return,
            };
            self.publish(servers);
            tokio::select! {
                () = tokio::time::sleep(config.game_poll_interval) => {}
                () = cancel.cancelled() => return,
            }
        }
    }
}

/// Queries every source once.
pub async fn refresh(client: &Client, config: &Config) -> GameServers {
    let a2s = join_all(config.a2s.iter().map(|l| a2s_source(client, l)));
    let masters = join_all(
        config
            .gameagent_masters
            .iter()
            .map(|l| gameagent_source(client, l)),
    );
    let (a2s, masters) = tokio::join!(a2s, masters);
    GameServers {
        sources: a2s.into_iter().chain(masters).collect(),
    }
}

/// Resolves `host:port`, preferring IPv4 (GameAgent lists only IPv4).
async fn resolve(label: &str) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(label)
        .await
        .map_err(|e| format!("cannot resolve {label}: {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| format!("{label} has no address"))
}

fn millis(d: Duration) -> Option<u32> {
    u32::try_from(d.as_millis()).ok()
}

fn offline(addr: SocketAddr, port: u16, error: String) -> GameServer {
    GameServer {
        address: Some(addr.ip().to_string()),
        port: Some(port),
        online: false,
        error: Some(error),
        ..GameServer::default()
    }
}

async fn a2s_source(client: &Client, label: &str) -> GameSource {
    let mut source = GameSource {
        id: format!("a2s:{label}"),
        kind: GameSourceKind::A2s,
        label: label.to_owned(),
        error: None,
        servers: Vec::new(),
    };
    match resolve(label).await {
        Ok(addr) => source.servers.push(a2s_server(client, addr).await),
        Err(e) => source.error = Some(e),
    }
    source
}

async fn a2s_server(client: &Client, addr: SocketAddr) -> GameServer {
    let (info, rtt) = match client.a2s_info(addr).await {
        Ok(v) => v,
        Err(e) => return offline(addr, addr.port(), e.to_string()),
    };
    let the_ship = info.app_id.is_some_and(a2s::is_the_ship);
    let (players, rules) = tokio::join!(client.a2s_players(addr, the_ship), client.a2s_rules(addr));
    let players = players.unwrap_or_else(|e| {
        debug!(%addr, error = %e, "A2S_PLAYER failed");
        Vec::new()
    });
    let rules = rules.unwrap_or_else(|e| {
        debug!(%addr, error = %e, "A2S_RULES failed");
        Vec::new()
    });
    GameServer {
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
    }
}

async fn gameagent_source(client: &Client, label: &str) -> GameSource {
    let mut source = GameSource {
        id: format!("gameagent:{label}"),
        kind: GameSourceKind::GameAgent,
        label: label.to_owned(),
        error: None,
        servers: Vec::new(),
    };
    let master = match resolve(label).await {
        Ok(addr) => addr,
        Err(e) => {
            source.error = Some(e);
            return source;
        }
    };
    match client.gameagent_master(master).await {
        Ok(list) => {
            source.servers = join_all(list.into_iter().map(|s| gameagent_server(client, s))).await;
        }
        Err(e) => source.error = Some(e.to_string()),
    }
    source
}

async fn gameagent_server(client: &Client, game: SocketAddrV4) -> GameServer {
    let query = SocketAddr::V4(SocketAddrV4::new(
        *game.ip(),
        gameagent::query_port(game.port()),
    ));
    let game_addr = SocketAddr::V4(game);
    let (status, rtt) = match client.gameagent_status(query).await {
        Ok(v) => v,
        Err(e) => return offline(game_addr, game.port(), e.to_string()),
    };
    let players = client.gameagent_players(query).await.unwrap_or_else(|e| {
        debug!(%query, error = %e, "GameAgent player query failed");
        Vec::new()
    });
    GameServer {
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
    }
}
