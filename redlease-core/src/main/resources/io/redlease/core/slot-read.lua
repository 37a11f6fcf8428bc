-- Read a once-per-slot job's ledger for its scheduling, without changing anything: before each run
-- (whether the job is paused) and at a follower's ticks. The same read as read-hash.lua, kept as a
-- script of its own so that a traced client can tell this background read from the reads an
-- application asks for (see EngineTraffic).
-- KEYS[1] the ledger. Reply: {field, value, ...}, empty when the ledger does not exist.

return redis.call('HGETALL', KEYS[1])
