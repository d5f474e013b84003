//! The vacuum after each sample, on a connection of its own: while it
//! runs, the store's connection (and the lock that history reads wait
//! on) is free, so a read is never held up by it.

use postgres::Client;

use super::DatabaseUrl;

/// What runs after each sample: each sample leaves a dead version of every
/// listed server's `server_hours` row (one that cannot stay on its page:
/// the whole sample is one transaction, and a full page has no room for
/// all its rows' new versions), and each hour's fold one of every
/// `server_days` row of the day. Since an hour's row keeps its size, the
/// space of one sample's dead versions is exactly what the next sample's
/// new versions take: vacuumed after every sample, the table holds about
/// one sample's worth of them (docs/performance.md, "History"). The
/// visibility map limits the work to the pages changed since.
const VACUUM: &str = "VACUUM (SKIP_LOCKED) server_hours, servers, server_days";

/// The recording bridge's vacuum, connected when first run and again
/// after a failure (blocking: call it from a thread that may block, like
/// the history's writer).
pub struct Vacuum {
    url: DatabaseUrl,
    conn: Option<Client>,
}

impl std::fmt::Debug for Vacuum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vacuum")
            .field("url", &self.url)
            .field("connected", &self.conn.is_some())
            .finish()
    }
}

impl Drop for Vacuum {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            super::drop_off_runtime(conn);
        }
    }
}

impl Vacuum {
    /// The vacuum of the database at `url`, not connected yet.
    pub fn new(url: &DatabaseUrl) -> Self {
        Self {
            url: url.clone(),
            conn: None,
        }
    }

    /// Reclaims the room the last sample left behind. After an error the
    /// connection is dropped and made again by the next run.
    pub fn run(&mut self) -> Result<(), postgres::Error> {
        if self.conn.as_ref().is_none_or(Client::is_closed) {
            self.conn = Some(self.url.connect()?);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Ok(());
        };
        let done = conn.batch_execute(VACUUM);
        if done.is_err() {
            if let Some(conn) = self.conn.take() {
                super::drop_off_runtime(conn);
            }
        }
        done
    }
}
