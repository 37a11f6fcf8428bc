package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.NotLeaderException;
import io.redlease.core.Term;
import io.redlease.core.TermEndedException;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import io.redlease.core.annotation.LeaderOnlyRun.Outcome;
import io.redlease.core.annotation.LeaderOnlySkipListener.MethodRef;
import io.redlease.core.annotation.LeaderOnlySkipListener.Reason;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.scheduling.SlotJobs;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.Callable;
import java.util.function.BiConsumer;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.ProxyMethodInvocation;

/**
 * Runs a {@code LeaderOnly(partitions = ...)} method once per partition this instance owns when the
 * call is made: one after another on the calling thread, in ascending partition order, each inside
 * its partition's current term. A partition whose term ended before its turn is skipped. A run that
 * throws does not stop the others; the first failure is rethrown after the last run, with the
 * others suppressed. An interrupt with which a run's ended term left the thread is cleared before
 * the next run (and set again after the last one if the thread was interrupted before the call or a
 * term around the call has ended). Called within a run of the same partitioned election (its term
 * bound to the thread), the method runs once, inside that run's term, like any nested {@code
 * LeaderOnly} call.
 */
final class PartitionedLeaderOnly {

    /**
     * The partition term whose run the thread is making: set on the thread that calls the method
     * for the run only, never carried to other threads (unlike the bound term, which context
     * propagation carries).
     */
    private static final ThreadLocal<@Nullable Term> RUNNING = new ThreadLocal<>();

    private PartitionedLeaderOnly() {}

    /** Returns the partition term whose run the calling thread is making, or null. */
    static @Nullable Term running() {
        return RUNNING.get();
    }

    /**
     * Reports the runs of one method to the listeners.
     *
     * @param reports the listeners
     * @param targetClass the bean's class, or null
     */
    record Runs(LeaderOnlyRuns reports, @Nullable Class<?> targetClass) {

        LeaderOnlyRun run(
                PartitionedElection election,
                MethodInvocation invocation,
                @Nullable Integer partition,
                long token) {
            Method method = invocation.getMethod();
            return new LeaderOnlyRun(
                    new MethodRef(
                            election.name(),
                            LeaderOnlyInterceptor.targetClassOf(targetClass, method),
                            method),
                    partition,
                    token,
                    SlotJobs.current().orElse(null),
                    election.instanceId());
        }
    }

    /** One partition's run of the method, on the calling thread, named after its method. */
    private record PartitionCall(
            Term term, MethodInvocation invocation, LeaderOnlyRuns reports, LeaderOnlyRun run)
            implements Callable<@Nullable Object> {

        @Override
        public @Nullable Object call() throws Exception {
            Term outer = RUNNING.get();
            RUNNING.set(term);
            try {
                return reports.run(run, term::isActive, new LeaderOnlyInterceptor.Call(invocation));
            } finally {
                if (outer == null) {
                    RUNNING.remove();
                } else {
                    RUNNING.set(outer);
                }
            }
        }

        @Override
        public String toString() {
            return new LeaderOnlyInterceptor.Call(invocation).toString();
        }
    }

