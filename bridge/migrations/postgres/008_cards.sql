-- The status cards' columns of the embedded database's version 8
-- (../008_cards.sql), in PostgreSQL: the message a "discord-card" webhook
-- edits (NULL: none yet) and when it was last posted or edited (Unix ms).
ALTER TABLE webhooks ADD COLUMN IF NOT EXISTS card_msg TEXT;
ALTER TABLE webhooks ADD COLUMN IF NOT EXISTS card_edit_ms BIGINT NOT NULL DEFAULT 0;
