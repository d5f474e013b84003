//! The vacuum after each sample, on a connection of its own: while it
//! runs, the store's connection (and the lock that history reads wait
//! on) is free, so a read is never held up by it.

use super::{own::OwnConnection, DatabaseUrl};

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

/// The recording bridge's vacuum, on a connection of its own (made when
/// first run, and again after a failure).
#[derive(Debug)]
pub struct Vacuum {
    conn: OwnConnection,
}

impl Vacuum {
    /// The vacuum of the database at `url`, not connected yet.
    pub fn new(url: &DatabaseUrl) -> Self {
        Self {
            conn: OwnConnection::new(url),
        }
    }

    /// Reclaims the room the last sample left behind (blocking). After an
    /// error the connection is closed and made again by the next run.
    pub fn run(&mut self) -> Result<(), postgres::Error> {
        let done = self.conn.client()?.batch_execute(VACUUM);
        if done.is_err() {
            self.conn.close();
        }
        done
    }
}
