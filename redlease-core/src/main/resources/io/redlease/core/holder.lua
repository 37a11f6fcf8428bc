-- Read who holds the lease and for how long, without changing anything.
-- KEYS[1] lease key. Reply: {holder id or false, remaining milliseconds (-2 when free)}.

return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
