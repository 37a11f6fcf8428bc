-- A fenced write: the token check, the write and the mark advance run atomically.
-- KEYS[1] high-water mark (<name>:fence:applied); KEYS[2..] the write's own keys.
-- ARGV[1] the token as a decimal string; ARGV[2..] the write's own arguments.
-- Reply: 1 when the write was applied, 0 when the token is stale (below 1 or below the mark).

local token = tonumber(ARGV[1])
local mark = redis.call('GET', KEYS[1])
if token < 1 or (mark and token < tonumber(mark)) then
    return 0
end

local function write()
--[[write]]
end
write()

-- Only a write that completed advances the mark; the token text is stored verbatim.
redis.call('SET', KEYS[1], ARGV[1])
return 1
