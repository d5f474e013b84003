-- Web Push (docs/protocol.md §2.4), in the bridge's database beside the
-- history: the bridge's VAPID key pair (its P-256 private scalar, created
-- once; the public key is derived from it) and the players' subscriptions.
-- `subscription` and `watches` are the validated request's parts as JSON
-- (read back through protocol::push: a row is trusted no more than a
-- request); `source` is the network the subscription was made from (its
-- address, an IPv6 /64), which the per-address limit counts.
CREATE TABLE push_vapid (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    secret BLOB NOT NULL
) STRICT;

CREATE TABLE push_subscriptions (
    id           TEXT PRIMARY KEY,
    subscription TEXT NOT NULL,
    watches      TEXT NOT NULL,
    source       TEXT NOT NULL,
    -- the subscription's auth secret (base64url): only a request that
    -- knows it replaces or removes the row
    auth         TEXT NOT NULL,
    created_ms   INTEGER NOT NULL,
    updated_ms   INTEGER NOT NULL
) STRICT;
