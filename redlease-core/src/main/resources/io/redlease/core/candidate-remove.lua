-- Remove this candidate's entry when it stops contending. KEYS[1] candidates, ARGV[1] instance id.

return redis.call('HDEL', KEYS[1], ARGV[1])
