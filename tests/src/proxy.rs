//! A TCP proxy on 127.0.0.1:0 whose connections the test can cut all at
//! once: a network blip between two parts of the product. Stops on drop.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use tokio::{net::TcpListener, task::JoinHandle};

/// The running proxy.
pub struct Proxy {
    /// Where to connect instead of the target.
    pub addr: SocketAddr,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Forwards every connection to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let l = links.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let link = tokio::spawn(async move {
                    if let Ok(mut server) = tokio::net::TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                let mut links = l.lock().expect("links");
                links.retain(|h| !h.is_finished());
                links.push(link);
            }
        });
        Proxy { addr, links, task }
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
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}
