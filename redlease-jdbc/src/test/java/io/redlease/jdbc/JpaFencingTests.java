package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.core.Elections;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.Table;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.persistenceunit.PersistenceManagedTypes;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Fenced JPA (Hibernate) transactions on the real PostgreSQL: the stamp comes after Hibernate's
 * flush and after other before-commit work, so a {@code BEFORE_COMMIT} listener that runs a fenced
 * {@code REQUIRES_NEW} transaction does not wait for the fence row its own thread holds. Every
 * connection has a 10 s {@code lock_timeout} and each call is bounded, so a deadlock fails the test
 * instead of hanging it.
 */
class JpaFencingTests {

    private static final String SCHEMA = Database.uniqueName("rl_jpa");

    private final List<String> statements = new CopyOnWriteArrayList<>();

    private Leadership leadership;

    private AnnotationConfigApplicationContext context;

    private DataSource postgres;

    @BeforeEach
    void start() {
        postgres = Database.POSTGRESQL.dataSource();
        new JdbcTemplate(postgres).execute("CREATE SCHEMA IF NOT EXISTS " + SCHEMA);
        leadership = new Leadership("jpa-fencing");
        context = new AnnotationConfigApplicationContext();
        context.registerBean(Leadership.class, () -> leadership);
        context.registerBean(
                "dataSource",
                DataSource.class,
                () -> Databases.recording(withLockTimeout(postgres), statements));
        context.register(Config.class);
        context.refresh();
    }

    @AfterEach
    void stop() {
        context.close();
        leadership.close();
        new JdbcTemplate(postgres).execute("DROP SCHEMA " + SCHEMA + " CASCADE");
    }

    @Test
    void theStampComesAfterHibernatesFlush() throws Exception {
        Term term = leadership.lead();
        statements.clear();
        bounded(term, () -> context.getBean(Payments.class).pay("p-1", false, false));
        int insert = indexOf("insert into " + SCHEMA + ".rl_jpa_payment");
        int stamp = indexOf("update " + SCHEMA + ".redlease_fence set token");
        assertThat(insert).as("statements %s", statements).isNotNegative();
        assertThat(stamp).as("statements %s", statements).isGreaterThan(insert);
        assertThat(context.getBean(FenceTable.class).token(leadership.name()))
                .hasValue(term.token());
    }

    @Test
    void aBeforeCommitListenerRunningAFencedRequiresNewTransactionCommitsBoth() throws Exception {
        Term term = leadership.lead();
        bounded(term, () -> context.getBean(Payments.class).pay("p-2", true, false));
        bounded(term, () -> context.getBean(Payments.class).pay("p-3", false, true));
        JdbcTemplate jdbc = new JdbcTemplate(postgres);
        assertThat(
                        jdbc.queryForList(
                                "SELECT id FROM " + SCHEMA + ".rl_jpa_audit ORDER BY id",
                                String.class))
                .containsExactly("p-2", "p-3");
        assertThat(
                        jdbc.queryForObject(
                                "SELECT stamps FROM " + SCHEMA + ".redlease_fence WHERE name = ?",
                                Long.class,
                                leadership.name()))
                .isEqualTo(4);
    }

    /**
     * With every transaction fenced, JDBC work that joins a JPA transaction after its commit (an
     * after-commit callback) does not commit unfenced: Hibernate restores auto-commit at its
     * commit, before Spring's after-commit callbacks.
     */
    @Test
    void withEveryTransactionFencedWorkJoiningACommittedJpaTransactionDoesNotCommit()
            throws Exception {
        JpaTransactionManager manager = context.getBean(JpaTransactionManager.class);
        manager.addListener(
                new FencingTransactionListener(context.getBean(TransactionFencing.class), ""));
        TransactionTemplate tx = new TransactionTemplate(manager);
        JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
        String insert = "INSERT INTO " + SCHEMA + ".rl_jpa_audit (id) VALUES (?)";
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        Term term = leadership.lead();
        bounded(
                term,
                () ->
                        tx.executeWithoutResult(
                                status -> {
                                    jdbc.update(insert, "in-tx");
                                    TransactionSynchronizationManager.registerSynchronization(
                                            new TransactionSynchronization() {
                                                @Override
                                                public void afterCommit() {
                                                    try {
                                                        jdbc.update(insert, "after-commit");
                                                        tx.executeWithoutResult(
                                                                joined ->
                                                                        jdbc.update(
                                                                                insert, "joined"));
                                                    } catch (RuntimeException ex) {
                                                        failures.add(ex);
                                                    }
                                                }
                                            });
                                }));
        assertThat(
                        new JdbcTemplate(postgres)
                                .queryForList(
                                        "SELECT id FROM " + SCHEMA + ".rl_jpa_audit ORDER BY id",
                                        String.class))
                .containsExactly("in-tx");
    }

    private int indexOf(String prefix) {
        for (int i = 0; i < statements.size(); i++) {
            if (statements.get(i).toLowerCase(Locale.ROOT).startsWith(prefix)) {
                return i;
            }
        }
        return -1;
    }

