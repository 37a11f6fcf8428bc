package io.redlease.boot.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.event.LeadershipGrantedEvent;
import io.redlease.core.Elector;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.TaskDecorator;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * The application with {@code spring.threads.virtual.enabled=true}: the scheduler runs the
 * leader-only job on virtual threads, where the job writes through its term's fence and is
 * interrupted when the term ends. Virtual threads need Java 21; CI runs this on Java 25.
 */
@ExtendWith(RedisExtension.class)
@EnabledForJreRange(min = JRE.JAVA_21)
class VirtualThreadsApplicationTests {

    /**
     * A leader-only job that writes through the fence, then works until its term ends, recording
     * its thread and the tokens it wrote and was interrupted in.
     */
    static class Probe {

        private final List<Boolean> virtual = new CopyOnWriteArrayList<>();

        private final List<Long> ran = new CopyOnWriteArrayList<>();

        private final List<Long> interrupted = new CopyOnWriteArrayList<>();

        private volatile boolean finished;

        private final LeadershipContext leadership;

        Probe(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedDelay = 10)
        @LeaderOnly
        public void work() {
            if (finished) {
                return;
            }
            long token = leadership.token().orElseThrow();
            virtual.add(isVirtual(Thread.currentThread()));
            if (leadership
                    .requireFencer()
                    .set(leadership.elector().name() + ":probe", Long.toString(token))) {
                ran.add(token);
            }
            try {
                // The work lasts until the term ends and interrupts it.
                Thread.sleep(60_000);
            } catch (InterruptedException ex) {
                interrupted.add(token);
            }
        }

        // Accessors, since the bean is a proxy (@LeaderOnly) whose own fields are unset.

        public List<Boolean> virtual() {
            return virtual;
        }

        public List<Long> ran() {
            return ran;
        }

        public List<Long> interrupted() {
            return interrupted;
        }

        /** Makes later calls return at once, so that closing the context waits for nothing. */
        public void finish() {
            finished = true;
        }

