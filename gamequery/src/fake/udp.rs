//! The generic fake: a UDP server answering each datagram with what a
//! handler returns, which can drop, delay or stop answering.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr},
    sync::{
        atomic::{AtomicBool, AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use tokio::{
    net::UdpSocket,
    task::{JoinHandle, JoinSet},
};

/// How a [`FakeUdp`] misbehaves, for tests of retries and concurrency.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to bind; port 0 picks a free one.
    pub bind: SocketAddr,
    /// Requests ignored before the first answer (lost packets).
    pub drop_first: usize,
    /// Time between a request and its replies (a slow server).
    pub delay: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            drop_first: 0,
            delay: Duration::ZERO,
        }
    }
}

/// A UDP server answering each request with the datagrams its handler
/// returns; the one building block of every fake here. Its task (and any
/// delayed replies) ends when it is dropped.
#[derive(Debug)]
pub struct FakeUdp {
    addr: SocketAddr,
    answering: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    max_outstanding: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl FakeUdp {
    /// Binds 127.0.0.1 on a free port and answers every request at once.
    pub async fn start<F>(handler: F) -> io::Result<Self>
    where
        F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    {
        Self::start_with(Options::default(), handler).await
    }

    /// Like [`FakeUdp::start`], with lost requests, a delay or a fixed
    /// address.
    pub async fn start_with<F>(options: Options, handler: F) -> io::Result<Self>
    where
        F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    {
        let socket = Arc::new(UdpSocket::bind(options.bind).await?);
        let addr = socket.local_addr()?;
        let answering = Arc::new(AtomicBool::new(true));
        let requests = Arc::new(AtomicUsize::new(0));
        let max_outstanding = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(serve(
            socket,
            options,
            handler,
            answering.clone(),
            requests.clone(),
            max_outstanding.clone(),
        ));
        Ok(Self {
            addr,
            answering,
            requests,
            max_outstanding,
            task,
        })
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Requests received so far, dropped and unanswered ones included.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// The most requests whose replies were pending at once (with a delay),
    /// to check a client's concurrency cap.
    pub fn max_outstanding(&self) -> usize {
        self.max_outstanding.load(Ordering::SeqCst)
    }

    /// `false` takes the server offline: it keeps its port but answers
    /// nothing, like a crashed host; `true` brings it back.
    pub fn set_answering(&self, on: bool) {
        self.answering.store(on, Ordering::SeqCst);
    }
}

impl Drop for FakeUdp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The receive loop. Delayed replies run in a `JoinSet` it owns, so they
/// are aborted with it.
async fn serve<F>(
    socket: Arc<UdpSocket>,
    options: Options,
    handler: F,
    answering: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    max_outstanding: Arc<AtomicUsize>,
) where
    F: Fn(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
{
    let outstanding = Arc::new(AtomicUsize::new(0));
    let mut delayed = JoinSet::new();
    let mut buf = vec![0u8; 65_536];
    loop {
        let Ok((n, from)) = socket.recv_from(&mut buf).await else {
            return;
        };
        while delayed.try_join_next().is_some() {}
        let seen = requests.fetch_add(1, Ordering::SeqCst);
        if seen < options.drop_first || !answering.load(Ordering::SeqCst) {
            continue;
        }
        let replies = handler(buf.get(..n).unwrap_or_default());
        let now = outstanding.fetch_add(1, Ordering::SeqCst) + 1;
        max_outstanding.fetch_max(now, Ordering::SeqCst);
        if options.delay.is_zero() {
            send_all(&socket, &replies, from).await;
            outstanding.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let (socket, outstanding, delay) = (socket.clone(), outstanding.clone(), options.delay);
        delayed.spawn(async move {
            tokio::time::sleep(delay).await;
            send_all(&socket, &replies, from).await;
            outstanding.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

async fn send_all(socket: &UdpSocket, replies: &[Vec<u8>], to: SocketAddr) {
    for p in replies {
        // A fake does not care whether the client is still there.
        let _ = socket.send_to(p, to).await;
    }
}
