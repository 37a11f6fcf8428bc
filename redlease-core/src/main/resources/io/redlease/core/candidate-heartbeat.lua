-- Record that this candidate is live, whether it is ready and its rank, for its entry lifetime;
-- drop entries that have expired; reply with the highest rank among the other live, ready
-- candidates (false when there is none), which a leader compares with its own.
-- KEYS[1] candidates (<name>:candidates). ARGV[1] instance id, ARGV[2] entry lifetime in
-- milliseconds, ARGV[3] ready (1 or 0), ARGV[4] rank.

-- The writes below depend on the clock (TIME or PTTL): replicate them, not the script. Redis
-- does so by default since 5.0; before, and with lua-replicate-commands no, only this asks for it.
if redis.replicate_commands then
    redis.replicate_commands()
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
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], ARGV[1], (now + ttl) .. '|' .. ARGV[3] .. '|' .. ARGV[4])
local best = false
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
    local expires, ready, rank = string.match(entries[i + 1], '^(%d+)|(%d)|(.*)$')
    if not expires or tonumber(expires) <= now then
        redis.call('HDEL', KEYS[1], entries[i])
    elseif entries[i] ~= ARGV[1] and ready == '1' and (not best or ranks_above(rank, best)) then
        best = rank
    end
end
-- The hash lives on while any candidate heartbeats; it goes when they all have gone.
redis.call('PEXPIRE', KEYS[1], 2 * ttl)
return best
