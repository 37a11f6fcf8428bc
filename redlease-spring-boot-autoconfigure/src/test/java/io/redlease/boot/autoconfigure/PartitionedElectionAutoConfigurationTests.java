package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.NotLeaderException;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Binding and checking of {@code redlease.partitions.<id>.*} and {@code LeaderOnly(partitions)}.
 */
@ExtendWith(RedisExtension.class)
class PartitionedElectionAutoConfigurationTests {

    private ApplicationContextRunner contextRunner;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.name =
                "redlease-partitions-test:"
                        + info.getTestMethod().orElseThrow().getName()
                        + ":"
                        + System.nanoTime();
        this.contextRunner =
                new ApplicationContextRunner()
                        .withConfiguration(
                                AutoConfigurations.of(
                                        DataRedisAutoConfiguration.class,
                                        RedleaseAutoConfiguration.class,
                                        LeaderOnlyAutoConfiguration.class))
                        .withPropertyValues(
                                "spring.data.redis.url=" + server.url(),
                                "redlease.name={" + name + "}",
                                "redlease.ttl=2s",
                                "redlease.instance-id=me",
                                "redlease.auto-startup=false");
    }

    @Test
    void bindsEachPartitionedElectionInheritingTheTopLevelSettings() {
        contextRunner
                .withPropertyValues(
                        "redlease.partitions.orders.count=16",
                        "redlease.partitions.orders.renew-interval=300ms",
                        "redlease.partitions.orders.balance-interval=100ms",
                        "redlease.partitions.orders.settle=1s",
                        "redlease.partitions.audit.count=3",
                        "redlease.partitions.audit.name=audit-log",
                        "redlease.partitions.audit.ttl=1500ms")
                .run(
                        context -> {
                            Elections elections = context.getBean(Elections.class);
                            assertThat(elections.partitionedAsMap())
                                    .containsOnlyKeys("orders", "audit");
                            PartitionedElectionConfig orders =
                                    elections.partitioned("orders").config();
                            assertThat(orders.name()).isEqualTo(name + ":orders");
                            assertThat(orders.partitions()).isEqualTo(16);
                            assertThat(orders.ttl()).isEqualTo(Duration.ofSeconds(2));
                            assertThat(orders.renewInterval()).isEqualTo(Duration.ofMillis(300));
                            assertThat(orders.balanceInterval()).isEqualTo(Duration.ofMillis(100));
                            assertThat(orders.settle()).isEqualTo(Duration.ofSeconds(1));
                            assertThat(orders.instanceId()).isEqualTo("me");
                            PartitionedElectionConfig audit =
                                    elections.partitioned("audit").config();
                            assertThat(audit.name()).isEqualTo("audit-log");
                            assertThat(audit.ttl()).isEqualTo(Duration.ofMillis(1500));
                            assertThat(audit.renewInterval()).isEqualTo(Duration.ofMillis(500));
                            assertThat(audit.settle()).isEqualTo(audit.renewInterval());
                            LeadershipContext leadership = context.getBean(LeadershipContext.class);
                            assertThat(leadership.partitions("audit"))
                                    .isSameAs(elections.partitioned("audit"));
                            assertThat(leadership.partition()).isEmpty();
                        });
    }

    @Test
    void missingCountFailsNamingTheProperty() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.name=orders")
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .isInstanceOf(InvalidRedleasePropertyException.class)
                                        .hasMessageContaining("redlease.partitions.orders.count"));
    }

    @Test
    void anElectionIdReservedForThePartitionsDetailsFailsStartup() {
        contextRunner
                .withPropertyValues("redlease.elections.partitions.name=other")
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .isInstanceOf(InvalidRedleasePropertyException.class)
                                        .hasMessageContaining("redlease.elections.partitions")
                                        .hasMessageContaining("'partitions' is reserved"));
    }

    @Test
    void badValuesFailNamingThePropertyAndTheRule() {
        assertInvalid("count=0", "redlease.partitions.orders.count", "between 1 and 65536");
        assertInvalid("count=65537", "redlease.partitions.orders.count", "between 1 and 65536");
        assertInvalid(
                "name={orders}", "redlease.partitions.orders.name", "must not contain '{' or '}'");
        assertInvalid("ttl=50ms", "redlease.partitions.orders.ttl", "at least 100ms");
        assertInvalid(
                "balance-interval=5s",
                "redlease.partitions.orders.balance-interval",
                "at most the renew interval");
        assertInvalid("settle=-1s", "redlease.partitions.orders.settle", "must not be negative");
    }

    @Test
    void anIdWithBracesAndNoNameOfItsOwnFailsNamingTheNameProperty() {
        contextRunner
                .withPropertyValues("redlease.partitions.[or{d}ers].count=4")
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .isInstanceOf(
                                                InvalidConfigurationPropertyValueException.class)
                                        .hasMessageContaining("redlease.partitions.or{d}ers.name")
                                        .hasMessageContaining("'{' or '}'"));
    }

    private void assertInvalid(String setting, String property, String rule) {
        contextRunner
                .withPropertyValues(
                        "redlease.partitions.orders.count=4",
                        "redlease.partitions.orders." + setting)
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .rootCause()
                                        .isInstanceOf(
                                                InvalidConfigurationPropertyValueException.class)
                                        .hasMessageContaining(property)
                                        .satisfies(
                                                ex ->
                                                        assertThat(
                                                                        ((InvalidConfigurationPropertyValueException)
                                                                                        ex)
                                                                                .getReason())
                                                                .contains(rule)));
    }

    @Test
    void leaderOnlyPartitionsThatCannotBeHonouredFailStartupNamingTheMethod() {
        assertRefused(
                UnknownPartitions.class, "names a partitioned election that is not configured");
        assertRefused(WithValue.class, "sets both value = \"other\" and partitions = \"orders\"");
        assertRefused(Returning.class, "return void");
        assertRefused(AsyncVoid.class, "is @Async");
        assertRefused(
                PartitionedLifecycle.class, "a leader-only lifecycle bean runs with one election");
    }

    private void assertRefused(Class<?> configuration, String rule) {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(configuration)
                .run(
                        context ->
                                assertThat(context)
                                        .getFailure()
                                        .hasStackTraceContaining("@LeaderOnly")
                                        .hasStackTraceContaining(rule));
    }

    @Test
    void aCallWhileOwningNoPartitionIsSkippedOrRejected() {
        contextRunner
                .withPropertyValues("redlease.partitions.orders.count=2")
                .withUserConfiguration(Jobs.class)
                .run(
                        context -> {
                            Job job = context.getBean(Job.class);
                            job.skipped();
                            assertThat(job.runs()).isZero();
                            assertThatExceptionOfType(NotLeaderException.class)
                                    .isThrownBy(job::rejected)
                                    .withMessageContaining("it owns none");
                            assertThat(job.runs()).isZero();
                        });
    }

    @Test
    void eachOwnedPartitionRunsOnceWithItsTermBound() {
        contextRunner
                .withPropertyValues(ownAllPartitions(3))
                .withUserConfiguration(Jobs.class)
                .run(
                        context -> {
                            PartitionedElection orders = ownedAll(context, 3);
                            Job job = context.getBean(Job.class);
                            job.skipped();
                            assertThat(job.runs()).isEqualTo(3);
                            assertThat(job.seen())
                                    .isEqualTo(
                                            "0:"
                                                    + orders.token(0).orElseThrow()
                                                    + " 1:"
                                                    + orders.token(1).orElseThrow()
                                                    + " 2:"
                                                    + orders.token(2).orElseThrow()
                                                    + " ");
                        });
    }

    @Test
    void aStoppedContextStartedAgainRunsTheJobOnOwnedPartitionsWithNewTerms() {
        contextRunner
                .withPropertyValues(ownAllPartitions(2))
                .withUserConfiguration(Jobs.class)
                .run(
                        context -> {
                            PartitionedElection orders = ownedAll(context, 2);
                            long before = orders.token(1).orElseThrow();
                            Job job = context.getBean(Job.class);
                            job.skipped();
                            assertThat(job.runs()).isEqualTo(2);
                            context.stop();
                            assertThat(orders.isRunning()).isFalse();
                            assertThat(orders.owned()).isEmpty();
                            job.skipped();
                            assertThat(job.runs()).isEqualTo(2);
                            context.start();
                            ownedAll(context, 2);
                            job.skipped();
                            assertThat(job.runs()).isEqualTo(4);
                            assertThat(orders.token(1).orElseThrow()).isGreaterThan(before);
                            assertThat(job.seen())
                                    .endsWith(
                                            "0:"
                                                    + orders.token(0).orElseThrow()
                                                    + " 1:"
                                                    + orders.token(1).orElseThrow()
                                                    + " ");
                        });
    }

    @Test
    void aNestedCallRunsOnceInTheCallersPartition() {
        contextRunner
                .withPropertyValues(ownAllPartitions(3))
                .withUserConfiguration(Nested.class)
                .run(
                        context -> {
                            PartitionedElection orders = ownedAll(context, 3);
                            Outer outer = context.getBean(Outer.class);
                            outer.run();
                            assertThat(outer.seen())
                                    .isEqualTo("outer 0 inner 0 outer 1 inner 1 outer 2 inner 2 ");
                        });
    }

    /** Returns the partitioned election once this instance, alone, owns all its partitions. */
    private static PartitionedElection ownedAll(ApplicationContext context, int count) {
        PartitionedElection orders = context.getBean(Elections.class).partitioned("orders");
        await().atMost(Duration.ofSeconds(10)).until(() -> orders.owned().size() == count);
        return orders;
    }

    private static String[] ownAllPartitions(int count) {
        return new String[] {
            "redlease.partitions.orders.count=" + count,
            "redlease.partitions.orders.auto-startup=true",
            "redlease.partitions.orders.balance-interval=50ms",
            "redlease.partitions.orders.settle=50ms"
        };
    }

    @Configuration(proxyBeanMethods = false)
    static class Nested {

        private final StringBuffer seen = new StringBuffer();

        @Bean
        Inner inner(LeadershipContext leadership) {
            return new Inner(leadership, seen);
        }

        @Bean
        Outer outer(LeadershipContext leadership, Inner inner) {
            return new Outer(leadership, inner, seen);
        }
    }

    static class Inner {

        private final LeadershipContext leadership;

        private final StringBuffer seen;

        Inner(LeadershipContext leadership, StringBuffer seen) {
            this.leadership = leadership;
            this.seen = seen;
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            seen.append("inner ").append(leadership.partition().orElseThrow()).append(' ');
        }
    }

    static class Outer {

        private final LeadershipContext leadership;

        private final Inner inner;

        private final StringBuffer seen;

        Outer(LeadershipContext leadership, Inner inner, StringBuffer seen) {
            this.leadership = leadership;
            this.inner = inner;
            this.seen = seen;
        }

        public String seen() {
            return seen.toString();
        }

        @LeaderOnly(partitions = "orders")
        public void run() {
            seen.append("outer ").append(leadership.partition().orElseThrow()).append(' ');
            inner.run();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Jobs {

        @Bean
        Job job(LeadershipContext leadership) {
            return new Job(leadership);
        }
    }

    static class Job {

        final AtomicInteger runs = new AtomicInteger();

        private final LeadershipContext leadership;

        String seen = "";

        Job(LeadershipContext leadership) {
            this.leadership = leadership;
        }

        /** Read through the proxy: a CGLIB proxy's own fields are not the bean's. */
        public int runs() {
            return runs.get();
        }

        public String seen() {
            return seen;
        }

        @LeaderOnly(partitions = "orders")
        public void skipped() {
            runs.incrementAndGet();
            seen +=
                    leadership.partition().orElseThrow()
                            + ":"
                            + leadership.boundTerm().orElseThrow().token()
                            + " ";
        }

        @LeaderOnly(partitions = "orders", whenNotLeader = WhenNotLeader.REJECT)
        public void rejected() {
            runs.incrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UnknownPartitions {

        @Bean
        Object unknownPartitions() {
            return new Object() {
                @LeaderOnly(partitions = "nope")
                public void run() {}
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class WithValue {

        @Bean
        Object withValue() {
            return new Object() {
                @LeaderOnly(value = "other", partitions = "orders")
                public void run() {}
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class AsyncVoid {

        @Bean
        Object asyncVoid() {
            return new Object() {
                @org.springframework.scheduling.annotation.Async
                @LeaderOnly(partitions = "orders")
                public void run() {}
            };
        }
    }

    static class Returning {

        @Bean
        Object returning() {
            return new Object() {
                @LeaderOnly(partitions = "orders")
                public String run() {
                    return "x";
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class PartitionedLifecycle {

        @Bean
        Consumer consumer() {
            return new Consumer();
        }
    }

    @LeaderOnly(partitions = "orders")
    static class Consumer implements SmartLifecycle {

        @Override
        public void start() {}

        @Override
        public void stop() {}

        @Override
        public boolean isRunning() {
            return false;
        }
    }
}
