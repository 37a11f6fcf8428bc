package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.redlease.boot.autoconfigure.metrics.RedleaseMetricsAutoConfiguration;
import io.redlease.boot.metrics.RedleaseMetrics;
import io.redlease.core.Elector;
import io.redlease.core.Observer;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The lease-age gauge behind {@code RedleaseLeaseNearExpiry} ("leadership is about to be lost")
 * must describe the lease, not the callback lane: an application observer or event listener that is
 * slow (it is allowed to be, it only delays other callbacks) must not make a leader whose renewals
 * succeed look as if its lease were about to lapse.
 */
@ExtendWith(RedisExtension.class)
class LeaseAgeGaugeReviewTests {

    @Test
    void aSlowObserverDoesNotAgeAHealthyLease(RedisServer server, TestInfo info) {
        String name = "redlease-review:lease-age:" + System.nanoTime();
        AtomicBoolean block = new AtomicBoolean();
        CountDownLatch release = new CountDownLatch(1);
        Observer slow =
                new Observer() {
                    @Override
                    public void onRoundTrip(
                            Operation operation, Duration duration, boolean succeeded) {
                        if (block.get()) {
                            try {
                                release.await();
                            } catch (InterruptedException ex) {
                                Thread.currentThread().interrupt();
                            }
                        }
                    }
                };
        new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(
                                DataRedisAutoConfiguration.class,
                                RedleaseAutoConfiguration.class,
                                RedleaseMetricsAutoConfiguration.class))
                .withPropertyValues(
                        "spring.data.redis.url=" + server.url(),
                        "redlease.name=" + name,
                        "redlease.ttl=1s")
                .withBean(SimpleMeterRegistry.class)
                .withBean(
                        "slowObserver",
                        ElectorCustomizer.class,
                        () -> (id, builder) -> builder.observer(slow))
                .run(
                        context -> {
                            try {
                                SimpleMeterRegistry registry =
                                        context.getBean(SimpleMeterRegistry.class);
                                context.getBean(RedleaseMetrics.class).bindTo(registry);
                                Elector elector = context.getBean(Elector.class);
                                await().until(
                                                () ->
                                                        registry.get(RedleaseMetrics.LEADER)
                                                                        .tag("name", name)
                                                                        .gauge()
                                                                        .value()
                                                                == 1.0);
                                block.set(true);
                                // The lease is renewed every third of a second: count five
                                // renewals as Redis sees them (its time to live jumps back up).
                                StringRedisTemplate redis =
                                        context.getBean(
                                                "stringRedisTemplate", StringRedisTemplate.class);
                                AtomicLong last = new AtomicLong(Long.MAX_VALUE);
                                AtomicInteger renewals = new AtomicInteger();
                                await().pollInterval(Duration.ofMillis(20))
                                        .until(
                                                () -> {
                                                    Long pttl =
                                                            redis.getExpire(
                                                                    name + ":leader",
                                                                    java.util.concurrent.TimeUnit
                                                                            .MILLISECONDS);
                                                    if (pttl != null
                                                            && pttl > last.getAndSet(pttl)) {
                                                        renewals.incrementAndGet();
                                                    }
                                                    return renewals.get() >= 5;
                                                });
                                assertThat(elector.isLeader()).isTrue();
                                double age =
                                        registry.get(RedleaseMetrics.LEASE_AGE)
                                                .tag("name", name)
                                                .gauge()
                                                .value();
                                assertThat(age)
                                        .as("lease age of a leader renewing every 1/3 s")
                                        .isLessThan(0.75);
                            } finally {
                                release.countDown();
                            }
                        });
    }
}
