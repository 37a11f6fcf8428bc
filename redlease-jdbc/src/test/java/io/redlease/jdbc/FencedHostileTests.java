package io.redlease.jdbc;

import static io.redlease.jdbc.Fixture.inTerm;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.redlease.core.Term;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Lazy;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Hostile probes of fenced transactions on the Spring paths the other tests do not take, against
 * real PostgreSQL and MariaDB with real terms of an elector on a real Redis.
 */
class FencedHostileTests {

    /** Spring translates and handles it as a data access usage error. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = "POSTGRESQL")
    void anUnfencedTransactionIsAnInvalidDataAccessApiUsage(Database database) {
        try (Fixture f = new Fixture(database)) {
            Throwable refused = catchThrowable(() -> f.tx.execute(status -> stamp(f)));
            assertThat(refused)
                    .isInstanceOf(UnfencedTransactionException.class)
                    .isInstanceOf(InvalidDataAccessApiUsageException.class);
        }
    }

    /** A fence asked for by a commit listener that runs after the stamp is refused. */
    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"POSTGRESQL", "MARIADB"})
    void aFenceAskedForAfterTheStampWasWrittenIsRefused(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            List<Throwable> refused = new CopyOnWriteArrayList<>();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.fencing.fence();
                                        f.writeOrder("fenced", term.token());
                                        f.afterStamp.set(
                                                () -> {
                                                    try {
                                                        f.fencing.fence();
                                                    } catch (RuntimeException ex) {
                                                        refused.add(ex);
                                                    }
                                                });
                                        return null;
                                    }));
            assertThat(refused)
                    .singleElement()
                    .isInstanceOf(UnfencedTransactionException.class)
                    .extracting(Throwable::getMessage)
                    .asString()
                    .contains("already stamped");
            assertThat(f.stamps()).isEqualTo(1);
        }
    }

    /**
     * A fence asked for once the transaction ended (its after-completion callbacks, an unfenced
     * transaction's after-commit callbacks) is refused.
     */
    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"POSTGRESQL", "MARIADB"})
    void aFenceAskedForAfterTheTransactionEndedIsRefused(Database database) {
        try (Fixture f = new Fixture(database)) {
            Term term = f.leadership.lead();
            List<Throwable> refused = new CopyOnWriteArrayList<>();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.writeOrder("unfenced", term.token());
                                        TransactionSynchronizationManager.registerSynchronization(
                                                new TransactionSynchronization() {
                                                    @Override
                                                    public void afterCommit() {
                                                        fenceAndWrite("after-commit");
                                                    }

                                                    @Override
                                                    public void afterCompletion(int status) {
                                                        fenceAndWrite("after-completion");
                                                    }

                                                    private void fenceAndWrite(String id) {
                                                        try {
                                                            f.fencing.fence();
                                                            f.writeOrder(id, term.token());
                                                        } catch (RuntimeException ex) {
                                                            refused.add(ex);
                                                        }
                                                    }
                                                });
                                        return null;
                                    }));
            assertThat(refused)
                    .hasSize(2)
                    .allSatisfy(
                            ex -> assertThat(ex).isInstanceOf(UnfencedTransactionException.class));
            assertThat(f.orderIds()).containsExactly("unfenced");
            assertThat(f.stamps()).isZero();
        }
    }

    /**
     * With every transaction fenced, a savepoint (PROPAGATION_NESTED) of a fenced transaction is
     * covered by the outer stamp: it runs, and a rolled-back savepoint leaves the stamp alone.
     */
    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"POSTGRESQL", "MARIADB"})
    void withEveryTransactionFencedANestedSavepointIsCoveredByTheOuterStamp(Database database) {
        try (Fixture f = new Fixture(database)) {
            f.transactionManager.addListener(new FencingTransactionListener(f.fencing, ""));
            Term term = f.leadership.lead();
            TransactionTemplate nested = new TransactionTemplate(f.transactionManager);
            nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.writeOrder("outer", term.token());
                                        nested.executeWithoutResult(
                                                inner -> {
                                                    f.writeOrder("rolled-back", term.token());
                                                    inner.setRollbackOnly();
                                                });
                                        nested.executeWithoutResult(
                                                inner -> f.writeOrder("inner", term.token()));
                                        return null;
                                    }));
            assertThat(f.orderIds()).containsExactly("inner", "outer");
            assertThat(f.stamps()).isEqualTo(1);
            assertThat(f.fenceToken()).isEqualTo(term.token());
        }
    }

    /** A nested savepoint with no term on its thread is refused before it begins. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = "POSTGRESQL")
    void withEveryTransactionFencedANestedSavepointNeedsTheTermToo(Database database) {
        try (Fixture f = new Fixture(database)) {
            f.transactionManager.addListener(new FencingTransactionListener(f.fencing, ""));
            TransactionTemplate readOnly = new TransactionTemplate(f.transactionManager);
            readOnly.setReadOnly(true);
            TransactionTemplate nested = new TransactionTemplate(f.transactionManager);
            nested.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
            readOnly.executeWithoutResult(
                    status ->
                            assertThatExceptionOfType(UnfencedTransactionException.class)
                                    .isThrownBy(
                                            () ->
                                                    nested.executeWithoutResult(
                                                            inner -> f.writeOrder("no-term", 0L)))
                                    .withMessageContaining("needs a leadership term"));
            assertThat(f.orderIds()).isEmpty();
        }
    }

    /**
     * With every transaction fenced, a read-only transaction is left unfenced only if the database
     * refuses its writes: on MariaDB the connection's read-only flag alone does not.
     */
    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"MARIADB", "POSTGRESQL"})
    void withEveryTransactionFencedAReadOnlyTransactionCannotWrite(Database database) {
        try (Fixture f = new Fixture(database)) {
            f.transactionManager.addListener(new FencingTransactionListener(f.fencing, ""));
            TransactionTemplate readOnly = new TransactionTemplate(f.transactionManager);
            readOnly.setReadOnly(true);
            Throwable failure =
                    catchThrowable(
                            () ->
                                    readOnly.executeWithoutResult(
                                            status -> f.writeOrder("read-only", 0L)));
            assertThat(failure).isInstanceOf(DataAccessException.class);
            assertThat(f.orderIds()).isEmpty();
            assertThat(f.stamps()).isZero();
            // and it still reads, with no term and no stamp
            List<String> read = readOnly.execute(status -> f.orderIds());
            assertThat(read).isEmpty();
            assertThat(f.stamps()).isZero();
        }
    }

    /**
     * With every transaction fenced, work that joins a transaction after its commit (an
     * after-commit callback) does not commit unfenced; work in a new transaction there is fenced.
     */
    @ParameterizedTest
    @EnumSource(
            value = Database.class,
            names = {"POSTGRESQL", "MARIADB"})
    void withEveryTransactionFencedWritesJoiningACommittedTransactionDoNotCommit(
            Database database) {
        try (Fixture f = new Fixture(database)) {
            f.transactionManager.addListener(new FencingTransactionListener(f.fencing, ""));
            Term term = f.leadership.lead();
            TransactionTemplate requiresNew = new TransactionTemplate(f.transactionManager);
            requiresNew.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
            List<Throwable> failures = new CopyOnWriteArrayList<>();
            inTerm(
                    term,
                    () ->
                            f.tx.execute(
                                    status -> {
                                        f.writeOrder("in-tx", term.token());
                                        TransactionSynchronizationManager.registerSynchronization(
                                                new TransactionSynchronization() {
                                                    @Override
                                                    public void afterCommit() {
                                                        run(
                                                                () ->
                                                                        f.tx.executeWithoutResult(
                                                                                s ->
                                                                                        f
                                                                                                .writeOrder(
                                                                                                        "joined",
                                                                                                        term
                                                                                                                .token())));
                                                        run(
                                                                () ->
                                                                        requiresNew
                                                                                .executeWithoutResult(
                                                                                        s ->
                                                                                                f
                                                                                                        .writeOrder(
                                                                                                                "new",
                                                                                                                term
                                                                                                                        .token())));
                                                    }

                                                    @Override
                                                    public void afterCompletion(int status) {
                                                        run(
                                                                () ->
                                                                        f.writeOrder(
                                                                                "completion",
                                                                                term.token()));
                                                    }

                                                    private void run(Runnable work) {
                                                        try {
                                                            work.run();
                                                        } catch (RuntimeException ex) {
                                                            failures.add(ex);
                                                        }
                                                    }
                                                });
                                        return null;
                                    }));
            assertThat(f.orderIds()).containsExactly("in-tx", "new");
            assertThat(f.stamps()).isEqualTo(2);
        }
    }

    /** {@code @Fenced} where no proxy can apply it fails startup, naming the method. */
    @ParameterizedTest
    @ValueSource(
            classes = {
                PrivateFenced.class,
                FinalFenced.class,
                StaticFenced.class,
                SelfInvoked.class,
                SelfInvokedFromLambda.class,
                SelfInvokedWithWideArguments.class,
                SelfInvokedFromConstructor.class
            })
    void fencedWhereNoProxyCanApplyItFailsStartupNamingTheMethod(Class<?> type) {
        try (Leadership leadership = new Leadership("fenced-hostile");
                AnnotationConfigApplicationContext context =
                        new AnnotationConfigApplicationContext()) {
            context.registerBean(Leadership.class, () -> leadership);
            context.register(FencedAnnotationTests.Config.class);
            context.registerBean(type);
            assertThatExceptionOfType(BeanCreationException.class)
                    .isThrownBy(context::refresh)
                    .withMessageContaining(type.getName() + ".")
                    .withMessageContaining("@Fenced");
        }
    }

    /** Calls to a fenced method of another bean, and of another instance, start up. */
    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aFencedMethodCalledThroughAnotherBeanStartsUp(Database database) {
        try (Leadership leadership = new Leadership("fenced-hostile");
                AnnotationConfigApplicationContext context =
                        new AnnotationConfigApplicationContext()) {
            context.registerBean(Leadership.class, () -> leadership);
            context.register(FencedAnnotationTests.Config.class);
            context.registerBean(CallsAnother.class);
            context.registerBean(FencedCallsFenced.class);
            context.registerBean(SelfInjected.class);
            context.refresh();
            assertThat(context.getBean(CallsAnother.class)).isNotNull();
            assertThat(context.getBean(FencedCallsFenced.class)).isNotNull();
        }
    }

    /** A private fenced method. */
    public static class PrivateFenced {

        @Transactional
        @Fenced
        private void settle() {}

        public void run() {
            settle();
        }
    }

    /** A final fenced method. */
    public static class FinalFenced {

        @Transactional
        @Fenced
        public final void settle() {}
    }

    /** A static fenced method. */
    public static class StaticFenced {

        @Transactional
        @Fenced
        public static void settle() {}
    }

    /** Calls its own fenced method on this, bypassing the proxy. */
    public static class SelfInvoked {

        @Transactional
        @Fenced
        public void settle() {}

        public void run() {
            this.settle();
        }
    }

    /** Calls its own fenced method on this from a lambda. */
    public static class SelfInvokedFromLambda {

        @Transactional
        @Fenced
        public void settle(String id) {}

        public Runnable later() {
            return () -> settle("later");
        }
    }

    /** Calls its own fenced method on this, with arguments of every width around it. */
    public static class SelfInvokedWithWideArguments {

        @Transactional
        @Fenced
        public long settle(long amount, double rate, String note, int[] parts) {
            return amount;
        }

        public long run(long amount) {
            long total = amount * 2;
            return total + settle(total, total > 10 ? 1.5 : 2.5, "n" + total, new int[] {1, 2});
        }
    }

    /** Calls its own fenced method from its constructor. */
    public static class SelfInvokedFromConstructor {

        public SelfInvokedFromConstructor() {
            settle();
        }

        @Transactional
        @Fenced
        public void settle() {}
    }

    /**
     * Calls its fenced method through a proxy of itself (a self-injected field, a parameter): the
     * calls go through the proxy.
     */
    public static class SelfInjected {

        @Autowired @Lazy private SelfInjected self;

        @Transactional
        @Fenced
        public void settle(long amount) {}

        public void run() {
            self.settle(2L);
        }

        public void forward(SelfInjected other, long amount) {
            other.settle(amount + 1);
        }
    }

    /** A fenced method calls another of the same election: both run in the fenced transaction. */
    public static class FencedCallsFenced {

        @Transactional
        @Fenced
        public void settle() {
            audit();
        }

        @Transactional
        @Fenced
        public void audit() {}
    }

    /** Calls a fenced method of another bean. */
    public static class CallsAnother {

        private final FencedAnnotationTests.Jobs jobs;

        CallsAnother(FencedAnnotationTests.Jobs jobs) {
            this.jobs = jobs;
        }

        public void run() {
            jobs.settle("x");
        }
    }

    private static Object stamp(Fixture f) {
        f.fencing.fence();
        return null;
    }
}
