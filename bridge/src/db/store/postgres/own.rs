//! A connection of its own to the database, beside the store's: for work
//! that must not share the store's connection (the election's session
//! lock) or hold up its readers (the vacuum).

use postgres::Client;

use super::DatabaseUrl;

/// A connection made when first needed, and again once it was lost or
/// closed (blocking: use it from a thread that may block, like the
/// history's writer).
pub struct OwnConnection {
    url: DatabaseUrl,
    client: Option<Client>,
}

impl std::fmt::Debug for OwnConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnConnection")
            .field("url", &self.url)
            .field("open", &self.is_open())
            .finish()
    }
}

impl Drop for OwnConnection {
    fn drop(&mut self) {
        self.close();
    }
}

impl OwnConnection {
    /// A connection to the database at `url`, not made yet.
    pub fn new(url: &DatabaseUrl) -> Self {
        Self {
            url: url.clone(),
            client: None,
        }
    }

    /// Whether the connection is made and not lost: the next
    /// [`OwnConnection::client`] uses it rather than making a new one.
    pub fn is_open(&self) -> bool {
        self.client.as_ref().is_some_and(|c| !c.is_closed())
    }

    /// The connection, made now unless [`OwnConnection::is_open`].
    pub fn client(&mut self) -> Result<&mut Client, postgres::Error> {
        let client = match self.client.take() {
            Some(client) if !client.is_closed() => client,
            lost => {
                if let Some(client) = lost {
                    super::drop_off_runtime(client);
                }
                self.url.connect()?
            }
        };
        Ok(self.client.insert(client))
    }

    /// Closes the connection (off the async runtime); the next
    /// [`OwnConnection::client`] makes a new one.
    pub fn close(&mut self) {
        if let Some(client) = self.client.take() {
            super::drop_off_runtime(client);
        }
    }
}