    static @Nullable Object invoke(
            MethodInvocation invocation,
            LeaderOnly leaderOnly,
            PartitionedElection election,
            Elections elections,
            BiConsumer<String, Reason> skipped,
            Runs runs)
            throws Throwable {
        Term bound = election.boundTerm().orElse(null);
        if (bound != null) {
            return nested(invocation, leaderOnly, election, bound, skipped, runs);
        }
        int ran = 0;
        Throwable failure = null;
        boolean interruptedBefore = Thread.currentThread().isInterrupted();
        boolean cleared = false;
        Term previous = null;
        for (int partition : election.owned()) {
            if (previous != null && previous.endReason().isPresent() && Thread.interrupted()) {
                // The previous run's term ended and interrupted it (an outer frame keeps the
                // interrupt set): that is not this run's concern.
                cleared = true;
            }
            Term term = election.term(partition).filter(Term::isActive).orElse(null);
            if (term == null) {
                continue; // revoked since the snapshot, or past its deadline: it may not start
            }
            previous = term;
            try {
                MethodInvocation copy = copyOf(invocation);
                term.execute(
                        new PartitionCall(
                                term,
                                copy,
                                runs.reports(),
                                runs.run(election, copy, partition, term.token())),
                        leaderOnly.interruptOnStepDown());
                ran++;
            } catch (TermEndedException ex) {
                if (ex.term() == term && ex.isBeforeStart()) {
                    continue; // revoked between the check and the call: the method did not run
                }
                failure = add(failure, ex);
                ran++;
            } catch (UndeclaredThrowableException ex) {
                failure = add(failure, ex.getUndeclaredThrowable());
                ran++;
            } catch (Throwable ex) {
                failure = add(failure, ex);
                ran++;
            }
        }
        if (cleared && (interruptedBefore || anyBoundTermEnded(elections))) {
            Thread.currentThread().interrupt(); // the caller's own interrupt, or an outer term's
        }
        if (failure != null) {
            throw failure;
        }
        if (ran == 0 && leaderOnly.whenNotLeader() == WhenNotLeader.REJECT) {
            runs.reports().notRun(runs.run(election, invocation, null, 0), Outcome.REJECTED);
            throw notLeader(invocation, election, "it owns none");
        }
        if (ran == 0) {
            skipped.accept(election.name(), Reason.NO_PARTITION);
            runs.reports()
                    .notRun(runs.run(election, invocation, null, 0), Outcome.SKIPPED_NO_PARTITION);
        }
        return null;
    }

    /**
     * Runs a call made within a partition run once, in that run's term; a term that is not active
     * (ended, or past its deadline) starts no leader-only work, also not in another partition.
     */
    private static @Nullable Object nested(
            MethodInvocation invocation,
            LeaderOnly leaderOnly,
            PartitionedElection election,
            Term term,
            BiConsumer<String, Reason> skipped,
            Runs runs)
            throws Throwable {
        LeaderOnlyRun outer = LeaderOnlyRun.current();
        Integer partition =
                outer != null && outer.token() == term.token() ? outer.partition() : null;
        if (term.isActive()) {
            try {
                return term.execute(
                        new PartitionCall(
                                term,
                                invocation,
                                runs.reports(),
                                runs.run(election, invocation, partition, term.token())),
                        leaderOnly.interruptOnStepDown());
            } catch (TermEndedException ex) {
                if (ex.term() != term || !ex.isBeforeStart()) {
                    throw ex;
                }
            } catch (UndeclaredThrowableException ex) {
                throw ex.getUndeclaredThrowable();
            }
        }
        if (leaderOnly.whenNotLeader() == WhenNotLeader.REJECT) {
            runs.reports().notRun(runs.run(election, invocation, partition, 0), Outcome.REJECTED);
            throw notLeader(
                    invocation,
                    election,
                    "the term of the partition run it was called in has ended");
        }
        skipped.accept(election.name(), Reason.TERM_ENDED);
        runs.reports()
                .notRun(runs.run(election, invocation, partition, 0), Outcome.SKIPPED_TERM_ENDED);
        return null;
    }

    /** Returns whether a term the thread works for (around this call) has ended. */
    private static boolean anyBoundTermEnded(Elections elections) {
        for (Elector elector : elections.asMap().values()) {
            if (elector.boundTerm().filter(term -> term.endReason().isPresent()).isPresent()) {
                return true;
            }
        }
        for (PartitionedElection other : elections.partitionedAsMap().values()) {
            if (other.boundTerm().filter(term -> term.endReason().isPresent()).isPresent()) {
                return true;
            }
        }
        return false;
    }

    private static NotLeaderException notLeader(
            MethodInvocation invocation, PartitionedElection election, String why) {
        Method method = invocation.getMethod();
        return new NotLeaderException(
                election.name(),
                "redlease: "
                        + method.getDeclaringClass().getSimpleName()
                        + "."
                        + method.getName()
                        + " runs once per partition of '"
                        + election.name()
                        + "' this instance owns, and "
                        + why);
    }

    /** Returns an invocation that can proceed once more through the rest of the advice chain. */
    private static MethodInvocation copyOf(MethodInvocation invocation) {
        if (invocation instanceof ProxyMethodInvocation proxied) {
            return proxied.invocableClone();
        }
        throw new IllegalStateException(
                "redlease: @LeaderOnly(partitions) needs a Spring AOP proxy invocation to run "
                        + invocation.getMethod()
                        + " once per partition");
    }

    private static Throwable add(@Nullable Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
