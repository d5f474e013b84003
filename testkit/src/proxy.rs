//! A TCP proxy on 127.0.0.1:0 whose connections the test can cut all at
//! once (a network blip between two parts of the product), keep closed
//! for a while (a link that is down), or cut in the middle of the
//! target's next write. Stops on drop.

use std::{
    net::SocketAddr,
    sync::{
        atomic::{AtomicBool, Ordering::Relaxed},
        Arc, Mutex,
    },
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    task::JoinHandle,
};

/// The running proxy.
pub struct Proxy {
    /// Where to connect instead of the target.
    pub addr: SocketAddr,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    /// Cleared: new connections are dropped at once.
    open: Arc<AtomicBool>,
    /// Set: the target's next write is passed on only halfway, then that
    /// connection closes.
    cut_midway: Arc<AtomicBool>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Forwards every connection to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let cut_midway = Arc::new(AtomicBool::new(false));
        let open = Arc::new(AtomicBool::new(true));
        let (l, c, o) = (links.clone(), cut_midway.clone(), open.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if !o.load(Relaxed) {
                    continue;
                }
                let cut = c.clone();
                let link = tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(target).await {
                        relay(client, server, cut).await;
                    }
                });
                let mut links = l.lock().expect("links");
                links.retain(|h| !h.is_finished());
                links.push(link);
            }
        });
        Proxy {
            addr,
            links,
            open,
            cut_midway,
            task,
        }
    }

    /// Passes the target's next write (on any connection) on only halfway,
    /// then closes that connection: a message cut in the middle.
    pub fn cut_next_write_midway(&self) {
        self.cut_midway.store(true, Relaxed);
    }

    /// Whether a cut asked for with [`Proxy::cut_next_write_midway`] has
    /// not happened yet.
    pub fn midway_cut_pending(&self) -> bool {
        self.cut_midway.load(Relaxed)
    }

    /// Drops every connection open through the proxy (new ones still work);
    /// returns how many there were.
    pub fn cut(&self) -> usize {
        let links = std::mem::take(&mut *self.links.lock().expect("links"));
        let n = links.len();
        for l in links {
            l.abort();
        }
        n
    }

    /// Drops every connection and refuses new ones until
    /// [`Proxy::reopen`]: the link is down.
    pub fn close(&self) {
        self.open.store(false, Relaxed);
        self.cut();
    }

    /// Takes new connections again after [`Proxy::close`].
    pub fn reopen(&self) {
        self.open.store(true, Relaxed);
    }
}

/// Copies both ways; the target's writes are read one at a time so that
/// one can be cut in the middle.
async fn relay(client: TcpStream, server: TcpStream, cut: Arc<AtomicBool>) {
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = server.into_split();
    let upstream = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_rd, &mut server_wr).await;
    });
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match server_rd.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if cut.swap(false, Relaxed) {
            let _ = client_wr.write_all(&buf[..n / 2]).await;
            break;
        }
        if client_wr.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    upstream.abort();
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}
