//! The database a bridge starts on: the data directory (created private
//! where new), the key secret (in the directory, or shared through
//! PostgreSQL by every bridge on it) and the one [`Database`] over either
//! engine, with the history recorded in it. Opened once, before the
//! bridge exists: a bridge that runs *has* its database, and one that
//! cannot open it does not start.

use std::{path::Path, sync::Arc};

use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use crate::{
    config::Config,
    db::{history::History, store::Database},
    error::Error,
    live::keys::Keys,
};

/// What a started bridge keeps of its database: the keys its list is
/// keyed with, the database (where the webhooks, Web Push and the
/// notification engine keep their rows) and the history recorded in it.
#[derive(Debug)]
pub(crate) struct Opened {
    /// The list's server keys, from the key secret.
    pub(crate) keys: Keys,
    /// The bridge's one database.
    pub(crate) database: Database,
    /// The player history, recorded in `database`.
    pub(crate) history: Arc<History>,
    /// The key secret the list was keyed with while the database was
    /// unreachable at start, until the database's is known (`None`: the
    /// database's own, or no shared database).
    pub(crate) provisional_secret: Option<[u8; 32]>,
}

impl Opened {
    /// The key secret and the database in `config.data_dir` (created if
    /// missing), or a random secret and a database in memory without one;
    /// an error when either cannot be used, and then no bridge starts.
    pub(crate) fn open(config: &Config) -> Result<Self, Error> {
        let (keys, history, provisional_secret) = open(config)?;
        Ok(Self {
            keys,
            database: history.database().clone(),
            history: Arc::new(history),
            provisional_secret,
        })
    }
}

/// [`Database::open`]'s parts: the keys, the history, and the secret the
/// list is keyed with until the database answers (it was unreachable at
/// start), to be checked then.
fn open(config: &Config) -> Result<(Keys, History, Option<[u8; 32]>), Error> {
    let interval = config.history_interval;
    let per_source = config.history_keys_per_source;
    if let Some(dir) = &config.data_dir {
        create_private_dir(dir).map_err(|source| Error::DataDir {
            path: dir.clone(),
            source,
        })?;
    }
    if let Some(url) = &config.database_url {
        if config.history_max_bytes.is_some() {
            return Err(Error::Database {
                path: url.to_string().into(),
                reason: "--history-max-bytes caps the embedded database only; size a PostgreSQL database with its own limits".into(),
            });
        }
        let history = History::connect(url, interval).with_keys_per_source(per_source);
        // The client blocks (on a runtime of its own): off this thread,
        // which may be the server's runtime.
        let (keys, provisional) = std::thread::scope(|s| {
            s.spawn(|| shared_keys(&history, config.data_dir.as_deref()))
                .join()
                .unwrap_or(Err(Error::KeySecretUnread))
        })?;
        return Ok((keys, history, provisional));
    }
    let Some(dir) = &config.data_dir else {
        let history = History::open(None, interval)?.with_keys_per_source(per_source);
        return Ok((Keys::ephemeral()?, history, None));
    };
    let keys = Keys::open(dir)?;
    let history = History::open(Some(dir), interval)?.with_keys_per_source(per_source);
    if let Some(max) = config.history_max_bytes {
        let applied = history.cap(max).map_err(|e| Error::Database {
            path: dir.join(crate::db::store::DB_FILE),
            reason: format!("cannot cap it at {max} bytes: {e}"),
        })?;
        info!(
            cap = applied,
            "the history database is capped (--history-max-bytes)"
        );
    }
    Ok((keys, history, None))
}

/// The key secret of the bridges on `history`'s database: created there
/// once (this bridge's file proposes it, so a bridge that grows from the
/// embedded database keeps its keys), and kept in `dir` as a copy. One try
/// at start (a refused password or connection fails at once, an address
/// that does not answer within the connect timeout); while the database
/// is unreachable the list is keyed at once with the copy (a new one when
/// there is none), which is returned to be checked against the database's
/// once it answers ([`reconcile_keys`]): nothing waits for the database.
fn shared_keys(history: &History, dir: Option<&Path>) -> Result<(Keys, Option<[u8; 32]>), Error> {
    let had_copy = dir.is_some_and(|d| d.join(crate::live::keys::SECRET_FILE).exists());
    let cached = match dir {
        Some(dir) => crate::live::keys::secret_in(dir)?,
        None => crate::live::keys::random_secret()?,
    };
    let secret = history.store().postgres().map(|pg| pg.key_secret(&cached));
    match secret {
        Some(Ok(secret)) => {
            if let Some(dir) = dir {
                crate::live::keys::keep_secret(dir, &secret)?;
            }
            Ok((Keys::from_secret(&secret), None))
        }
        Some(Err(crate::db::store::StoreError::Unavailable)) => {
            if had_copy {
                warn!("the database is unreachable at start: servers are keyed with this bridge's copy of its key secret");
            } else {
                warn!("the database is unreachable at start and this bridge has no copy of its key secret: servers are keyed with a new one, which the database takes if it has none (else the bridge stops once it answers, to start again with the database's)");
            }
            Ok((Keys::from_secret(&cached), Some(cached)))
        }
        Some(Err(e)) => Err(Error::Database {
            path: "key_secret".into(),
            reason: e.to_string(),
        }),
        None => Ok((Keys::from_secret(&cached), None)),
    }
}

/// Once the database answers, whether the secret the list was keyed with
/// at start (`keyed`, the copy) is the database's: then nothing changes;
/// else the database's is kept as the copy and the answer is the error
/// that stops the bridge, to start again keying as the other bridges do
/// (every key would change, and a list's keys cannot change under its
/// viewers). Runs on a thread of its own until `cancel` fires.
pub(crate) fn reconcile_keys(
    database: &Database,
    dir: Option<&Path>,
    keyed: [u8; 32],
    cancel: &CancellationToken,
) -> Result<(), Error> {
    while !cancel.is_cancelled() {
        let mut store = database.lock();
        let secret = store.postgres().map(|pg| pg.key_secret(&keyed));
        let opening = store.opening();
        drop(store);
        match secret {
            None => return Ok(()),
            Some(Ok(secret)) if secret == keyed => return Ok(()),
            Some(Ok(secret)) => {
                if let Some(dir) = dir {
                    crate::live::keys::keep_secret(dir, &secret)?;
                }
                return Err(Error::KeySecretChanged);
            }
            Some(Err(_)) => match opening {
                Some(opening) => opening.wait(),
                None => std::thread::sleep(std::time::Duration::from_millis(500)),
            },
        }
    }
    Ok(())
}

/// Creates `dir` (mode 0700 where it is new) unless it exists.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    if !dir.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    Ok(())
}
