//! The pages' documents as the bridge keeps them (`pages`): each written
//! once per change of what it was written from ([`Stamp`]) and kept with
//! its compressed forms, bounded by count; a `503` is not kept.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::SystemTime,
};

use axum::{
    http::{HeaderValue, StatusCode},
    Router,
};
use bytes::Bytes;

use crate::{http::answers::etag_of, live::feed::ApiBody};

/// Documents kept at most; the cache starts over when full, so a crawler
/// walking many keys cannot grow it.
const CACHED: usize = 1024;

/// The documents written since the last change, by path, and the build's
/// files the pages fall back to.
pub(crate) struct Pages {
    cache: Mutex<HashMap<String, Arc<Document>>>,
    /// The build's files (`assets::router`): a path that is no page may
    /// still be one of them.
    pub(crate) files: Router,
    /// The build's `index.html`.
    pub(crate) shell: std::path::PathBuf,
    /// The admin's `admin/index.html`.
    pub(crate) admin: std::path::PathBuf,
}

impl std::fmt::Debug for Pages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pages")
            .field("shell", &self.shell)
            .finish_non_exhaustive()
    }
}

/// One answer, written once per [`Stamp`].
#[derive(Debug)]
pub(crate) struct Document {
    pub(crate) stamp: Stamp,
    pub(crate) status: StatusCode,
    /// Where a `302` sends the browser (`/join/{key}`).
    pub(crate) location: Option<HeaderValue>,
    pub(crate) etag: String,
    pub(crate) body: ApiBody,
}

/// What a document was written from: the list's `seq`, the history's
/// generation and the shell's modification time and size (a new build
/// replaces `index.html` while the bridge runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) list: u64,
    pub(crate) history: u64,
    pub(crate) shell: Option<(SystemTime, u64)>,
}

/// What a computation gives before it is kept.
pub(crate) struct Written {
    pub(crate) status: StatusCode,
    pub(crate) location: Option<String>,
    pub(crate) html: String,
}

impl Pages {
    /// The pages over the build in `dir`.
    pub(crate) fn new(dir: &std::path::Path) -> Self {
        Self {
            cache: Mutex::default(),
            files: crate::http::assets::router(dir),
            shell: dir.join("index.html"),
            admin: dir.join(crate::http::assets::ADMIN_DIR).join("index.html"),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Document>>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The document at `path` written at `stamp`, from the cache or, paid
    /// by `pay` (the client's budget: a page written may read the history's
    /// database, so a client naming key after key pays for each, as for
    /// `/api/servers/{key}`), by `write` on a blocking thread. A `503` is
    /// not kept: the next request asks the database again.
    pub(crate) async fn document(
        &self,
        path: String,
        stamp: Stamp,
        pay: impl FnOnce() -> bool,
        write: impl FnOnce() -> Written + Send + 'static,
    ) -> Result<Arc<Document>, Refused> {
        if let Some(hit) = self.lock().get(&path).filter(|d| d.stamp == stamp) {
            return Ok(hit.clone());
        }
        if !pay() {
            return Err(Refused::Unpaid);
        }
        let written = tokio::task::spawn_blocking(write)
            .await
            .map_err(|_| Refused::Failed)?;
        let identity = Bytes::from(written.html);
        let document = Arc::new(Document {
            stamp,
            status: written.status,
            location: written
                .location
                .and_then(|l| HeaderValue::from_str(&l).ok()),
            etag: etag_of(&identity),
            body: ApiBody::new(identity),
        });
        if document.status != StatusCode::SERVICE_UNAVAILABLE {
            let mut cache = self.lock();
            if cache.len() >= CACHED {
                cache.clear();
            }
            cache.insert(path, document.clone());
        }
        Ok(document)
    }
}

/// Why a document was not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// It had to be written and the client's budget had nothing left.
    Unpaid,
    /// Writing it failed (its task panicked).
    Failed,
}
