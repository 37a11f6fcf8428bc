-- Extend the lease, only while it still holds our id and our term is the newest.
-- KEYS[1] lease key, KEYS[2] high-water mark (<name>:fence:applied).
-- ARGV[1] instance id, ARGV[2] lease time to live in milliseconds, ARGV[3] the term's token.
-- Reply: 1 when extended to the full time to live; 0 when the lease is gone or someone else's,
-- or when the mark has moved past our token (a newer term exists, possibly our own from an
-- acquire that arrived late): the term is over either way.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
end
local mark = redis.call('GET', KEYS[2])
if mark and not string.match(mark, '^%d+$') then
    return redis.error_reply('redlease: ' .. KEYS[2] .. ' must hold a decimal integer token;'
        .. ' repair or delete it')
end
if mark and tonumber(mark) > tonumber(ARGV[3]) then
    return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
