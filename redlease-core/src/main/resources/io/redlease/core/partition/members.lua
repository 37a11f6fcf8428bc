-- Refresh or remove one member of a partitioned election and return the live members.
-- KEYS[1] the member set: a sorted set of instance ids scored by expiry, in Redis server
-- milliseconds. ARGV[1] the instance id, ARGV[2] its time to live in milliseconds; 0 removes it.
-- ARGV[3] the channel on which an instance that joins (is added) or leaves (is removed) announces
-- its id, so the others look at once instead of at their next round. Nothing depends on it: a user
-- that may not publish there still refreshes, and the others see the change at their next round.
-- Reply: the live members' ids, in lexical order.
if redis.replicate_commands then
    redis.replicate_commands()
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local ttl = tonumber(ARGV[2])
local changed
if ttl > 0 then
    changed = redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
    redis.call('PEXPIRE', KEYS[1], 2 * ttl)
else
    changed = redis.call('ZREM', KEYS[1], ARGV[1])
end
if changed > 0 and ARGV[3] then
    redis.pcall('PUBLISH', ARGV[3], ARGV[1])
end
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
return members
