-- A fenced write: the token check, the write and the mark advance run atomically.
-- KEYS[1] high-water mark (<name>:fence:applied); KEYS[2..] the write's own keys.
-- ARGV[1] the token as a decimal string; ARGV[2..] the write's own arguments.
-- Reply: 1 when the write was applied, 0 when the token is stale (below 1 or below the mark).

-- The write is defined first, so it cannot see (or change) the fence's own locals below; the
-- fence keeps its key and token in those, out of reach of a write that edits KEYS or ARGV.
local function write()
--[[write]]
end

local mark_key = KEYS[1]
local token_text = ARGV[1]
local token = tonumber(token_text)
local mark = redis.call('GET', mark_key)
if mark and not string.match(mark, '^%d+$') then
    return redis.error_reply('redlease: ' .. mark_key .. ' must hold a decimal integer token;'
        .. ' repair or delete it')
end
if token < 1 or (mark and token < tonumber(mark)) then
    return 0
end

write()

-- Only a write that completed advances the mark; the token text is stored verbatim. Within a
-- term the mark already holds this very text (acquire stamps it): then it is rewritten only if
-- the write itself changed it, which spares the replicas and the AOF a SET per write.
if mark ~= token_text or redis.call('GET', mark_key) ~= token_text then
    redis.call('SET', mark_key, token_text)
end
return 1
