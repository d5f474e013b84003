//! The master as the tests ask it directly: its list over a fresh TCP
//! connection (`msQueryGameServers`), and a server entry as it lists one.
//! A page shows what the bridge pushed; this is what the master holds.

use std::{
    io::{Read, Write},
    net::{SocketAddr, TcpStream},
};

use serde_json::{json, Value};

use crate::HUNG;
use crate::{game::frame, until};

/// The largest reply read (the master's own frame limit is smaller).
const MAX_REPLY: usize = 16 * 1024 * 1024;

pub use lobby_testkit::fake_master::listed;

/// The servers the master lists now, asked over a fresh TCP connection
/// (`[length][JSON][0x0A]` each way), or what went wrong.
pub fn query_master(master: SocketAddr) -> Result<Vec<Value>, String> {
    let mut tcp = TcpStream::connect_timeout(&master, HUNG).map_err(|e| e.to_string())?;
    tcp.set_read_timeout(Some(HUNG))
        .map_err(|e| e.to_string())?;
    tcp.write_all(&frame(&json!({"command": "msQueryGameServers"})))
        .map_err(|e| e.to_string())?;
    let mut raw: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let digits = raw.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 && digits < raw.len() {
            let len: usize = std::str::from_utf8(&raw[..digits])
                .map_err(|e| e.to_string())?
                .parse()
                .map_err(|e| format!("{e}"))?;
            if len > MAX_REPLY {
                return Err(format!("a reply of {len} bytes"));
            }
            if raw.len() >= digits + len {
                let reply: Value = serde_json::from_slice(&raw[digits..digits + len])
                    .map_err(|e| format!("the reply is not JSON: {e}"))?;
                return reply["content"]["servers"]
                    .as_array()
                    .cloned()
                    .ok_or_else(|| format!("not msRQueryGameServers: {reply}"));
            }
        }
        let n = tcp.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the master closed the connection".into());
        }
        raw.extend_from_slice(&buf[..n]);
    }
}

/// The names the master lists now, in its order.
pub fn master_names(master: SocketAddr) -> Result<Vec<String>, String> {
    Ok(query_master(master)?
        .iter()
        .filter_map(|s| s["name"].as_str().map(str::to_owned))
        .collect())
}

/// Waits until the master lists exactly `names` (in any order, each once).
/// `Duration::ZERO` checks once.
pub async fn wait_master_lists(master: SocketAddr, names: &[&str]) {
    let mut want: Vec<&str> = names.to_vec();
    want.sort_unstable();
    let what = format!("the master to list {names:?} once each");
    until(&what, || {
        let want = &want;
        async move {
            let mut listed = master_names(master)?;
            listed.sort();
            if listed == *want {
                Ok(())
            } else {
                Err(format!("{listed:?}"))
            }
        }
    })
    .await
}
