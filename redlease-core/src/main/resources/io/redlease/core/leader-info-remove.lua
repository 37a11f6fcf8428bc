-- Delete the leader's metadata when its term ends, unless a later term has replaced it.
-- KEYS[1] info key. ARGV[1] instance id, ARGV[2] the ended term's token. Reply: 1 when deleted.

if redis.call('HGET', KEYS[1], 'instance') == ARGV[1]
        and redis.call('HGET', KEYS[1], 'token') == ARGV[2] then
    return redis.call('DEL', KEYS[1])
end
return 0
