-- Try to win a new leadership term.
-- KEYS[1] lease key (<name>:leader), KEYS[2] token counter (<name>:fence),
-- KEYS[3] high-water mark (<name>:fence:applied).
-- ARGV[1] instance id, ARGV[2] lease time to live in milliseconds.
-- Optionally, KEYS[FIXED_KEYS + 1] leader metadata (<name>:leader:info) and ARGV[FIXED_ARGS + 1..]
-- its field, value pairs: a won term publishes them in the same round trip, so the metadata is
-- visible as soon as the lease is. FIXED_KEYS and FIXED_ARGS (3 and 2 here) are declared in front
-- of this text by the loader (Scripts.java).
-- Reply: {token, 0} when this instance starts a new term (token >= 1), or
-- {0, pttl, holder} when another instance (id holder) holds the lease for pttl more milliseconds.

-- The counter and the mark must hold decimal integers (or be absent) before anything is written:
-- an error after the lease was taken would leave it held by a term that never starts.
local counter = redis.call('GET', KEYS[2])
local mark = redis.call('GET', KEYS[3])
for key, value in pairs({[KEYS[2]] = counter, [KEYS[3]] = mark}) do
    if value and not string.match(value, '^%d+$') then
        return redis.error_reply('redlease: ' .. key .. ' must hold a decimal integer token;'
            .. ' repair or delete it (no election can start meanwhile)')
    end
end

local function new_term()
    -- The counter must end above the mark: a lost or restored counter heals from it.
    if mark and tonumber(mark) > tonumber(counter or '0') then
        redis.call('SET', KEYS[2], mark)
    end
    local token = redis.call('INCR', KEYS[2])
    -- Electing a term fences out every older token at once; the stored text is copied
    -- verbatim so no number formatting is involved.
    redis.call('SET', KEYS[3], redis.call('GET', KEYS[2]))
    local info = KEYS[FIXED_KEYS + 1]
    if info then
        redis.call('DEL', info)
        redis.call('HSET', info, 'instance', ARGV[1], 'token', redis.call('GET', KEYS[2]))
        for i = FIXED_ARGS + 1, #ARGV - 1, 2 do
            redis.call('HSET', info, ARGV[i], ARGV[i + 1])
        end
        redis.call('PEXPIRE', info, ARGV[2])
    end
    return token
end

if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return {new_term(), 0}
end

-- A lease still holding our own id is a leftover of an earlier term of this instance
-- (a lost release, a restart with a fixed id): take it over as a new term.
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return {new_term(), 0}
end

return {0, redis.call('PTTL', KEYS[1]), holder}
