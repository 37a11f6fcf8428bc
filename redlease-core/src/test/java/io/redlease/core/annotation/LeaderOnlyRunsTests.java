package io.redlease.core.annotation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.redlease.core.FenceRefusedException;
import io.redlease.core.annotation.LeaderOnlyRun.Outcome;
import io.redlease.core.annotation.LeaderOnlySkipListener.MethodRef;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * Runs pass through the listeners in order, with their outcome, and a failing listener is ignored.
 */
class LeaderOnlyRunsTests {

    private final List<String> heard = new CopyOnWriteArrayList<>();

    private static LeaderOnlyRun run() throws NoSuchMethodException {
        return new LeaderOnlyRun(
                new MethodRef(
                        "orders", LeaderOnlyRunsTests.class, Object.class.getMethod("hashCode")),
                null,
                7,
                null,
                "i-1");
    }

    private LeaderOnlyRunListener named(String name) {
        return new LeaderOnlyRunListener() {
            @Override
            public @Nullable Object around(LeaderOnlyRun run, Callable<@Nullable Object> proceed)
                    throws Exception {
                heard.add(name + " before " + run.outcome());
                try {
                    return proceed.call();
                } finally {
                    heard.add(name + " after " + run.outcome().value());
                }
            }

            @Override
            public void notRun(LeaderOnlyRun run) {
                heard.add(name + " not run " + run.outcome().value());
            }
        };
    }

    @Test
    void listenersNestInOrderAndSeeTheOutcomeOnceTheRunEnded() throws Exception {
        LeaderOnlyRuns runs = new LeaderOnlyRuns(() -> List.of(named("a"), named("b")));
        LeaderOnlyRun run = run();
        Object result =
                runs.run(
                        run,
                        () -> true,
                        () -> {
                            heard.add("body, current " + (LeaderOnlyRun.current() == run));
                            return "done";
                        });
        assertThat(result).isEqualTo("done");
        assertThat(heard)
                .containsExactly(
                        "a before null",
                        "b before null",
                        "body, current true",
                        "b after ran",
                        "a after ran");
        assertThat(LeaderOnlyRun.current()).isNull();
    }

    @Test
    void aRefusedWriteIsRefusedAndAnEndedTermIsCutShort() throws Exception {
        LeaderOnlyRuns runs = new LeaderOnlyRuns(List::of);
        LeaderOnlyRun refused = run();
        assertThatThrownBy(
                        () ->
                                runs.run(
                                        refused,
                                        () -> true,
                                        () -> {
                                            throw new FenceRefusedException("orders", 7);
                                        }))
                .isInstanceOf(FenceRefusedException.class);
        assertThat(refused.outcome()).isEqualTo(Outcome.REFUSED);
        LeaderOnlyRun cut = run();
        runs.run(cut, () -> false, () -> null);
        assertThat(cut.outcome()).isEqualTo(Outcome.CUT_SHORT);
        LeaderOnlyRun failed = run();
        assertThatThrownBy(
                        () ->
                                runs.run(
                                        failed,
                                        () -> true,
                                        () -> {
                                            throw new IllegalStateException("own failure");
                                        }))
                .hasMessage("own failure");
        assertThat(failed.outcome()).isEqualTo(Outcome.RAN);
    }

    @Test
    void aListenerThatThrowsBeforeOrAfterLeavesTheRunAsItWas() throws Exception {
        AtomicBoolean ran = new AtomicBoolean();
        LeaderOnlyRunListener before =
                new LeaderOnlyRunListener() {
                    @Override
                    public @Nullable Object around(
                            LeaderOnlyRun run, Callable<@Nullable Object> proceed) {
                        throw new IllegalStateException("listener failed before");
                    }
                };
        LeaderOnlyRunListener after =
                new LeaderOnlyRunListener() {
                    @Override
                    public @Nullable Object around(
                            LeaderOnlyRun run, Callable<@Nullable Object> proceed)
                            throws Exception {
                        proceed.call();
                        throw new IllegalStateException("listener failed after");
                    }

                    @Override
                    public void notRun(LeaderOnlyRun run) {
                        throw new IllegalStateException("listener failed");
                    }
                };
        LeaderOnlyRuns runs = new LeaderOnlyRuns(() -> List.of(before, after, named("c")));
        Object result =
                runs.run(
                        run(),
                        () -> true,
                        () -> {
                            ran.set(true);
                            return 42;
                        });
        assertThat(ran).isTrue();
        assertThat(result).isEqualTo(42);
        assertThat(heard).containsExactly("c before null", "c after ran");
        runs.notRun(run(), Outcome.SKIPPED_NOT_LEADER);
        assertThat(heard).contains("c not run skipped-not-leader");
    }
}
