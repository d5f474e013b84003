-- Discord status cards (docs/protocol.md §2.6): a webhook of the format
-- "discord-card" keeps one message up to date. `webhooks` gains
-- `card_msg`, the id of the message it edits (NULL: none posted yet, or
-- it was deleted in the channel), and `card_edit_ms`, when the message
-- was last posted or edited (Unix ms; 0: never), which paces the edits
-- of every bridge on the database. Added by the migration's code, where
-- they are missing: SQLite has no `ADD COLUMN IF NOT EXISTS`, and every
-- migration may run again.
SELECT 1;
