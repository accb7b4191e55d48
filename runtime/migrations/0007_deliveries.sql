-- The deliveries an edge has received, by identity, kept after their events' bodies are purged
-- at one day, for as long as the longest wait can last and its retention (eight days): a
-- redelivery in that time is a duplicate that routes nothing (issue 35, item 4). The identity
-- is what the sender signed: a JSON source's event id, a digest of a GitHub body (whose
-- delivery id is unsigned; item 3). `event_id` names the event the first delivery became.
-- (0006 is left to another change of this round; the migrator allows gaps.)
CREATE TABLE deliveries (
    source   TEXT NOT NULL,
    identity TEXT NOT NULL,
    event_id TEXT NOT NULL,
    first_at INTEGER NOT NULL,
    PRIMARY KEY (source, identity)
) WITHOUT ROWID;
CREATE INDEX deliveries_first_at ON deliveries (first_at);
