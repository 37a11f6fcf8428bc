package io.redlease.boot.app;

import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A leader-only scheduled job that appends {@code token:instance:sequence} to a Redis list through
 * the fence, then dwells a while inside the call (where an ended term interrupts it).
 */
public class SequenceJob {

    /** Appends one entry with the next sequence number; the whole write is fenced. */
    static final String APPEND =
            "local seq = redis.call('INCR', KEYS[2])\n"
                    + "redis.call('RPUSH', KEYS[3], ARGV[1] .. ':' .. ARGV[2] .. ':' .. seq)";

    /** Interrupted calls, by instance id. */
    static final Map<String, AtomicInteger> interrupted = new ConcurrentHashMap<>();

    private final LeadershipContext leadership;

    private final String name;

    private final long dwellMillis;

    public SequenceJob(
            LeadershipContext leadership,
            @Value("${redlease.name}") String name,
            @Value("${test.dwell-millis:5}") long dwellMillis) {
        this.leadership = leadership;
        this.name = name;
        this.dwellMillis = dwellMillis;
    }

    @Scheduled(fixedDelay = 10)
    @LeaderOnly
    public void run() {
        boolean applied =
                leadership
                        .requireFencer()
                        .eval(
                                APPEND,
                                List.of(name + ":seq", name + ":log"),
                                leadership.instanceId());
        if (!applied) {
            return;
        }
        try {
            Thread.sleep(dwellMillis);
        } catch (InterruptedException ex) {
            interrupted
                    .computeIfAbsent(leadership.instanceId(), id -> new AtomicInteger())
                    .incrementAndGet();
        }
    }
}
