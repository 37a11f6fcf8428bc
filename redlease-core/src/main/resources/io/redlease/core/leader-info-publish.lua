-- Publish the leader's metadata beside its lease, with the lease's remaining lifetime.
-- KEYS[1] lease key, KEYS[2] info key (<name>:leader:info, which the Go library never touches).
-- ARGV[1] instance id, ARGV[2] the term's token, ARGV[3..] field, value pairs.
-- Reply: 1 when published; 0 when the lease is not ours (the term is over).

-- The writes below depend on the clock (TIME or PTTL): replicate them, not the script. Redis
-- does so by default since 5.0; before, and with lua-replicate-commands no, only this asks for it.
if redis.replicate_commands then
    redis.replicate_commands()
end

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
end
local pttl = redis.call('PTTL', KEYS[1])
if pttl <= 0 then
    return 0
end
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'instance', ARGV[1], 'token', ARGV[2])
for i = 3, #ARGV - 1, 2 do
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('PEXPIRE', KEYS[2], pttl)
return 1
