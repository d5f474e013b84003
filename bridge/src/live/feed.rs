//! The lobby list as deltas (`docs/protocol.md` §3): each new list from
//! the master is compared once with the last published one, and the
//! resulting delta is encoded once, for every subscriber. The newest
//! deltas are kept (a bounded ring) so a subscriber that fell behind or
//! reconnected gets what it missed instead of the whole list.

use std::{
    io::Write,
    sync::{Arc, OnceLock},
};

use bytes::Bytes;
use protocol::{
    bridge::names,
    delta::{
        delta_json, snapshot_json, Changeset, Encoder, Entries, Keyed, KeyedList, ListEntries,
        ListPublisher, PublishedList, Resume, Sending, Unfollowed,
    },
    message::query_reply_text,
    ServerEntry, ServerKey,
};
use tokio_tungstenite::tungstenite::Utf8Bytes;

use master::registry::{Publishing, Registry};

use crate::{
    live::keys::Keys,
    visibility::{Encoded, Visibility},
};

/// Deltas kept for catching up; older ones are answered with a snapshot.
pub const DELTA_RING: usize = 64;

/// `GET /api/servers`'s body for one list, in each encoding it is served in
/// (and so any body compressed once and served many times: the pages).
#[derive(Debug)]
pub struct ApiBody {
    pub identity: Bytes,
    pub gzip: Bytes,
    pub br: Bytes,
}

impl ApiBody {
    /// `identity` and its two compressed forms, at the fast levels below.
    pub fn new(identity: Bytes) -> Self {
        Self {
            gzip: gzip(&identity),
            br: brotli(&identity),
            identity,
        }
    }
}

/// The bridge writes each list message in an admin's and a viewer's form.
impl Encoder for Visibility {
    type Delta = Encoded;
    type Whole = Encoded;

    fn delta(&self, epoch: &str, seq: u64, prev: u64, change: &Changeset) -> Encoded {
        self.encode(|a| delta_json(epoch, seq, prev, change, a))
    }

    fn snapshot(&self, epoch: &str, seq: u64, entries: ListEntries<'_>) -> Encoded {
        self.encode(|a| snapshot_json(epoch, seq, entries, a))
    }
}

/// One published list: what every delta subscriber, plain subscriber and
/// `/api/servers` read. Immutable; the next change publishes a new one.
/// Everything but the change's delta is encoded on first use: most lists
/// only ever go out as deltas.
#[derive(Debug)]
pub struct FeedState {
    pub epoch: Arc<str>,
    pub seq: u64,
    list: Arc<PublishedList<Visibility>>,
    api: OnceLock<ApiBody>,
    /// The list as `msRQueryGameServers`, for plain subscribers.
    plain: OnceLock<Encoded>,
}

impl FeedState {
    fn new(list: Arc<PublishedList<Visibility>>) -> Arc<Self> {
        Arc::new(Self {
            epoch: list.shared_epoch().clone(),
            seq: list.seq(),
            list,
            api: OnceLock::new(),
            plain: OnceLock::new(),
        })
    }

    /// The `bridgeSnapshot` of this list.
    pub fn snapshot(&self) -> &Encoded {
        self.list.snapshot()
    }

    fn texts(sending: Sending<'_, Visibility>, admin: bool) -> Vec<Utf8Bytes> {
        match sending {
            Sending::Snapshot(s) => vec![s.for_role(admin).clone()],
            Sending::Deltas(d) => d.into_iter().map(|d| d.for_role(admin).clone()).collect(),
        }
    }

    /// The answer to a delta subscribe that holds `resume`: the missing
    /// deltas, an empty delta (`prev` = `seq`) that confirms a current
    /// list, or the snapshot (`docs/protocol.md` §3).
    pub fn catch_up(&self, resume: Option<&Resume>, admin: bool) -> Vec<Utf8Bytes> {
        Self::texts(self.list.catch_up(resume), admin)
    }

    /// What a subscriber that was sent list `sent` needs to reach this one.
    pub fn after(&self, sent: u64, admin: bool) -> Vec<Utf8Bytes> {
        Self::texts(self.list.after(sent), admin)
    }

    /// The list as `msRQueryGameServers` in both forms, for plain
    /// subscribers: written on first use, the same bytes as the master's
    /// reply to a query.
    pub fn plain(&self) -> &Encoded {
        self.plain.get_or_init(|| {
            self.list
                .encoder()
                .encode(|a| query_reply_text(self.list.servers(), a))
        })
    }

