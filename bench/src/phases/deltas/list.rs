//! The list as `/api/servers` serves it, and the servers that fill it.

use std::net::SocketAddr;

use lobby_testkit::{http, try_until};

use crate::{
    direct::{self, Conn},
    error::{Error, Result},
};

/// The list `/api/servers` serves now: its epoch, seq and length.
pub(crate) struct Listed {
    pub(crate) epoch: String,
    pub(crate) seq: u64,
    pub(crate) servers: usize,
}

pub(super) fn listed(body: &[u8]) -> Result<Listed> {
    let v: serde_json::Value = serde_json::from_slice(body)?;
    let (Some(epoch), Some(seq), Some(servers)) = (
        v["epoch"].as_str(),
        v["seq"].as_u64(),
        v["servers"].as_array(),
    ) else {
        return Err(Error::Unexpected(
            "/api/servers lacks epoch, seq or servers".into(),
        ));
    };
    Ok(Listed {
        epoch: epoch.to_owned(),
        seq,
        servers: servers.len(),
    })
}

pub(crate) async fn api_list(bridge: SocketAddr) -> Result<Listed> {
    listed(
        &http::get_ok(bridge, "/api/servers", "")
            .await
            .map_err(Error::Unexpected)?
            .body,
    )
}

/// Registers servers `from..n` on their own connections to the embedded
/// master and waits (every 1,000) until `/api/servers` lists them.
pub(super) async fn register(
    master: SocketAddr,
    bridge: SocketAddr,
    from: usize,
    n: usize,
) -> Result<Vec<Conn>> {
    let mut conns = Vec::with_capacity(n - from);
    for i in from..n {
        let mut c = direct::connect(master).await?;
        let port = 20_000 + (i % 30_000) as u16;
        direct::send(&mut c, &direct::register_json(&format!("Delta {i}"), port)).await?;
        conns.push(c);
        if (i + 1) % 1000 == 0 || i + 1 == n {
            // 503 until the bridge has its first list.
            try_until(&format!("{} servers listed", i + 1), || async {
                match api_list(bridge).await? {
                    l if l.servers > i => Ok(()),
                    l => Err(Error::Unexpected(format!("{} listed", l.servers))),
                }
            })
            .await?;
        }
    }
    Ok(conns)
}
