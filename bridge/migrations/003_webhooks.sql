-- Webhooks (docs/protocol.md §2.4): one row per webhook, in the bridge's
-- database beside the history. `spec` is the validated request as JSON
-- (read back through protocol::watch: a row is trusted no more than a
-- request); `secret` is `whsec_` + base64.
CREATE TABLE webhooks (
    id         TEXT PRIMARY KEY,
    spec       TEXT NOT NULL,
    secret     TEXT NOT NULL,
    enabled    INTEGER NOT NULL,
    -- failed deliveries in a row; 20 disable the webhook
    failures   INTEGER NOT NULL DEFAULT 0,
    created_ms INTEGER NOT NULL
) STRICT;