    /// [`FeedState::plain`] if somebody has read it already.
    pub fn plain_written(&self) -> Option<&Encoded> {
        self.plain.get()
    }

    /// The list as `/api/servers` serves it (addresses hidden when the
    /// bridge hides them): the viewers' snapshot content, compressed once
    /// per list on first request.
    pub fn api_body(&self) -> &ApiBody {
        self.api.get_or_init(|| {
            // `{"command":"bridgeSnapshot","content":` CONTENT `}`: the
            // content is sliced out, not encoded a second time.
            let frame = Bytes::from(self.snapshot().viewer.clone());
            let start = format!(r#"{{"command":"{}","content":"#, names::SNAPSHOT).len();
            let end = frame.len().saturating_sub(1).max(start);
            ApiBody::new(frame.slice(start.min(end)..end))
        })
    }

    /// The published list: its entries read in place, in order or by id
    /// (shared with the lists before and after it, never copied whole).
    pub fn list(&self) -> &PublishedList<Visibility> {
        &self.list
    }

    /// The `ETag` of this list: epoch and seq name it exactly.
    pub fn etag(&self) -> String {
        format!("\"{}-{}\"", self.epoch, self.seq)
    }
}

/// Fast levels: a 10,000-server list is compressed in milliseconds, to
/// about a tenth of its size (most of its bytes are repeated keys).
fn gzip(data: &[u8]) -> Bytes {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    // Writing to a Vec cannot fail: an error would be a bug in flate2, and
    // hiding it as an empty body would serve a corrupt list.
    match enc.write_all(data).and_then(|()| enc.finish()) {
        Ok(gz) => Bytes::from(gz),
        Err(e) => panic!("gzip into memory failed: {e}"),
    }
}

/// A 1 MiB window (`lgwin` 20): a list of 10,000 servers compresses to
/// the same size as with the largest window, and the encoder holds about
/// 11 MB for a list at the 16 MiB bound instead of 37 MB.
fn brotli(data: &[u8]) -> Bytes {
    let mut out = Vec::new();
    {
        let mut enc = brotli::CompressorWriter::new(&mut out, 4096, 5, 20);
        let _ = enc.write_all(data);
    }
    Bytes::from(out)
}

/// The publisher: the numbered list and the recent deltas. Callers
/// serialise through a mutex (lists arrive from the poller, admins' own
/// master connections, the embedded master and the master's feed).
#[derive(Debug)]
pub struct Feed {
    list: KeyedList,
    publisher: ListPublisher<Visibility>,
    keys: Keys,
}

impl Feed {
    /// A feed for a new epoch (a random string: bridges behind one load
    /// balancer must not share one) whose entries carry `keys`' keys.
    pub fn new(epoch: impl Into<Arc<str>>, visibility: Visibility, keys: Keys) -> Self {
        Self {
            list: KeyedList::new(),
            publisher: ListPublisher::new(epoch, DELTA_RING, visibility),
            keys,
        }
    }

    /// Takes the master's current list, matched against the last one;
    /// returns the list to publish, or `None` when nothing changed since
    /// the last one (the first list is published even when empty).
    pub fn publish(&mut self, servers: Vec<ServerEntry>) -> Option<Arc<FeedState>> {
        let keys = &self.keys;
        let change = self.list.update_keyed(servers, |e| Some(keys.key(e)));
        self.publish_change(change)
    }

    /// Takes a source's changes (the master's feed's: its ids) as they
    /// are, without reading the rest of the
    /// list. [`Unfollowed`] when they cannot be passed on (the first time,
    /// after a list taken whole from elsewhere, or a change that does not
    /// fit): the list is as it was, and the source's whole list is needed
    /// ([`Feed::follow`]).
    pub fn pass_on(
        &mut self,
        changes: Vec<Changeset>,
    ) -> Result<Option<Arc<FeedState>>, Unfollowed> {
        let keys = &self.keys;
        let change = self.list.pass_on(changes, |e| Some(keys.key(e)))?;
        Ok(self.publish_change(change))
    }

    /// Takes a source's whole list, numbered by the source (its ids): its
    /// changes are passed on from now on ([`Feed::pass_on`]).
    pub fn follow(&mut self, whole: Vec<Keyed>) -> Option<Arc<FeedState>> {
        let keys = &self.keys;
        let change = self.list.follow(whole, |e| Some(keys.key(e)));
        self.publish_change(change)
    }

