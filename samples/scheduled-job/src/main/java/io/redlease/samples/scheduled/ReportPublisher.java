package io.redlease.samples.scheduled;

import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import java.time.Duration;
import java.util.List;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The leader's job: build the next report, then publish it under the next report number.
 *
 * <p>Report numbers must never go backwards or repeat, even if a leader is paused while building
 * and another instance takes over meanwhile. The number is taken and the report recorded in one
 * fenced write, so a leader whose term is over is refused by Redis. This job deliberately keeps
 * building when its term ends ({@code interruptOnStepDown = false}) to show the fence doing its
 * work: the stale publish is rejected, not applied.
 */
@Component
public class ReportPublisher {

    /** Takes the next number and records {@code token:instance:number} in the published list. */
    static final String PUBLISH =
            """
            local number = redis.call('INCR', KEYS[2])
            redis.call('RPUSH', KEYS[3], ARGV[2] .. ':' .. ARGV[3] .. ':' .. number)
            """;

    private final LeadershipContext leadership;

    private final StringRedisTemplate redis;

    private final DemoEvents events;

    private final Duration buildTime;

    private final String numberKey;

    private final String publishedKey;

    private volatile long lastPublished;

    public ReportPublisher(
            LeadershipContext leadership,
            StringRedisTemplate redis,
            DemoEvents events,
            @Value("${redlease.name}") String election,
            @Value("${sample.report.build-time:1500ms}") Duration buildTime) {
        this.leadership = leadership;
        this.redis = redis;
        this.events = events;
        this.buildTime = buildTime;
        // Keys share the election's hash tag, so this also works on Redis Cluster.
        this.numberKey = election + ":report-number";
        this.publishedKey = election + ":reports";
    }

    @Scheduled(
            fixedDelayString = "${sample.report.interval:250ms}",
            initialDelayString = "${sample.report.initial-delay:0ms}")
    @LeaderOnly(interruptOnStepDown = false)
    public void publishNextReport() throws InterruptedException {
        Fencer fencer = leadership.requireFencer();
        events.emit("building", "token=" + fencer.token());
        Thread.sleep(buildTime.toMillis());
        boolean applied =
                fencer.eval(
                        PUBLISH,
                        List.of(numberKey, publishedKey),
                        Long.toString(fencer.token()),
                        leadership.instanceId());
        if (applied) {
            lastPublished = Long.parseLong(redis.opsForValue().get(numberKey));
            events.emit("published", "token=" + fencer.token() + " report=" + lastPublished);
        } else {
            events.emit("rejected", "token=" + fencer.token());
        }
    }

    /** Returns the number of the last report this instance published, 0 if none. */
    public long lastPublished() {
        return lastPublished;
    }

    /** Returns the published list's key. */
    public String publishedKey() {
        return publishedKey;
    }
}
