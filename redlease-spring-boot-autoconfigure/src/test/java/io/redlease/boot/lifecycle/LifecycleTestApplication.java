package io.redlease.boot.lifecycle;

import io.redlease.core.annotation.LeaderOnly;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;

/** An application with leader-only lifecycle beans that record when they start and stop. */
@SpringBootConfiguration
@EnableAutoConfiguration
class LifecycleTestApplication {

    /** Every start and stop of every instance, in order: "start|stop:instance:bean". */
    static final List<String> events = new CopyOnWriteArrayList<>();

    @Bean
    Consumer consumer(@Value("${redlease.instance-id}") String instance) {
        return new Consumer(instance, "consumer", 10);
    }

    @Bean
    Consumer earlyConsumer(@Value("${redlease.instance-id}") String instance) {
        return new Consumer(instance, "early", 5);
    }

    @Bean
    @ConditionalOnBooleanProperty("test.audit")
    AuditLifecycle auditLifecycle() {
        return new AuditLifecycle();
    }

    @Bean
    @ConditionalOnBooleanProperty("test.failing")
    FailingLifecycle failingLifecycle() {
        return new FailingLifecycle();
    }

    /**
     * A leader-only consumer whose asynchronous stop takes a moment, as a listener container's
     * does.
     */
    @LeaderOnly
    static class Consumer implements SmartLifecycle {

        private static final ScheduledExecutorService stopper =
                Executors.newSingleThreadScheduledExecutor(
                        runnable -> {
                            Thread thread = new Thread(runnable, "test-stopper");
                            thread.setDaemon(true);
                            return thread;
                        });

        private final String instance;

        private final String bean;

        private final int phase;

        private volatile boolean running;

        Consumer(String instance, String bean, int phase) {
            this.instance = instance;
            this.bean = bean;
            this.phase = phase;
        }

        @Override
        public void start() {
            events.add("start:" + instance + ":" + bean);
            running = true;
        }

        @Override
        public void stop() {
            running = false;
            events.add("stop:" + instance + ":" + bean);
        }

        @Override
        public void stop(Runnable callback) {
            stopper.schedule(
                    () -> {
                        stop();
                        callback.run();
                    },
                    200,
                    TimeUnit.MILLISECONDS);
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return phase;
        }
    }

    /** A plain lifecycle of the named election "audit". */
    @LeaderOnly("audit")
    static class AuditLifecycle implements Lifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    /** A leader-only lifecycle that cannot start. */
    @LeaderOnly
    static class FailingLifecycle implements SmartLifecycle {

        @Override
        public void start() {
            throw new IllegalStateException("cannot start");
        }

        @Override
        public void stop() {}

        @Override
        public boolean isRunning() {
            return false;
        }
    }
}