    /// Takes the embedded registry's list as it is now, and publishes it
    /// itself: the registry numbers its entries and keys them with this
    /// feed's keys ([`Feed::key_fn`], given to the registry when it is
    /// followed), so nothing is numbered, keyed or copied here. `seen` is
    /// the registry's list this feed last took (`None`: none yet); returns
    /// the list taken, to pass next time, and the list to publish, if the
    /// registry changed.
    pub fn take_registry(
        &mut self,
        registry: &Registry,
        seen: Option<&Entries>,
    ) -> (Entries, Option<Arc<FeedState>>) {
        let mut publishing = Publishing::new(&mut self.publisher);
        let seen = registry.catch_up(seen, &mut publishing);
        (seen, publishing.published().map(FeedState::new))
    }

    /// How this feed keys an entry, for a registry whose list it publishes
    /// as it is ([`Feed::take_registry`]).
    pub fn key_fn(&self) -> impl Fn(&ServerEntry) -> Option<ServerKey> + Send + Sync + 'static {
        let keys = self.keys.clone();
        move |e| Some(keys.key(e))
    }

    /// Publishes the list as it now stands after `change` (`None`: nothing
    /// changed, published only the first time).
    fn publish_change(&mut self, change: Option<Changeset>) -> Option<Arc<FeedState>> {
        self.publisher
            .publish(self.list.shared(), change)
            .map(FeedState::new)
    }
}

