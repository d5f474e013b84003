//! A master that misbehaves on purpose, on 127.0.0.1:0: it answers every
//! `msQueryGameServers` with one good list, or with garbage, an oversized
//! frame or half a reply, as the test switches it; it counts the
//! connections it accepted (to tell backoff from a busy loop). Stops on
//! drop.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicU8, AtomicUsize, Ordering::Relaxed},
        Arc,
    },
};

use serde_json::json;
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::TcpListener,
    task::JoinHandle,
};

use crate::{fake_bridge::list_reply, game::frame, master::listed};

/// The one server a good answer lists.
pub const FAKE_ONE: &str = "Fake One";

/// How the fake answers each query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Reply {
    /// A list of [`FAKE_ONE`].
    Good,
    /// Frames that are not JSON, or not the answer.
    Garbage,
    /// A length prefix far over any limit, then 64 KiB of padding.
    Oversized,
    /// The first half of a good answer, then the connection closes.
    CloseMidReply,
}

impl Reply {
    fn from_u8(n: u8) -> Reply {
        match n {
            0 => Reply::Good,
            1 => Reply::Garbage,
            2 => Reply::Oversized,
            _ => Reply::CloseMidReply,
        }
    }

    /// The bytes this reply writes, and whether the connection closes after.
    fn bytes(self) -> (Vec<u8>, bool) {
        let good = frame(&list_reply(&[listed(FAKE_ONE, 20001, 1)]));
        match self {
            Reply::Good => (good, false),
            Reply::Garbage => (
                [
                    &b"7garbage\n"[..],
                    b"\x00\xff\xfe binary \n",
                    b"12{not json!\n",
                    &frame(&json!({"command": "msSomethingElse"})),
                    &frame(&json!([1, 2, 3])),
                ]
                .concat(),
                false,
            ),
            Reply::Oversized => {
                let mut r = b"99999999{\"command\":\"msRQueryGameServers\",".to_vec();
                r.extend(std::iter::repeat_n(b' ', 64 * 1024));
                (r, false)
            }
            Reply::CloseMidReply => (good[..good.len() / 2].to_vec(), true),
        }
    }
}

/// The running fake master.
pub struct FakeMaster {
    pub addr: SocketAddr,
    reply: Arc<AtomicU8>,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl FakeMaster {
    /// Binds 127.0.0.1:0 and answers [`Reply::Good`] until told otherwise.
    pub async fn start() -> FakeMaster {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let reply = Arc::new(AtomicU8::new(Reply::Good as u8));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (r, a) = (reply.clone(), accepted.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                a.fetch_add(1, Relaxed);
                let r = r.clone();
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut lines = BufReader::new(read).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        if !line.contains("msQueryGameServers") {
                            continue;
                        }
                        let (bytes, close) = Reply::from_u8(r.load(Relaxed)).bytes();
                        if write.write_all(&bytes).await.is_err() || close {
                            return;
                        }
                    }
                });
            }
        });
        FakeMaster {
            addr,
            reply,
            accepted,
            task,
        }
    }

    /// How later queries are answered.
    pub fn set_reply(&self, reply: Reply) {
        self.reply.store(reply as u8, Relaxed);
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Relaxed)
    }
}

impl Drop for FakeMaster {
    fn drop(&mut self) {
        self.task.abort();
    }
}
