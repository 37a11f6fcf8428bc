-- The preference gate in front of acquire.lua (this text is prepended to it): while the lease is
-- free, an instance does not take it if another live candidate that is ready ranks higher.
-- KEYS[4] candidates (<name>:candidates: instance id -> "<expires ms>|<ready 1/0>|<rank>"),
-- ARGV[3] this instance's rank (the metadata key and fields, if any, follow them). Reply as acquire.lua's; {0, -1} when the gate holds a free lease back (the
-- follower polls again at its acquire interval). A leftover lease of this instance's own id is
-- not free: while the gate holds it back, the reply is {0, pttl} of that lease, which lapses to
-- the higher candidate. The Go library neither sends nor reads these.

-- The writes below depend on the clock (TIME or PTTL): replicate them, not the script. Redis
-- does so by default since 5.0; before, and with lua-replicate-commands no, only this asks for it.
if redis.replicate_commands then
    redis.replicate_commands()
end

local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then
    return {0, redis.call('PTTL', KEYS[1]), holder}
end
local function ranks_above(a, b)
    local n = math.min(#a, #b)
    for i = 1, n do
        local x, y = string.byte(a, i), string.byte(b, i)
        if x ~= y then
            return x > y
        end
    end
    return #a > #b
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local entries = redis.call('HGETALL', KEYS[4])
for i = 1, #entries, 2 do
    if entries[i] ~= ARGV[1] then
        local expires, ready, rank = string.match(entries[i + 1], '^(%d+)|(%d)|(.*)$')
        if expires and tonumber(expires) > now and ready == '1' and ranks_above(rank, ARGV[3]) then
            if holder then
                return {0, redis.call('PTTL', KEYS[1]), holder}
            end
            return {0, -1}
        end
    end
end

