//! Helpers shared by the master's TCP tests: a master on 127.0.0.1:0 and a
//! raw client that can connect from any loopback address (127.0.0.2 and up
//! route to `lo` on Linux), so tests can play several hosts.

#![allow(dead_code)]

use std::{
    net::{IpAddr, SocketAddr},
    sync::Arc,
};

use master::{Config, Master, Registry};
use protocol::frame::frame;
use serde_json::{json, Value};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::oneshot,
    task::JoinHandle,
    time::timeout,
};

pub use lobby_testkit::{bounded, until, until_blocking, until_true, HUNG};

pub struct TestMaster {
    pub addr: SocketAddr,
    pub master: Master,
    pub registry: Arc<Registry>,
    pub stop: Option<oneshot::Sender<()>>,
    pub task: JoinHandle<()>,
}

pub async fn start_with(config: Config) -> TestMaster {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    start_on(listener, config)
}

/// Runs a master with `config` on a listener the test bound itself.
pub fn start_on(listener: TcpListener, config: Config) -> TestMaster {
    let addr = listener.local_addr().unwrap();
    let master = Master::new(config);
    let registry = master.registry();
    let (stop, stopped) = oneshot::channel::<()>();
    let runner = master.clone();
    let task = tokio::spawn(async move {
        runner
            .run(listener, async {
                let _ = stopped.await;
            })
            .await
            .expect("the test master's configuration is valid")
    });
    TestMaster {
        addr,
        master,
        registry,
        stop: Some(stop),
        task,
    }
}

/// The default configuration, with 127.0.0.1 exempt from the per-address
/// cap and the rate limit: for tests of the protocol that play many game
/// servers, or query fast, from one address.
pub fn trusting_loopback() -> Config {
    Config {
        exempt: vec!["127.0.0.1/32".parse().unwrap()],
        ..Config::default()
    }
}

pub async fn start() -> TestMaster {
    start_with(trusting_loopback()).await
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// A raw TCP client that reads the master's framed replies.
pub struct Client {
    pub stream: TcpStream,
    pub buf: Vec<u8>,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> Self {
        Self::connect_from("127.0.0.1", addr).await
    }

    /// Connects from the loopback address `from`, as another host would.
    pub async fn connect_from(from: &str, addr: SocketAddr) -> Self {
        Self::try_connect_from(from, addr)
            .await
            .unwrap_or_else(|| panic!("connect from {from} refused"))
    }

    /// Connects from `from`; `None` if the connection failed, which it may
    /// when the master resets a refused connection before the connect
    /// completes on this side.
    pub async fn try_connect_from(from: &str, addr: SocketAddr) -> Option<Self> {
        let stream = lobby_testkit::http::connect_from(ip(from), addr)
            .await
            .ok()?;
        Some(Self {
            stream,
            buf: Vec::new(),
        })
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
    }

    pub async fn send(&mut self, msg: Value) {
        self.send_raw(&frame(msg.to_string().as_bytes())).await;
    }

    /// The next framed reply (checking that the length counts JSON +
    /// newline), or `None` once the master closed the connection.
    pub async fn try_recv(&mut self) -> Option<Value> {
        bounded("a reply or a close", async {
            loop {
                let digits = self.buf.iter().take_while(|b| b.is_ascii_digit()).count();
                if digits > 0 && digits < self.buf.len() {
                    let len: usize = std::str::from_utf8(&self.buf[..digits])
                        .unwrap()
                        .parse()
                        .unwrap();
                    if self.buf.len() >= digits + len {
                        let body: Vec<u8> = self.buf.drain(..digits + len).skip(digits).collect();
                        assert_eq!(body.last(), Some(&b'\n'), "frame ends with LF");
                        return Some(serde_json::from_slice(&body[..len - 1]).unwrap());
                    }
                }
                let mut chunk = vec![0u8; 65536];
                match self.stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return None,
                    Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                }
            }
        })
        .await
    }

    /// Reads one framed reply.
    pub async fn recv(&mut self) -> Value {
        self.try_recv().await.expect("master closed the connection")
    }

    /// Queries the list; `None` if the master closed the connection.
    pub async fn try_query(&mut self) -> Option<Vec<Value>> {
        // A write to a connection the master already reset may fail.
        if self
            .stream
            .write_all(&frame(br#"{"command":"msQueryGameServers"}"#))
            .await
            .is_err()
        {
            return None;
        }
        let reply = self.try_recv().await?;
        assert_eq!(reply["command"], "msRQueryGameServers");
        Some(reply["content"]["servers"].as_array().unwrap().clone())
    }

    pub async fn query(&mut self) -> Vec<Value> {
        self.try_query()
            .await
            .expect("master closed the connection")
    }

    pub async fn register(&mut self, name: &str, port: u16) {
        self.register_at(name, "192.168.0.10", port).await;
    }

    pub async fn register_at(&mut self, name: &str, address: &str, port: u16) {
        self.send(json!({"command": "msRegisterGameServer", "content": {
            "serverName": name, "serverAddress": address, "serverPort": port}}))
            .await;
    }

    /// Waits until the master closes the connection, discarding what it
    /// sends meanwhile; panics if it stays open.
    pub async fn closed(&mut self, what: &str) {
        let mut chunk = vec![0u8; 1 << 16];
        let closed = timeout(HUNG, async {
            loop {
                match self.stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
            }
        })
        .await;
        assert!(
            closed.is_ok(),
            "{what}: the master kept the connection open"
        );
    }
}

pub fn names(servers: &[Value]) -> Vec<String> {
    servers
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Queries until `pred` holds: other connections' messages are processed
/// concurrently, so a reader observes them eventually, not instantly.
pub async fn eventually(addr: SocketAddr, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    eventually_from("127.0.0.1", addr, pred).await
}

/// [`eventually`] from a given address (which the master must exempt from
/// its rate limit, as the test's queries come fast).
pub async fn eventually_from(
    from: &str,
    addr: SocketAddr,
    pred: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let client = tokio::sync::Mutex::new(Client::connect_from(from, addr).await);
    lobby_testkit::until("the master's list as expected", || async {
        let servers = client.lock().await.query().await;
        if pred(&servers) {
            Ok(servers)
        } else {
            Err(format!("{:?}", names(&servers)))
        }
    })
    .await
}

/// Connects from `from`, registers `name` and queries: the client and the
/// list if the master serves the connection, `None` if it refused it.
pub async fn join(
    from: &str,
    addr: SocketAddr,
    name: &str,
    port: u16,
) -> Option<(Client, Vec<Value>)> {
    let mut c = Client::try_connect_from(from, addr).await?;
    let registration = frame(
        json!({"command": "msRegisterGameServer", "content": {
            "serverName": name, "serverAddress": "192.168.0.10", "serverPort": port}})
        .to_string()
        .as_bytes(),
    );
    // A refused connection may be reset before or during the write.
    c.stream.write_all(&registration).await.ok()?;
    let servers = c.try_query().await?;
    Some((c, servers))
}

/// Asserts that the master closes a new connection from `from` unserved.
pub async fn refused(from: &str, addr: SocketAddr, what: &str) {
    if let Some(mut c) = Client::try_connect_from(from, addr).await {
        c.closed(what).await;
    }
}
