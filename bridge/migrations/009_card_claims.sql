-- Status cards shared by several bridges (docs/protocol.md §2.6):
-- `webhooks` gains `card_claim_ms`, until when (Unix ms) one bridge holds
-- the card's send slot (0: nobody). A bridge takes the slot with one
-- conditional update, only when the card was not posted or edited within
-- its 10 s and no other bridge holds it, and gives it back when its post
-- or edit has ended; a bridge that dies while sending holds it no longer
-- than the claim's end. Added by the migration's code where it is
-- missing, as 008's columns are.
SELECT 1;
