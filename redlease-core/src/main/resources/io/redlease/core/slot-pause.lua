-- Pauses or resumes a once-per-slot job, for every instance: the state lives in the job's ledger,
-- beside the fields the terms write, and any instance may change it (an operator's act, not a
-- term's write: it is not fenced).
-- KEYS[1] the job's ledger (<name>:slots:<job>).
-- ARGV[1] '1' to pause, '0' to resume; ARGV[2] when (epoch milliseconds).
-- Pausing sets 'paused' to when it was paused; resuming sets it to '0' and 'resumed' to when it
-- was resumed: the slots up to then are settled, never run.
-- Reply: 1 changed; 0 unchanged (already paused, or not paused).

local paused = redis.call('HGET', KEYS[1], 'paused')
local isPaused = paused and paused ~= '0'
if ARGV[1] == '1' then
    if isPaused then
        return 0
    end
    redis.call('HSET', KEYS[1], 'paused', ARGV[2])
    return 1
end
if not isPaused then
    return 0
end
redis.call('HSET', KEYS[1], 'paused', '0', 'resumed', ARGV[2])
return 1
