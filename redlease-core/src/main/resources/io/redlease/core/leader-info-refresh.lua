-- Give the leader's metadata the lease's remaining lifetime again, after a renewal.
-- KEYS[1] lease key, KEYS[2] info key. ARGV[1] instance id, ARGV[2] the term's token.
-- Reply: 1 when refreshed; 0 when the lease is not ours or the metadata is not this term's.

if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('HGET', KEYS[2], 'token') ~= ARGV[2] then
    return 0
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl <= 0 then
    return 0
end
redis.call('PEXPIRE', KEYS[2], pttl)
return 1
