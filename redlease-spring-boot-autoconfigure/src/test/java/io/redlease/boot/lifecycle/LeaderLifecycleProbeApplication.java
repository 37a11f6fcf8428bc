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
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }
}
