//! Which of the bridges on one database records the history (any bridge
//! sends notifications: see `crate::notify`): the one holding a
//! session-level advisory lock on a connection of its own. The lock goes
//! with the session: a bridge that stops, is killed or loses its database loses it, and the next bridge
//! to ask takes it. Bridges ask every history interval, so recording is
//! handed over within one or two intervals.

use super::{own::OwnConnection, DatabaseUrl};

/// The advisory lock of the one recording bridge ("lobby" and 2).
const LEADER_LOCK: i64 = 0x6c6f_6262_7900_0002;

/// This bridge's candidacy, on its own connection (blocking: call it from
/// a thread that may block, like the history's writer).
#[derive(Debug)]
pub struct Election {
    conn: OwnConnection,
    leader: bool,
}

impl Election {
    /// A candidate for the database at `url`, not connected yet.
    pub fn new(url: &DatabaseUrl) -> Self {
        Self {
            conn: OwnConnection::new(url),
            leader: false,
        }
    }

    /// Whether this bridge leads now: it checks that a lock it holds is
    /// still held (its session alive), or tries to take it. Any failure
    /// (the database unreachable) is "no": a bridge that cannot reach the
    /// database cannot record in it either.
    pub fn campaign(&mut self) -> bool {
        self.leader = self.ask().unwrap_or_else(|_| {
            self.conn.close();
            false
        });
        self.leader
    }

    fn ask(&mut self) -> Result<bool, postgres::Error> {
        if !self.conn.is_open() {
            // A new session holds no lock, whatever the last one held.
            self.leader = false;
        }
        let conn = self.conn.client()?;
        if self.leader {
            // A round trip proves the session (and so the lock) lives.
            conn.simple_query("")?;
            return Ok(true);
        }
        let row = conn.query_one("SELECT pg_try_advisory_lock($1)", &[&LEADER_LOCK])?;
        row.try_get(0)
    }
}
