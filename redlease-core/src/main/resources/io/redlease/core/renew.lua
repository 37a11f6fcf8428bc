-- Extend the lease, only while it still holds our id.
-- KEYS[1] lease key; ARGV[1] instance id, ARGV[2] lease time to live in milliseconds.
-- Reply: 1 when extended to the full time to live, 0 when the lease is gone or someone else's.

if redis.call('GET', KEYS[1]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1
end
return 0
