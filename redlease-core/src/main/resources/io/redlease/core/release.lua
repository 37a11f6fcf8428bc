-- Delete the lease, only while it still belongs to our term, and tell waiting followers.
-- KEYS[1] lease key, KEYS[2] high-water mark (<name>:fence:applied).
-- ARGV[1] instance id, ARGV[2] release notification channel, ARGV[3] the term's token.
-- Reply: 1 when deleted, 0 when the lease is gone, someone else's, or a newer term's: a release
-- that arrives late must not delete a lease this instance has won again since.

if redis.call('GET', KEYS[1]) ~= ARGV[1] then
    return 0
end
local mark = redis.call('GET', KEYS[2])
if mark and tonumber(mark) and tonumber(mark) > tonumber(ARGV[3]) then
    return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return 1
