package io.redlease.boot.lifecycle;

import io.redlease.core.annotation.LeaderOnly;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.Scope;

/** Review probes: leader-only lifecycle beans declared in the less common ways. */
@SpringBootConfiguration
@EnableAutoConfiguration
class LeaderLifecycleProbeApplication {

    /** Every start of a probe bean: "start:bean". */
    static final List<String> events = new CopyOnWriteArrayList<>();

    @Bean
    @Lazy
    @ConditionalOnBooleanProperty("test.lazy")
    PlainLifecycle lazyLifecycle() {
        return new PlainLifecycle("lazy");
    }

    @Bean
    @Scope("prototype")
    @ConditionalOnBooleanProperty("test.prototype")
    PlainLifecycle prototypeLifecycle() {
        return new PlainLifecycle("prototype");
    }

    @Bean
    @ConditionalOnBooleanProperty("test.never-stops")
    NeverStops neverStops() {
        return new NeverStops();
    }

    @Bean
    @ConditionalOnBooleanProperty("test.shapes")
    org.springframework.beans.factory.FactoryBean<AutoLifecycle> factoryLifecycle() {
        return new org.springframework.beans.factory.FactoryBean<>() {
            @Override
            public AutoLifecycle getObject() {
                return new AutoLifecycle("factory");
            }

            @Override
            public Class<?> getObjectType() {
                return AutoLifecycle.class;
            }
        };
    }

    @Bean
    @ConditionalOnBooleanProperty("test.shapes")
    SmartLifecycle interfaceLifecycle() {
        return new AutoLifecycle("interface");
    }

    @Bean
    @ConditionalOnBooleanProperty("test.throwing-stop")
    ThrowingStop throwingStop() {
        return new ThrowingStop();
    }

    /** A leader-only lifecycle whose stop throws. */
    @LeaderOnly
    static class ThrowingStop implements Lifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            running = true;
            events.add("start:throwing");
        }

        @Override
        public void stop() {
            throw new IllegalStateException("stop failed on purpose");
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    @Bean
    @ConditionalOnBooleanProperty("test.overlap")
    AsyncStop asyncStop() {
        return new AsyncStop();
    }

    /** A leader-only lifecycle whose stop(Runnable) finishes on another thread a moment later. */
    @LeaderOnly
    static class AsyncStop implements SmartLifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            if (running) {
                events.add("overlap");
            }
            running = true;
            events.add("start:async");
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public void stop(Runnable callback) {
            Thread thread =
                    new Thread(
                            () -> {
                                try {
                                    // Not synchronisation: a stop that takes a while opens the
                                    // window in which
                                    // a new term could start the bean while it still stops.
                                    Thread.sleep(50);
                                } catch (InterruptedException ex) {
                                    Thread.currentThread().interrupt();
                                }
                                running = false;
                                events.add("stopped:async");
                                callback.run();
                            });
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    /** Released by a test to let {@link SlowStop} finish stopping. */
    static volatile java.util.concurrent.CountDownLatch slowStopRelease =
            new java.util.concurrent.CountDownLatch(1);

    @Bean
    @ConditionalOnBooleanProperty("test.slow-stop")
    SlowStop slowStop() {
        return new SlowStop();
    }

    @Bean
    @ConditionalOnBooleanProperty("test.slow-stop")
    Marker marker() {
        return new Marker();
    }

    /** A leader-only lifecycle whose stop finishes only when a test lets it (phase 0). */
    @LeaderOnly
    static class SlowStop implements SmartLifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            running = true;
            events.add("start:slow");
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public void stop(Runnable callback) {
            events.add("stop:slow");
            java.util.concurrent.CountDownLatch release = slowStopRelease;
            Thread thread =
                    new Thread(
                            () -> {
                                try {
                                    release.await();
                                } catch (InterruptedException ex) {
                                    Thread.currentThread().interrupt();
                                }
                                running = false;
                                events.add("stopped:slow");
                                callback.run();
                            });
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    /** A leader-only lifecycle started after {@link SlowStop} (phase 10). */
    @LeaderOnly
    static class Marker implements SmartLifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            running = true;
            events.add("start:marker");
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return 10;
        }
    }

    /** A leader-only lifecycle whose stop(Runnable) never calls back. */
    @LeaderOnly
    static class NeverStops implements SmartLifecycle {

        private volatile boolean running;

        @Override
        public void start() {
            running = true;
            events.add("start:never-stops");
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public void stop(Runnable callback) {
            events.add("stop:never-stops");
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }

    /** A child context's configuration (no auto-configuration of its own). */
    @Configuration(proxyBeanMethods = false)
    static class Child {

        @Bean
        AutoLifecycle childLifecycle() {
            return new AutoLifecycle("child");
        }
    }

    /** An auto-starting leader-only lifecycle. */
    @LeaderOnly
    static class AutoLifecycle implements SmartLifecycle {

        private final String bean;

        private volatile boolean running;

        AutoLifecycle(String bean) {
            this.bean = bean;
        }

        @Override
        public void start() {
            running = true;
            events.add("start:" + bean);
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

    /** A plain leader-only lifecycle. */
    @LeaderOnly
    static class PlainLifecycle implements Lifecycle {

        private final String bean;

        private volatile boolean running;

        PlainLifecycle(String bean) {
            this.bean = bean;
        }

        @Override
        public void start() {
            running = true;
            events.add("start:" + bean);
        }

        @Override
        public void stop() {
            running = false;
            events.add("stop:" + bean);
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }
}
