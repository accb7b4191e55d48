-- The planner no longer keeps statistics of `waits.state`. A wait's state changes from open to
-- closed all day, and ANALYZE runs only after a tenth of the table changed: with many closed
-- waits kept, the sample it took could say that no wait was open long after thousands were.
-- Believing the partial indexes on open waits empty, the planner then answered routing's
-- statements by reading every open wait through whichever of them came first (the deadline
-- index, for a lookup by subject). Without statistics it takes the fixed estimate of an
-- equality (half a percent of the rows), which never makes a whole index look free.
ALTER TABLE waits ALTER COLUMN state SET STATISTICS 0;
