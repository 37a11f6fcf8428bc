-- Delete the lease, only while it still holds our id, and tell waiting followers.
-- KEYS[1] lease key; ARGV[1] instance id, ARGV[2] release notification channel.
-- Reply: 1 when deleted, 0 when the lease is gone or someone else's.

if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('DEL', KEYS[1])
    redis.call('PUBLISH', ARGV[2], ARGV[1])
    return 1
end
return 0
