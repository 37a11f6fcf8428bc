-- Marks a once-per-slot job's slot complete: only for a current term that still holds the lease,
-- and only if the slot is newer than the completed one. Sets the start of a fixed rate if the
-- ledger has none yet (a claim records it first; this covers ledgers claimed before it did).
-- KEYS[1] high-water mark (<name>:fence:applied), KEYS[2] lease key (<name>:leader),
-- KEYS[3] the job's ledger (<name>:slots:<job>).
-- ARGV[1] the term's token, ARGV[2] this instance's id, ARGV[3] the slot, ARGV[4] when its run
-- completed, ARGV[5] the start (ARGV[3..5] in epoch milliseconds).
-- Reply: 1 marked; 2 not marked, the slot is not newer than the completed one; 0 not marked, a
-- newer term exists; -1 not marked, the lease is no longer this instance's.

local mark = redis.call('GET', KEYS[1])
if mark and not string.match(mark, '^%d+$') then
    return redis.error_reply('redlease: ' .. KEYS[1] .. ' must hold a decimal integer token;'
        .. ' repair or delete it')
end
if mark and tonumber(ARGV[1]) < tonumber(mark) then
    return 0
end
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
    return -1
end
local done = tonumber(redis.call('HGET', KEYS[3], 'slot'))
if done and tonumber(ARGV[3]) <= done then
    return 2
end
redis.call('HSET', KEYS[3], 'slot', ARGV[3], 'completed', ARGV[4], 'token', ARGV[1])
redis.call('HSETNX', KEYS[3], 'epoch', ARGV[5])
return 1
