-- Read who holds the lease, for how long, and the metadata it published, without changing anything.
-- KEYS[1] lease key, KEYS[2] info key, KEYS[3] high-water mark (<name>:fence:applied).
-- Reply: {} when the lease is free; else {holder id, remaining milliseconds, field, value, ...},
-- with the fields only when the metadata is the current term's: written by the holder with the
-- newest token (the mark). An earlier leader's is never returned, nor an earlier term of the same
-- instance id (a crashed instance restarted with its id takes its own lease over as a new term).

local holder = redis.call('GET', KEYS[1])
if not holder then
    return {}
end
local reply = {holder, redis.call('PTTL', KEYS[1])}
local info = redis.call('HMGET', KEYS[2], 'instance', 'token')
local mark = redis.call('GET', KEYS[3])
if info[1] == holder and info[2] and mark and tonumber(info[2]) == tonumber(mark) then
    local fields = redis.call('HGETALL', KEYS[2])
    for i = 1, #fields do
        reply[#reply + 1] = fields[i]
    end
end
return reply
