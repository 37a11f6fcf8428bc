-- Give the leader's metadata the lease's remaining lifetime again, after a renewal.
-- KEYS[1] lease key, KEYS[2] info key. ARGV[1] instance id, ARGV[2] the term's token.
-- Reply: 1 when refreshed; 0 when the lease is not ours or the metadata is not this term's.

-- The writes below depend on the clock (TIME or PTTL): replicate them, not the script. Redis
-- does so by default since 5.0; before, and with lua-replicate-commands no, only this asks for it.
if redis.replicate_commands then
    redis.replicate_commands()
end

if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('HGET', KEYS[2], 'token') ~= ARGV[2] then
    return 0
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl <= 0 then
    return 0
end
redis.call('PEXPIRE', KEYS[2], pttl)
return 1
