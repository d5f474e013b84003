//! The subscriptions one bridge holds, as read from the database: each
//! [`Sub`] by its id, and the indexes that keep an event's work and the
//! limits' counts small (the subscriptions watching a key, and those made
//! from each source).

use std::{
    collections::{BTreeSet, HashMap, HashSet},
    sync::Arc,
};

use protocol::{
    push::{PushRequest, PushWatch, Subscription},
    ServerKey,
};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use url::Url;

use crate::db::store::PushRow;

/// A subscription's id: the first 8 bytes of the SHA-256 of its endpoint.
pub(super) fn sub_id(endpoint: &str) -> u64 {
    let digest = Sha256::digest(endpoint.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// A subscription's `auth` secret as the store keeps it (base64url).
pub(super) fn auth_text(sub: &Subscription) -> String {
    use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
    URL_SAFE_NO_PAD.encode(sub.auth)
}

/// One browser's subscription and its watches.
#[derive(Debug)]
pub(super) struct Sub {
    pub(super) id: u64,
    pub(super) subscription: Subscription,
    /// Its endpoint, parsed.
    pub(super) url: Url,
    pub(super) watches: Vec<PushWatch>,
    /// The network it was made from.
    pub(super) source: String,
    pub(super) created_ms: i64,
    /// When it was last made or renewed (a `PUT`).
    pub(super) updated_ms: i64,
}

impl Sub {
    /// Whether `other` names this subscription: the same endpoint and
    /// `auth` secret (compared in constant time).
    pub(super) fn is(&self, other: &Subscription) -> bool {
        self.subscription.endpoint == other.endpoint
            && bool::from(self.subscription.auth.ct_eq(&other.auth))
    }

    pub(super) fn row(&self, updated_ms: i64) -> PushRow {
        PushRow {
            id: format!("{:016x}", self.id),
            subscription: self.subscription.to_json().to_string(),
            watches: PushRequest::watches_json(&self.watches).to_string(),
            source: self.source.clone(),
            auth: auth_text(&self.subscription),
            created_ms: self.created_ms,
            updated_ms,
        }
    }
}

/// Every subscription, and the indexes that keep an event's work and the
/// limits' counts small.
#[derive(Debug, Default)]
pub(super) struct Table {
    pub(super) subs: HashMap<u64, Arc<Sub>>,
    /// The subscriptions watching each key.
    pub(super) by_key: HashMap<ServerKey, HashSet<u64>>,
    /// Subscriptions per source, by creation time.
    pub(super) per_source: HashMap<String, BTreeSet<(i64, u64)>>,
}

impl Table {
    /// Puts `sub` in, replacing the one with its id; the one replaced.
    pub(super) fn insert(&mut self, sub: Arc<Sub>) -> Option<Arc<Sub>> {
        let old = self.remove(sub.id);
        for w in &sub.watches {
            self.by_key.entry(w.key).or_default().insert(sub.id);
        }
        self.per_source
            .entry(sub.source.clone())
            .or_default()
            .insert((sub.created_ms, sub.id));
        self.subs.insert(sub.id, sub);
        old
    }

    /// Subscriptions made from `source`.
    pub(super) fn count(&self, source: &str) -> usize {
        self.per_source.get(source).map_or(0, BTreeSet::len)
    }

    /// The subscription that makes room when the store is full: the
    /// oldest of the source holding the most (of two holding as many, the
    /// one whose oldest is older).
    pub(super) fn squatter(&self) -> Option<u64> {
        self.per_source
            .values()
            .filter_map(|set| Some((set.len(), set.first()?)))
            .max_by(|(n, a), (m, b)| n.cmp(m).then(b.cmp(a)))
            .map(|(_, (_, id))| *id)
    }

    pub(super) fn remove(&mut self, id: u64) -> Option<Arc<Sub>> {
        let old = self.subs.remove(&id)?;
        for w in &old.watches {
            if let Some(ids) = self.by_key.get_mut(&w.key) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.by_key.remove(&w.key);
                }
            }
        }
        if let Some(set) = self.per_source.get_mut(&old.source) {
            set.remove(&(old.created_ms, id));
            if set.is_empty() {
                self.per_source.remove(&old.source);
            }
        }
        Some(old)
    }
}
