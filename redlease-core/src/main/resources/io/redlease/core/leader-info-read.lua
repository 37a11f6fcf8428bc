-- Read who holds the lease, for how long, and the metadata it published, without changing anything.
-- KEYS[1] lease key, KEYS[2] info key.
-- Reply: {} when the lease is free; else {holder id, remaining milliseconds, field, value, ...},
-- with the fields only when the metadata is the holder's (never an earlier leader's).

local holder = redis.call('GET', KEYS[1])
if not holder then
    return {}
end
local reply = {holder, redis.call('PTTL', KEYS[1])}
if redis.call('HGET', KEYS[2], 'instance') == holder then
    local fields = redis.call('HGETALL', KEYS[2])
    for i = 1, #fields do
        reply[#reply + 1] = fields[i]
    end
end
return reply
