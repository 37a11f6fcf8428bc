package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.annotation.LeaderOnlySkipListener;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.data.redis.core.StringRedisTemplate;
import reactor.core.publisher.Mono;

/** The {@link LeaderOnlySkipListener} hook: which calls are reported, and when. */
@ExtendWith(RedisExtension.class)
class LeaderOnlySkipListenerTests {

    private final Templates templates = new Templates();

    private StringRedisTemplate redis;

    private String name;

    private AnnotationConfigApplicationContext context;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        if (context != null) {
            context.close();
        }
        templates.close();
    }

    private void start(Class<?>... components) {
        Elector main =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(1))
                                .renewInterval(Duration.ofMillis(50))
                                .acquireInterval(Duration.ofMillis(50))
                                .build());
        context = new AnnotationConfigApplicationContext();
        context.registerBean(Elections.class, () -> Elections.of(main));
        context.register(Infrastructure.class);
        context.register(components);
        context.refresh();
    }

    @Configuration(proxyBeanMethods = false)
    static class Infrastructure {

        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyPostProcessor() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }

        @Bean
        Recorder recorder() {
            return new Recorder();
        }
    }

    /** Records what it hears, as "method:reason" and "advised:method". */
    static class Recorder implements LeaderOnlySkipListener {

        final List<String> heard = new CopyOnWriteArrayList<>();

        final List<String> elections = new CopyOnWriteArrayList<>();

        @Override
        public void onSkipped(MethodRef method, Reason reason) {
            heard.add(method.name() + ":" + reason);
            elections.add(method.election());
        }

        @Override
        public void onAdvised(MethodRef method) {
            heard.add("advised:" + method.name());
        }
    }

    static class Jobs {

        private final AtomicInteger runs = new AtomicInteger();

        /** Returns how often {@link #run()} ran (read through the proxy, not its fields). */
        public int runs() {
            return runs.get();
        }

        @LeaderOnly
        public void run() {
            runs.incrementAndGet();
        }

        @LeaderOnly
        public Optional<String> value() {
            return Optional.of("led");
        }

        @LeaderOnly(whenNotLeader = WhenNotLeader.REJECT)
        public void strict() {}

        @LeaderOnly
        public Mono<String> reactive() {
            return Mono.just("led");
        }
    }

    @Test
    void everyLeaderOnlyMethodIsToldOnceAtStartupAndEverySkippedCallAfterIt() {
        start(Jobs.class);
        Recorder recorder = context.getBean(Recorder.class);
        assertThat(recorder.heard)
                .containsExactlyInAnyOrder(
                        "advised:Jobs.run",
                        "advised:Jobs.value",
                        "advised:Jobs.strict",
                        "advised:Jobs.reactive");
        recorder.heard.clear();

        Jobs jobs = context.getBean(Jobs.class);
        jobs.run();
        assertThat(jobs.value()).isEmpty();

        assertThat(jobs.runs()).isZero();
        assertThat(recorder.heard).containsExactly("Jobs.run:NOT_LEADER", "Jobs.value:NOT_LEADER");
        assertThat(recorder.elections).containsOnly(name);
    }

    @Test
    void aRejectedCallThrowsToItsCallerAndIsNotReported() {
        start(Jobs.class);
        Recorder recorder = context.getBean(Recorder.class);
        recorder.heard.clear();
        assertThatExceptionOfType(NotLeaderException.class)
                .isThrownBy(context.getBean(Jobs.class)::strict);
        assertThat(recorder.heard).isEmpty();
    }

    @Test
    void aReactiveCallIsReportedWhenItsSubscriptionIsSkipped() {
        start(Jobs.class);
        Recorder recorder = context.getBean(Recorder.class);
        recorder.heard.clear();
        Mono<String> result = context.getBean(Jobs.class).reactive();
        assertThat(recorder.heard).as("nothing decided before subscription").isEmpty();
        assertThat(result.blockOptional()).isEmpty();
        assertThat(recorder.heard).containsExactly("Jobs.reactive:NOT_LEADER");
    }

    @Test
    void aLeadersCallsAreNotReported() {
        start(Jobs.class);
        Elector main = context.getBean(Elections.class).get(null);
        main.start();
        await().atMost(Duration.ofMinutes(1)).until(main::isLeader);
        Recorder recorder = context.getBean(Recorder.class);
        recorder.heard.clear();
        Jobs jobs = context.getBean(Jobs.class);
        jobs.run();
        assertThat(jobs.runs()).isEqualTo(1);
        assertThat(recorder.heard).isEmpty();
    }

    /** A listener that fails, told first: the call and the other listeners go on. */
    @Configuration(proxyBeanMethods = false)
    static class Failing {

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE)
        LeaderOnlySkipListener failing() {
            return (method, reason) -> {
                throw new IllegalStateException("listener failed on purpose");
            };
        }
    }

    @Test
    void aFailingListenerDisturbsNeitherTheCallNorTheOtherListeners() {
        start(Jobs.class, Failing.class);
        Recorder recorder = context.getBean(Recorder.class);
        recorder.heard.clear();
        assertThat(context.getBean(Jobs.class).value()).isEmpty();
        assertThat(recorder.heard).containsExactly("Jobs.value:NOT_LEADER");
    }
}
