package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;

/**
 * {@link Fenced} in a Spring context next to {@code @Transactional} and {@code @LeaderOnly}, on H2
 * with a real elector on a real Redis.
 */
class FencedAnnotationTests {

    private Leadership leadership;

    private AnnotationConfigApplicationContext context;

    @BeforeEach
    void start() {
        leadership = new Leadership("fenced-annotation");
        context = new AnnotationConfigApplicationContext();
        context.registerBean(Leadership.class, () -> leadership);
        context.register(Config.class);
        context.refresh();
    }

    @AfterEach
    void stop() {
        context.close();
        leadership.close();
    }

    @Test
    void leaderOnlyTransactionalFencedMethodIsFencedByTheBoundTerm() {
        long token = leadership.lead().token();
        Jobs jobs = context.getBean(Jobs.class);
        jobs.settle("s-1");
        assertThat(jobs.rows()).containsExactly("s-1:" + token);
        assertThat(context.getBean(FenceTable.class).token(leadership.name())).hasValue(token);
    }

    @Test
    void onAFollowerTheLeaderOnlyMethodIsSkippedWithoutError() {
        Jobs jobs = context.getBean(Jobs.class);
        jobs.settle("skipped");
        assertThat(jobs.rows()).isEmpty();
    }

    @Test
    void fencedMethodCalledOutsideATermFailsBeforeItRuns() {
        Jobs jobs = context.getBean(Jobs.class);
        assertThatExceptionOfType(UnfencedTransactionException.class)
                .isThrownBy(() -> jobs.fencedOnly("outside"))
                .withMessageContaining("needs a leadership term");
        assertThat(jobs.rows()).isEmpty();
    }

    @Test
    void fencedMethodWithoutATransactionFailsBeforeItRuns() {
        leadership.lead();
        Jobs jobs = context.getBean(Jobs.class);
        assertThatExceptionOfType(UnfencedTransactionException.class)
                .isThrownBy(() -> jobs.leaderWithoutTransaction("no-tx"))
                .withMessageContaining("add @Transactional");
        assertThat(jobs.rows()).isEmpty();
    }

    @Test
    void fencedNamingAnUnknownElectionFailsAtStartup() {
        try (AnnotationConfigApplicationContext broken = new AnnotationConfigApplicationContext()) {
            broken.registerBean(Leadership.class, () -> leadership);
            broken.register(Config.class, BrokenJobs.class);
            assertThatExceptionOfType(BeanCreationException.class)
                    .isThrownBy(broken::refresh)
                    .withMessageContaining("@Fenced(\"audit\")")
                    .withMessageContaining("names an election that is not configured");
        }
    }

    @Test
    void anAfterCommitListenerCallingAFencedMethodThatJoinsTheCommittedTransactionIsRefused() {
        long token = leadership.lead().token();
        Jobs jobs = context.getBean(Jobs.class);
        jobs.settleAndAnnounce("announced");
        AfterCommit listener = context.getBean(AfterCommit.class);
        assertThat(listener.failures)
                .singleElement()
                .isInstanceOf(UnfencedTransactionException.class);
        assertThat(jobs.rows()).containsExactly("announced:" + token);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Config {

        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnly() {
            return new LeaderOnlyAnnotationBeanPostProcessor();
        }

        @Bean
        static FencedAnnotationBeanPostProcessor fenced() {
            return new FencedAnnotationBeanPostProcessor();
        }

        @Bean
        DataSource dataSource() {
            return Database.H2.dataSource();
        }

        @Bean
        PlatformTransactionManager transactionManager(
                DataSource dataSource, ObjectProvider<TransactionFencing> fencing) {
            DataSourceTransactionManager manager = new DataSourceTransactionManager(dataSource);
            manager.addListener(new FencingTransactionListener(fencing.getObject()));
            return manager;
        }

        @Bean
        Elections elections(Leadership leadership) {
            return Elections.of(leadership.elector);
        }

        @Bean
        LeadershipContext leadershipContext(Elections elections) {
            return new LeadershipContext(elections);
        }

        @Bean
        FenceTable fenceTable(DataSource dataSource) {
            FenceTable table = new FenceTable(dataSource);
            new FenceSchema(table).create();
            return table;
        }

        @Bean
        TransactionFencing transactionFencing(FenceTable table, LeadershipContext leadership) {
            return new TransactionFencing(table, leadership);
        }

        @Bean
        Jobs jobs(
                DataSource dataSource,
                LeadershipContext leadership,
                ApplicationEventPublisher events) {
            return new Jobs(JdbcClient.create(dataSource), leadership, events);
        }

        @Bean
        AfterCommit afterCommit(ObjectProvider<Jobs> jobs) {
            return new AfterCommit(jobs);
        }
    }

    /** Leader jobs writing through JdbcClient. */
    public static class Jobs {

        private final JdbcClient jdbc;

        private final LeadershipContext leadership;

        private final ApplicationEventPublisher events;

        Jobs(JdbcClient jdbc, LeadershipContext leadership, ApplicationEventPublisher events) {
            this.jdbc = jdbc;
            this.leadership = leadership;
            this.events = events;
            jdbc.sql("CREATE TABLE jobs (entry VARCHAR(100) PRIMARY KEY)").update();
        }

        @LeaderOnly
        @Transactional
        @Fenced
        public void settle(String id) {
            write(id);
        }

        @Transactional
        @Fenced
        public void fencedOnly(String id) {
            write(id);
        }

        @LeaderOnly
        @Transactional
        @Fenced
        public void settleAndAnnounce(String id) {
            write(id);
            events.publishEvent(new Settled(id));
        }

        @LeaderOnly
        @Fenced
        public void leaderWithoutTransaction(String id) {
            write(id);
        }

        private void write(String id) {
            jdbc.sql("INSERT INTO jobs (entry) VALUES (?)")
                    .param(id + ":" + leadership.token().orElse(-1))
                    .update();
        }

        public List<String> rows() {
            return jdbc.sql("SELECT entry FROM jobs").query(String.class).list();
        }
    }

    /** Published by a fenced transaction. */
    record Settled(String id) {}

    /** After the commit, calls a fenced method that joins the finished transaction. */
    public static class AfterCommit {

        final List<Throwable> failures = new CopyOnWriteArrayList<>();

        private final ObjectProvider<Jobs> jobs;

        AfterCommit(ObjectProvider<Jobs> jobs) {
            this.jobs = jobs;
        }

        @TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
        public void onSettled(Settled settled) {
            try {
                jobs.getObject().fencedOnly(settled.id() + "-late");
            } catch (RuntimeException ex) {
                failures.add(ex);
            }
        }
    }

    /** Names an election that does not exist. */
    @Configuration(proxyBeanMethods = false)
    static class BrokenJobs {

        @Bean
        Broken broken() {
            return new Broken();
        }
    }

    /** A bean with a {@code @Fenced} method for an unknown election. */
    public static class Broken {

        @Transactional
        @Fenced("audit")
        public void run() {}
    }
}
