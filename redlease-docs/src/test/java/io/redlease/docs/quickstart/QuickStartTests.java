package io.redlease.docs.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.boot.test.RedleaseTester;
import io.redlease.core.ElectionDisabledException;
import io.redlease.core.Elections;
import io.redlease.core.FenceRefusedException;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnlySkipListener;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The README's Quick start, run as written: its application, its job and its properties (only the
 * election's name is made unique and Redis pointed at the fixture's server), and what the README
 * says of it.
 */
@ExtendWith(RedisExtension.class)
class QuickStartTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    /** Records the skipped {@code @LeaderOnly} calls (the README: a lone leader's first run). */
    static final class SkippedCalls implements LeaderOnlySkipListener {

        final List<String> skipped = new CopyOnWriteArrayList<>();

        @Override
        public void onSkipped(MethodRef method, Reason reason) {
            skipped.add(method.name() + " " + reason);
        }
    }

    @Test
    void aLoneLeadersFirstRunIsNotSkippedAndWritesThroughTheFenceOfItsTerm(RedisServer server) {
        String name = "{report-builder-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext app =
                start(server, name, List.of(SkippedCalls.class))) {
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            // Startup waited for the first outcome, so the job's first fire found this instance
            // leading: it wrote, and no call was skipped before it (the next fire is 10 s later).
            await().atMost(FIRST_ELECTION)
                    .until(() -> redis.opsForHash().get(name + ":state", "last-run") != null);
            assertThat(app.getBean(SkippedCalls.class).skipped).isEmpty();
        }
    }

    @Test
    void aRefusedWriteFails(RedisServer server) throws Exception {
        String name = "{report-builder-" + System.nanoTime() + "}";
        // A long TTL keeps the renewal that would end the superseded term out of the test's way.
        try (ConfigurableApplicationContext app =
                start(server, name, List.of(), "--redlease.ttl=60s")) {
            RedleaseTester tester =
                    RedleaseTester.of(
                            app.getBean(Elections.class),
                            app.getBean(RedisConnectionFactory.class));
            Term term = tester.awaitLeadership();
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            // The scheduled first run of this term has written (the next is 10 s away).
            await().atMost(FIRST_ELECTION)
                    .until(() -> redis.opsForHash().get(name + ":state", "last-run") != null);
            Object written = redis.opsForHash().get(name + ":state", "last-run");
            ReportJob job = app.getBean(ReportJob.class);
            // A run of this term, during which another instance wins a newer one: its write is
            // refused, and the run fails instead of returning as if it had published.
            assertThatExceptionOfType(FenceRefusedException.class)
                    .isThrownBy(
                            () ->
                                    term.execute(
                                            () -> {
                                                tester.startNewerTerm();
                                                job.publish();
                                                return null;
                                            },
                                            false))
                    .satisfies(
                            refused -> {
                                assertThat(refused.token()).isEqualTo(term.token());
                                assertThat(refused.election()).isEqualTo(name);
                            })
                    .withMessageContaining("redlease: a fenced write with token " + term.token())
                    .withMessageContaining("was refused");
            assertThat(redis.opsForHash().get(name + ":state", "last-run")).isEqualTo(written);
        }
    }

    @Test
    void withTheSwitchOffTheApplicationStartsAndItsFencedWriteFailsNamingTheSwitch(
            RedisServer server) {
        String name = "{report-builder-" + System.nanoTime() + "}";
        try (ConfigurableApplicationContext app =
                start(server, name, List.of(), "--redlease.enabled=false")) {
            LeadershipContext leadership = app.getBean(LeadershipContext.class);
            assertThat(leadership.isLeader()).isFalse();
            // @LeaderOnly is not applied: the job runs here, and its write refuses to go unfenced.
            ReportJob job = app.getBean(ReportJob.class);
            assertThatExceptionOfType(ElectionDisabledException.class)
                    .isThrownBy(job::publish)
                    .withMessageContaining("redlease: no fencer: leader election is disabled")
                    .withMessageContaining("redlease.enabled=false");
            StringRedisTemplate redis = app.getBean(StringRedisTemplate.class);
            assertThat(redis.hasKey(name + ":state")).isFalse();
        }
    }

    /**
     * Runs the Quick start's application with more beans and arguments (arguments, unlike default
     * properties, override the application's own file).
     */
    private static ConfigurableApplicationContext start(
            RedisServer server, String name, List<Class<?>> beans, String... more) {
        List<String> args = new ArrayList<>(List.of(more));
        args.add("--spring.data.redis.url=" + server.url());
        args.add("--redlease.name=" + name);
        return new SpringApplicationBuilder(ReportApplication.class)
                .sources(beans.toArray(Class<?>[]::new))
                .web(WebApplicationType.NONE)
                .run(args.toArray(String[]::new));
    }
}
