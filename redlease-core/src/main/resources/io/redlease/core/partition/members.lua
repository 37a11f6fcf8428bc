-- Refresh or remove one member of a partitioned election and return the live members.
-- KEYS[1] the member set: a sorted set of instance ids scored by expiry, in Redis server
-- milliseconds. ARGV[1] the instance id, ARGV[2] its time to live in milliseconds; 0 removes it.
-- Reply: the live members' ids, in lexical order.
if redis.replicate_commands then
    redis.replicate_commands()
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local ttl = tonumber(ARGV[2])
if ttl > 0 then
    redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
    redis.call('PEXPIRE', KEYS[1], 2 * ttl)
else
    redis.call('ZREM', KEYS[1], ARGV[1])
end
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
return members
