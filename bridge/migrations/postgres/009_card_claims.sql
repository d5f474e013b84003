-- The status cards' send slot of the embedded database's version 9
-- (../009_card_claims.sql), in PostgreSQL: until when (Unix ms) one bridge
-- holds a "discord-card" webhook's post or edit (0: nobody).
ALTER TABLE webhooks ADD COLUMN IF NOT EXISTS card_claim_ms BIGINT NOT NULL DEFAULT 0;