        /** {@code Thread.isVirtual()}, called reflectively since the code is compiled for 17. */
        static boolean isVirtual(Thread thread) {
            try {
                return (Boolean) Thread.class.getMethod("isVirtual").invoke(thread);
            } catch (ReflectiveOperationException ex) {
                throw new IllegalStateException(ex);
            }
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ProbeConfiguration {

        @Bean
        Probe probe(LeadershipContext leadership) {
            return new Probe(leadership);
        }
    }

    @Test
    void leaderOnlyWorkRunsOnVirtualThreadsAndIsInterruptedAtTheEndOfItsTerm(RedisServer server) {
        String name = "redlease-virtual-threads-test:" + System.nanoTime();
        List<Boolean> eventsOnVirtualThreads = new CopyOnWriteArrayList<>();
        try (ConfigurableApplicationContext context =
                new SpringApplicationBuilder(TestApplication.class, ProbeConfiguration.class)
                        .web(WebApplicationType.NONE)
                        .listeners(
                                (ApplicationListener<LeadershipGrantedEvent>)
                                        event ->
                                                eventsOnVirtualThreads.add(
                                                        Probe.isVirtual(Thread.currentThread())))
                        .properties(
                                "spring.threads.virtual.enabled=true",
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms")
                        .run()) {
            Elector elector = context.getBean(Elector.class);
            Probe probe = context.getBean(Probe.class);
            await().until(elector::isLeader);
            long token = elector.token().orElseThrow();
            await().until(() -> probe.ran().contains(token));
            assertThat(probe.virtual()).isNotEmpty().containsOnly(true);
            // Leadership events run on the application task executor: virtual threads too.
            await().until(() -> !eventsOnVirtualThreads.isEmpty());
            assertThat(eventsOnVirtualThreads).containsOnly(true);

            assertThat(server.command("GET", name + ":probe")).isEqualTo(Long.toString(token));

            elector.resign();
            await().until(() -> probe.interrupted().contains(token));
            await().until(() -> elector.token().orElse(0) > token);

            // Ends the probe's work in the current term too: no call is left to wait for.
            probe.finish();
            elector.resign();
        }
    }

    /**
     * With a concurrency limit on the application task executor, its execute() makes the caller
     * wait once the limit is reached, and the engine hands callbacks over on its own threads:
     * redlease's callbacks then run on virtual threads of their own executor instead.
     */
    @Test
    void aThrottledApplicationTaskExecutorIsNotUsedForCallbacks(RedisServer server) {
        List<String> eventThreads = new CopyOnWriteArrayList<>();
        try (ConfigurableApplicationContext context =
                new SpringApplicationBuilder(TestApplication.class)
                        .web(WebApplicationType.NONE)
                        .listeners(
                                (ApplicationListener<LeadershipGrantedEvent>)
                                        event ->
                                                eventThreads.add(
                                                        Thread.currentThread().getName()
                                                                + " virtual="
                                                                + Probe.isVirtual(
                                                                        Thread.currentThread())))
                        .properties(
                                "spring.threads.virtual.enabled=true",
                                "spring.task.execution.simple.concurrency-limit=1",
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=redlease-virtual-threads-test:" + System.nanoTime())
                        .run()) {
            await().until(context.getBean(Elector.class)::isLeader);
            await().until(() -> !eventThreads.isEmpty());
            assertThat(eventThreads).allMatch(thread -> thread.startsWith("redlease-callback-"));
            assertThat(eventThreads).allMatch(thread -> thread.endsWith("virtual=true"));
        }
    }

    /** Marks the tasks of the executors Boot's task decorator applies to. */
    @Configuration(proxyBeanMethods = false)
    static class DecoratorConfiguration {

        static final ThreadLocal<Boolean> decorated = ThreadLocal.withInitial(() -> false);

        @Bean
        TaskDecorator markingDecorator() {
            return task ->
                    () -> {
                        decorated.set(true);
                        try {
                            task.run();
                        } finally {
                            decorated.remove();
                        }
                    };
        }
    }

    /**
     * redlease's own callback executor is built like the application's: the application's task
     * decorator wraps its callbacks (a tracing or logging context, say).
     */
    @Test
    void theApplicationsTaskDecoratorWrapsCallbacksOnRedleasesOwnExecutor(RedisServer server) {
        List<Boolean> decorated = new CopyOnWriteArrayList<>();
        try (ConfigurableApplicationContext context =
                new SpringApplicationBuilder(TestApplication.class, DecoratorConfiguration.class)
                        .web(WebApplicationType.NONE)
                        .listeners(
                                (ApplicationListener<LeadershipGrantedEvent>)
                                        event ->
                                                decorated.add(
                                                        DecoratorConfiguration.decorated.get()))
                        .properties(
                                "spring.threads.virtual.enabled=true",
                                "spring.task.execution.simple.concurrency-limit=1",
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=redlease-virtual-threads-test:" + System.nanoTime())
                        .run()) {
            await().until(context.getBean(Elector.class)::isLeader);
            await().until(() -> !decorated.isEmpty());
            assertThat(decorated).containsOnly(true);
        }
    }

    /** A once-per-slot job, recording its slots and whether it ran on a virtual thread. */
    static class SlotProbe {

        private final List<Instant> slots = new CopyOnWriteArrayList<>();

        private final List<Boolean> virtual = new CopyOnWriteArrayList<>();

        private final LeadershipContext leadership;

        SlotProbe(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        @Scheduled(fixedRate = 200)
        @LeaderOnly(oncePerSlot = true)
        public void run() {
            slots.add(leadership.slot().orElseThrow().time());
            virtual.add(Probe.isVirtual(Thread.currentThread()));
        }

        public List<Instant> slots() {
            return slots;
        }

        public List<Boolean> virtual() {
            return virtual;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class SlotProbeConfiguration {

        @Bean
        SlotProbe slotProbe(LeadershipContext leadership) {
            return new SlotProbe(leadership);
        }
    }

    @Test
    void oncePerSlotJobsRunOnVirtualThreadsWithTheirSlots(RedisServer server) {
        String name = "redlease-virtual-slots-test:" + System.nanoTime();
        try (ConfigurableApplicationContext context =
                new SpringApplicationBuilder(TestApplication.class, SlotProbeConfiguration.class)
                        .web(WebApplicationType.NONE)
                        .properties(
                                "spring.threads.virtual.enabled=true",
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name=" + name,
                                "redlease.ttl=1s",
                                "redlease.renew-interval=100ms",
                                "redlease.acquire-interval=200ms")
                        .run()) {
            SlotProbe probe = context.getBean(SlotProbe.class);
            await().until(() -> probe.slots().size() >= 5);
            assertThat(probe.virtual()).containsOnly(true);
            List<Instant> slots = List.copyOf(probe.slots());
            assertThat(slots).doesNotHaveDuplicates().isSorted();
            for (Instant slot : slots) {
                // Whole fixed-rate periods from the start the first run stored.
                assertThat(Duration.between(slots.get(0), slot).toMillis() % 200).isZero();
            }
        }
    }
}
