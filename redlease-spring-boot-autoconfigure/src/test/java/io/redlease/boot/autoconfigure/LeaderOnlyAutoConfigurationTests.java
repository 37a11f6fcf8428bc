package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Elector;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

/** How {@code @LeaderOnly} is applied: its place among other advice, and when it is disabled. */
@ExtendWith({RedisExtension.class, OutputCaptureExtension.class})
class LeaderOnlyAutoConfigurationTests {

    private ApplicationContextRunner contextRunner;

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name =
                "redlease-leader-only-test:"
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
                                "redlease.name=" + name,
                                "redlease.acquire-interval=100ms");
    }

    /** Counts the transactions it begins. */
    static class CountingTransactionManager extends AbstractPlatformTransactionManager {

        private static final long serialVersionUID = 1L;

        final AtomicInteger begun = new AtomicInteger();

        @Override
        protected Object doGetTransaction() {
            return new Object();
        }

        @Override
        protected void doBegin(Object transaction, TransactionDefinition definition) {
            begun.incrementAndGet();
        }

        @Override
        protected void doCommit(DefaultTransactionStatus status) {}

        @Override
        protected void doRollback(DefaultTransactionStatus status) {}
    }

    /** A leader-only job that works in a transaction. */
    static class TransactionalJob {

        private final AtomicInteger runs = new AtomicInteger();

        @LeaderOnly
        @Transactional
        public void run() {
            runs.incrementAndGet();
        }

        /** Returns how often {@link #run()} ran (through the proxy, unlike a field read). */
        public int runs() {
            return runs.get();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Transactions {

        @Bean
        CountingTransactionManager transactionManager() {
            return new CountingTransactionManager();
        }

        @Bean
        TransactionalJob transactionalJob() {
            return new TransactionalJob();
        }
    }

    @Test
    void aFollowersSkippedCallOpensNoTransaction() {
        // Another instance holds the lease, so this one follows.
        server.command("SET", name + ":leader", "another-instance", "PX", "60000");
        contextRunner
                .withUserConfiguration(Transactions.class)
                .run(
                        context -> {
                            TransactionalJob job = context.getBean(TransactionalJob.class);
                            CountingTransactionManager transactions =
                                    context.getBean(CountingTransactionManager.class);
                            Elector elector = context.getBean(Elector.class);
                            for (int i = 0; i < 5; i++) {
                                job.run();
                            }
                            assertThat(elector.isLeader()).isFalse();
                            assertThat(job.runs()).isZero();
                            assertThat(transactions.begun).hasValue(0);

                            // Once this instance leads, the call runs in a transaction.
                            server.command("DEL", name + ":leader");
                            await().until(elector::isLeader);
                            job.run();
                            assertThat(job.runs()).isEqualTo(1);
                            assertThat(transactions.begun).hasValue(1);
                        });
    }

    @Test
    void thePostProcessorGoesInFrontOfExistingAdvice() {
        contextRunner.run(
                context ->
                        assertThat(context.getBean(LeaderOnlyAnnotationBeanPostProcessor.class))
                                .hasFieldOrPropertyWithValue("beforeExistingAdvisors", true));
    }

    @Test
    void whenDisabledItWarnsThatLeaderOnlyMethodsRunEverywhere(CapturedOutput output) {
        contextRunner
                .withPropertyValues("redlease.enabled=false")
                .withUserConfiguration(Transactions.class)
                .run(
                        context -> {
                            assertThat(context).hasNotFailed();
                            assertThat(context)
                                    .doesNotHaveBean(LeaderOnlyAnnotationBeanPostProcessor.class);
                            assertThat(context.getBean(LeaderOnlyDisabledWarning.class).methods())
                                    .containsExactly(TransactionalJob.class.getName() + ".run");
                        });
        assertThat(output)
                .contains(
                        "redlease: redlease.enabled=false: @LeaderOnly is not applied, so these"
                                + " methods run"
                                + " on every instance of the application: ["
                                + TransactionalJob.class.getName()
                                + ".run]");
    }

    @Test
    void whenDisabledWithoutLeaderOnlyMethodsItSaysNothing(CapturedOutput output) {
        contextRunner
                .withPropertyValues("redlease.enabled=false")
                .run(
                        context ->
                                assertThat(
                                                context.getBean(LeaderOnlyDisabledWarning.class)
                                                        .methods())
                                        .isEmpty());
        assertThat(output).doesNotContain("@LeaderOnly is not applied");
    }
}
