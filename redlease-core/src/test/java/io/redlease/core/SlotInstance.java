package io.redlease.core;

import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.scheduling.SlotJobs;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Consumer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * One application instance for once-per-slot tests: a context with {@code @EnableScheduling}, its
 * elector (TTL 1 s) and, unless the test registers its own, a {@code taskScheduler} on a clock
 * skewed by the given amount. The elector's observer has the jobs catch up after election, as the
 * Boot auto-configuration does.
 */
final class SlotInstance implements AutoCloseable {

    final String id;

    final Elector elector;

    final AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();

    /** When this instance last won a term, in epoch milliseconds of the real clock; 0 before. */
    volatile long electedAt;

    SlotInstance(StringRedisTemplate redis, String name, String id, Duration skew) {
        this(
                redis,
                name,
                id,
                context ->
                        context.registerBean(
                                "taskScheduler",
                                ThreadPoolTaskScheduler.class,
                                () -> scheduler(id, skew, 2)));
    }

    /**
     * @param schedulers registers the instance's schedulers in its context
     */
    SlotInstance(
            StringRedisTemplate redis,
            String name,
            String id,
            Consumer<AnnotationConfigApplicationContext> schedulers) {
        this.id = id;
        schedulers.accept(context);
        this.elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .instanceId(id)
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(100))
                                .acquireInterval(Duration.ofMillis(100))
                                .observer(
                                        new Observer() {
                                            @Override
                                            public void onElected(long token) {
                                                electedAt = System.currentTimeMillis();
                                                if (!context.isActive()) {
                                                    // Elected before the jobs were scheduled: they
                                                    // catch up when Spring schedules them.
                                                    return;
                                                }
                                                jobs().observer(Elections.DEFAULT).onElected(token);
                                            }
                                        })
                                .build());
        context.registerBean(Elections.class, () -> Elections.of(elector));
        context.registerBean(
                LeadershipContext.class,
                () -> new LeadershipContext(context.getBean(Elections.class)));
        context.registerBean("instanceId", String.class, () -> id);
        context.register(Infrastructure.class);
    }

    static ThreadPoolTaskScheduler scheduler(String id, Duration skew, int poolSize) {
        ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
        scheduler.setPoolSize(poolSize);
        scheduler.setClock(Clock.offset(Clock.systemUTC(), skew));
        scheduler.setThreadNamePrefix(id + "-");
        return scheduler;
    }

    SlotInstance with(Class<?>... components) {
        context.register(components);
        return this;
    }

    SlotInstance start() {
        context.refresh();
        elector.start();
        return this;
    }

    SlotJobs jobs() {
        return context.getBean(LeaderOnlyAnnotationBeanPostProcessor.class).slotJobs();
    }

    @Override
    public void close() {
        elector.close();
        context.close();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    static class Infrastructure {

        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }
    }
}