    /** Runs the call in the term on another thread, failing the test if it takes over 60 s. */
    private static void bounded(Term term, Runnable call) throws Exception {
        CompletableFuture<Void> done =
                CompletableFuture.runAsync(
                        () ->
                                Fixture.inTerm(
                                        term,
                                        () -> {
                                            call.run();
                                            return null;
                                        }));
        try {
            done.get(60, TimeUnit.SECONDS);
        } catch (TimeoutException ex) {
            throw new AssertionError("the fenced call did not finish within 60 s: deadlocked", ex);
        }
    }

    private static DataSource withLockTimeout(DataSource dataSource) {
        return new DelegatingDataSource(dataSource) {
            @Override
            public Connection getConnection() throws SQLException {
                Connection connection = super.getConnection();
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET lock_timeout = '10s'");
                }
                return connection;
            }
        };
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    static class Config {

        @Bean
        static FencedAnnotationBeanPostProcessor fenced() {
            return new FencedAnnotationBeanPostProcessor();
        }

        @Bean
        LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
            LocalContainerEntityManagerFactoryBean factory =
                    new LocalContainerEntityManagerFactoryBean();
            factory.setDataSource(dataSource);
            factory.setManagedTypes(
                    PersistenceManagedTypes.of(Payment.class.getName(), Audit.class.getName()));
            factory.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
            factory.setJpaPropertyMap(
                    Map.of("hibernate.hbm2ddl.auto", "create", "hibernate.default_schema", SCHEMA));
            return factory;
        }

        @Bean
        JpaTransactionManager transactionManager(
                EntityManagerFactory entityManagerFactory, TransactionFencing fencing) {
            JpaTransactionManager manager = new JpaTransactionManager(entityManagerFactory);
            manager.addListener(new FencingTransactionListener(fencing));
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
        FenceTable fenceTable(DataSource dataSource, Leadership leadership) {
            FenceTable table = new FenceTable(dataSource, SCHEMA + ".redlease_fence");
            new FenceSchema(table, FenceSchema.POSTGRESQL).create();
            table.addRow(leadership.name());
            return table;
        }

        @Bean
        TransactionFencing transactionFencing(FenceTable table, LeadershipContext leadership) {
            return new TransactionFencing(table, leadership);
        }

        @Bean
        Payments payments(ApplicationEventPublisher events) {
            return new Payments(events);
        }

        @Bean
        Audits audits() {
            return new Audits();
        }

        @Bean
        Auditor auditor(Audits audits) {
            return new Auditor(audits);
        }

        @Bean
        LateAuditor lateAuditor(Audits audits) {
            return new LateAuditor(audits);
        }
    }

    /** A payment, with an assigned id so that Hibernate inserts it at flush time. */
    @Entity
    @Table(name = "rl_jpa_payment")
    public static class Payment {

        @Id private String id;

        private long amount;

        protected Payment() {}

        Payment(String id, long amount) {
            this.id = id;
            this.amount = amount;
        }
    }

    /** An audit line written in a transaction of its own. */
    @Entity
    @Table(name = "rl_jpa_audit")
    public static class Audit {

        @Id private String id;

        protected Audit() {}

        Audit(String id) {
            this.id = id;
        }
    }

    /** Published inside the payment's transaction. */
    record Paid(String id) {}

    /** Published inside the payment's transaction, heard by a listener ordered last. */
    record PaidLate(String id) {}

    /** Fenced payments. */
    public static class Payments {

        private final ApplicationEventPublisher events;

        @PersistenceContext private EntityManager entityManager;

        Payments(ApplicationEventPublisher events) {
            this.events = events;
        }

        @Transactional
        @Fenced
        public void pay(String id, boolean audit, boolean auditLast) {
            entityManager.persist(new Payment(id, 10));
            if (audit) {
                events.publishEvent(new Paid(id));
            }
            if (auditLast) {
                events.publishEvent(new PaidLate(id));
            }
        }
    }

    /** Fenced audit lines, each in a new transaction. */
    public static class Audits {

        @PersistenceContext private EntityManager entityManager;

        @Transactional(propagation = Propagation.REQUIRES_NEW)
        @Fenced
        public void record(String id) {
            entityManager.persist(new Audit(id));
        }
    }

    /** Audits a payment just before it commits (default order). */
    public static class Auditor {

        private final Audits audits;

        Auditor(Audits audits) {
            this.audits = audits;
        }

        @TransactionalEventListener(phase = TransactionPhase.BEFORE_COMMIT)
        public void onPaid(Paid paid) {
            audits.record(paid.id());
        }
    }

    /** Audits a payment just before it commits, ordered last. */
    public static class LateAuditor {

        private final Audits audits;

        LateAuditor(Audits audits) {
            this.audits = audits;
        }

        @TransactionalEventListener(phase = TransactionPhase.BEFORE_COMMIT)
        @Order(Ordered.LOWEST_PRECEDENCE)
        public void onPaid(PaidLate paid) {
            audits.record(paid.id());
        }
    }
}
