-- A fenced SET or HSET: the token check, the write and the mark advance run atomically.
-- KEYS[1] high-water mark (<name>:fence:applied); KEYS[2] the written key, never the mark.
-- ARGV[1] the token as a decimal string; ARGV[2..] the write's own arguments.
-- Reply: 1 when the write was applied, 0 when the token is stale (below 1 or below the mark).

local mark = redis.call('GET', KEYS[1])
if mark == ARGV[1] then
    -- The common case: within a term the mark holds the term's token (acquire stamps it).
    --[[write]]
    return 1
end
local token = tonumber(ARGV[1])
if mark then
    if not string.find(mark, '^%d+$') then
        return redis.error_reply('redlease: ' .. KEYS[1] .. ' must hold a decimal integer token;'
            .. ' repair or delete it')
    end
    if token < tonumber(mark) then
        return 0
    end
end
if token < 1 then
    return 0
end
--[[write]]
-- Only a write that completed advances the mark; the token text is stored verbatim.
redis.call('SET', KEYS[1], ARGV[1])
return 1
