-- A term takes over a once-per-slot job: only a current term that still holds the lease may, and
-- from then on no older term can mark the job's slots. Replies with the job's ledger as it is.
-- KEYS[1] high-water mark (<name>:fence:applied), KEYS[2] lease key (<name>:leader),
-- KEYS[3] the job's ledger (<name>:slots:<job>).
-- ARGV[1] the term's token, ARGV[2] this instance's id, ARGV[3] when the job starts to be tracked
-- (epoch milliseconds), kept by a claim of a job that has never completed a slot: slots up to it
-- are not the job's, slots after it that never complete are missed; ARGV[4] the time zone the
-- job's cron slots depend on, kept by the first claim that names one, or empty; ARGV[5] the start
-- a fixed rate's slots count from (epoch milliseconds), kept by the first claim that names one,
-- or empty: a run cut short before the first mark leaves the rate's phase for the successor
-- (ledgers written before claims kept it get it from this claim, or else from the first mark).
-- Reply: {1, field, value, ...} when claimed; {0} when a newer term exists; {-1} when the lease
-- is no longer this instance's.

local mark = redis.call('GET', KEYS[1])
if mark and not string.match(mark, '^%d+$') then
    return redis.error_reply('redlease: ' .. KEYS[1] .. ' must hold a decimal integer token;'
        .. ' repair or delete it')
end
if mark and tonumber(ARGV[1]) < tonumber(mark) then
    return {0}
end
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
    return {-1}
end
if mark ~= ARGV[1] then
    redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('HSET', KEYS[3], 'token', ARGV[1])
if redis.call('HEXISTS', KEYS[3], 'slot') == 0 then
    redis.call('HSETNX', KEYS[3], 'since', ARGV[3])
end
if ARGV[4] ~= '' then
    redis.call('HSETNX', KEYS[3], 'zone', ARGV[4])
end
if ARGV[5] and ARGV[5] ~= '' then
    redis.call('HSETNX', KEYS[3], 'epoch', ARGV[5])
end
local reply = redis.call('HGETALL', KEYS[3])
table.insert(reply, 1, 1)
return reply
