-- Read a hash, without changing anything: a once-per-slot job's ledger.
-- KEYS[1] the hash. Reply: {field, value, ...}, empty when the hash does not exist.

return redis.call('HGETALL', KEYS[1])
