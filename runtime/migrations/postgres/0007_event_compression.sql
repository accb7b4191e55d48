-- The columns that hold an event's text and attributes, or a kept copy of a whole event, are
-- compressed with lz4 when the server has it (PostgreSQL 14 and later, built with lz4, as
-- Debian's is) instead of the server's default, pglz. An event may carry 16 KiB of text and
-- 8 KiB of attributes; with the largest events, pglz made up most of the server's work per
-- event (BENCHMARKS.md, "the eighth pass"). Only values written from now on are compressed so;
-- nothing is rewritten. A server without lz4 keeps its default: the edges work the same.
-- The statements are run as strings so that a server older than 14, which does not know
-- `SET COMPRESSION`, fails them inside the block, where the failure is caught.
DO $$
BEGIN
    EXECUTE 'ALTER TABLE events ALTER COLUMN text SET COMPRESSION lz4, '
            'ALTER COLUMN attributes SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE waits ALTER COLUMN event_data SET COMPRESSION lz4';
    EXECUTE 'ALTER TABLE fires ALTER COLUMN event_data SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error THEN
    RAISE NOTICE 'lz4 compression is not available; events keep the server''s default';
END
$$;