/// A fresh epoch for a bridge's list: the master's feed numbers its own
/// list the same way (8 random bytes as 16 hex digits).
pub use master::feed::new_epoch;

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::{
        delta::{ClientList, DeltaMessage},
        message::Envelope,
        Stats,
    };

    fn test_keys() -> Keys {
        Keys::from_secret(b"test")
    }

    fn entry(name: &str, current: u32) -> ServerEntry {
        let mut stats = Stats::default();
        stats.players.current = current;
        ServerEntry {
            registrant: None,
            name: name.into(),
            address: Some("192.0.2.7".into()),
            port: Some(20000),
            stats,
        }
    }

    fn read(text: &str) -> DeltaMessage {
        let env = Envelope::parse(text.as_bytes()).unwrap();
        DeltaMessage::from_frame(&env.command, text)
            .unwrap()
            .unwrap()
    }

    fn client(text: &str) -> ClientList {
        match read(text) {
            DeltaMessage::Snapshot(s) => ClientList::from_snapshot(s),
            other => panic!("not a snapshot: {other:?}"),
        }
    }

    fn apply(list: &mut ClientList, text: &str) {
        match read(text) {
            DeltaMessage::Delta(d) => list.apply(&d).unwrap(),
            other => panic!("not a delta: {other:?}"),
        }
    }

    #[test]
    fn publishes_changes_only_and_catches_up() {
        let mut feed = Feed::new("e", Visibility::new(true), test_keys());
        let first = feed
            .publish(vec![])
            .expect("the first list is published even if empty");
        assert_eq!(first.seq, 1);
        assert!(feed.publish(vec![]).is_none());
        let a = feed.publish(vec![entry("a", 0)]).unwrap();
        let b = feed.publish(vec![entry("a", 1), entry("b", 0)]).unwrap();
        assert_eq!(b.seq, 3);

        // A viewer holding list 1 gets the two deltas, without addresses.
        let resume = Resume {
            epoch: "e".into(),
            since: 1,
        };
        let texts = b.catch_up(Some(&resume), false);
        assert_eq!(texts.len(), 2);
        assert!(texts.iter().all(|t| !t.as_str().contains("192.0.2.7")));
        let mut list = client(first.snapshot().viewer.as_str());
        for t in &texts {
            apply(&mut list, t);
        }
        assert_eq!(list.len(), 2);
        assert_eq!(list.seq(), 3);
        // An admin sees the addresses.
        assert!(b.catch_up(Some(&resume), true)[1]
            .as_str()
            .contains("192.0.2.7"));

        // Current: one empty confirmation. Other epoch or ahead: snapshot.
        let current = b.catch_up(
            Some(&Resume {
                epoch: "e".into(),
                since: 3,
            }),
            false,
        );
        assert_eq!(current.len(), 1);
        apply(&mut list, &current[0]);
        for resume in [
            Resume {
                epoch: "x".into(),
                since: 3,
            },
            Resume {
                epoch: "e".into(),
                since: 9,
            },
        ] {
            let texts = b.catch_up(Some(&resume), false);
            assert_eq!(texts.len(), 1);
            assert!(texts[0]
                .as_str()
                .starts_with(r#"{"command":"bridgeSnapshot""#));
        }
        assert_eq!(a.after(1, false).len(), 1);
        assert_eq!(b.after(1, false).len(), 2);
    }

    #[test]
    fn a_polled_list_takes_no_changes_until_the_sources_whole_list() {
        let mut feed = Feed::new("e", Visibility::new(true), test_keys());
        let polled = feed.publish(vec![entry("a", 0)]).unwrap();
        let keyed = |id, e| Keyed {
            id,
            key: None,
            entry: e,
        };
        let change = Changeset {
            upsert: vec![keyed(7, entry("b", 0))],
            remove: vec![],
        };
        // Numbered by the bridge itself: the source's changes do not apply,
        // and nothing is published.
        assert!(matches!(feed.pass_on(vec![change]), Err(Unfollowed)));
        let whole = feed
            .follow(vec![keyed(3, entry("a", 0)), keyed(7, entry("b", 0))])
            .unwrap();
        assert_eq!(whole.seq, polled.seq + 1, "nothing published in between");
        // Followed now: a's id stays the bridge's, b took the source's.
        let ids: Vec<u64> = whole.list.iter().map(|k| k.id).collect();
        assert_eq!(ids, [1, 7]);
        let next = Changeset {
            upsert: vec![keyed(7, entry("b", 2))],
            remove: vec![3],
        };
        let passed = feed.pass_on(vec![next]).unwrap().unwrap();
        let ids: Vec<u64> = passed.list.iter().map(|k| k.id).collect();
        assert_eq!(ids, [7]);
    }

    #[test]
    fn old_lists_get_a_snapshot() {
        let mut feed = Feed::new("e", Visibility::new(false), test_keys());
        let mut last = None;
        for n in 0..(DELTA_RING as u32 + 5) {
            last = feed.publish(vec![entry("a", n)]);
        }
        let last = last.unwrap();
        let texts = last.after(2, false);
        assert_eq!(texts.len(), 1);
        assert!(texts[0]
            .as_str()
            .starts_with(r#"{"command":"bridgeSnapshot""#));
        assert_eq!(last.after(last.seq - 3, false).len(), 3);
    }

    #[test]
    fn a_list_nobody_read_whole_is_not_written_to_be_compared() {
        let mut feed = Feed::new("e", Visibility::new(false), test_keys());
        let state = feed.publish(vec![entry("a", 1)]).unwrap();
        let text = crate::live::publish::Text::List(state.clone());
        let written = query_reply_text(state.list().servers(), protocol::Addresses::Shown);
        assert!(!text.is(written.as_bytes()), "taken as different");
        assert!(state.plain_written().is_none(), "not written to compare");
        assert_eq!(text.forms().full.as_str(), written);
        assert!(text.is(written.as_bytes()), "compared once written");
    }

    #[test]
    fn api_body_is_the_snapshot_content_compressed() {
        let mut feed = Feed::new("e", Visibility::new(true), test_keys());
        let servers: Vec<_> = (0..500).map(|n| entry(&format!("server {n}"), n)).collect();
        let state = feed.publish(servers).unwrap();
        let body = state.api_body();
        let expected = protocol::delta::snapshot_content_json(
            "e",
            1,
            state.list().list_entries(),
            protocol::Addresses::Hidden,
        );
        assert_eq!(body.identity, expected.as_bytes(), "the snapshot's content");
        let json: serde_json::Value = serde_json::from_slice(&body.identity).unwrap();
        assert_eq!(json["seq"], 1);
        assert_eq!(json["servers"].as_array().unwrap().len(), 500);
        assert!(json["servers"][0].get("address").is_none(), "hidden");
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(&body.gzip[..]),
            &mut unzipped,
        )
        .unwrap();
        assert_eq!(unzipped, body.identity);
        let mut unbr = Vec::new();
        std::io::Read::read_to_end(
            &mut brotli::Decompressor::new(&body.br[..], 4096),
            &mut unbr,
        )
        .unwrap();
        assert_eq!(unbr, body.identity);
        assert!(body.br.len() * 4 < body.identity.len(), "well compressed");
        assert_eq!(state.etag(), "\"e-1\"");
    }
}
