-- Window events are applied by the post's state when they run, not by what was true when they
-- were sent. This counter rises with every change of what followers' windows should hold
-- (visibility to or from private, delete), in the same statement as the change; window writes
-- carry it, so a write derived from an older read can never undo a newer one
-- (see src/domain/window.rs and src/domain/fanout.rs).
ALTER TABLE posts ADD COLUMN state_version INTEGER NOT NULL DEFAULT 0;
