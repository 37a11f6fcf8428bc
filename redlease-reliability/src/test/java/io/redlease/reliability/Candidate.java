package io.redlease.reliability;

import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import io.redlease.core.Term;
import io.redlease.reliability.History.Outcome;
import io.redlease.test.TcpProxy;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One in-process leader candidate: an elector (usually behind its own {@link TcpProxy}), its
 * workload, and an observer that records its elections, step-downs and errors in the history.
 */
final class Candidate implements Observer, AutoCloseable {

    final String id;

    final Elector elector;

    final @Nullable TcpProxy proxy;

    final StringRedisTemplate redis;

    private final History history;

    private final FencedLog log;

    private final Workload workload;

    private final AtomicLong sequence = new AtomicLong();

    /** When the leader task's thread was interrupted during a detached write; 0 if not. */
    private volatile long interruptedAt;

    Candidate(
            String id,
            StringRedisTemplate redis,
            @Nullable TcpProxy proxy,
            ElectorConfig.Builder config,
            History history,
            FencedLog log,
            Workload workload) {
        this.id = id;
        this.redis = redis;
        this.proxy = proxy;
        this.history = history;
        this.log = log;
        this.workload = workload;
        this.elector = new Elector(redis, config.instanceId(id).observer(this).build());
    }

    /** Returns the newest election of this candidate. */
    History.Election lastElection() {
        List<History.Election> elections = history.elections(id);
        return elections.get(elections.size() - 1);
    }

    void start() {
        elector.start(this::lead);
    }

    boolean isLeader() {
        return elector.isLeader();
    }

    /**
     * Returns whether the current term's election is in the history: the observer records it on the
     * election's callback lane, a moment after the elector starts leading.
     */
    boolean recordedCurrentTerm() {
        java.util.OptionalLong token = elector.token();
        return token.isPresent()
                && history.elections(id).stream().anyMatch(e -> e.token() == token.getAsLong());
    }

    private void lead(Term term) {
        long token = term.token();
        interruptedAt = 0;
        int applied = 0;
        while (true) {
            long seq = sequence.incrementAndGet();
            boolean parked = workload.gate().beforeWrite(id, token, seq);
            if (parked) {
                // A writer that decided before it was parked does not look again.
                Thread.interrupted();
            } else if (!term.isActive() || Thread.currentThread().isInterrupted()) {
                break;
            }
            Outcome outcome = attempt(term, token, seq);
            if (outcome == Outcome.REJECTED || parked) {
                history.termEnded(
                        id, token, interruptedAt != 0 ? interruptedAt : System.nanoTime());
                return;
            }
            if (outcome == Outcome.APPLIED) {
                applied++;
                if (workload.writesPerTerm() > 0 && applied >= workload.writesPerTerm()) {
                    return;
                }
            }
            if (!workload.pacing().isZero()) {
                try {
                    // The workload's pace between writes: a fault window, not a synchronisation.
                    Thread.sleep(
                            workload.pacing().toMillis(),
                            workload.pacing().toNanosPart() % 1_000_000);
                } catch (InterruptedException ex) {
                    break;
                }
            }
        }
        if (interruptedAt == 0) {
            history.termEnded(id, token, System.nanoTime());
        }
        if (workload.lastWord()) {
            Thread.interrupted();
            attempt(term, token, sequence.incrementAndGet());
        }
    }

    /** Makes one write with the term's token and records it. */
    Outcome attempt(Term term, long token, long seq) {
        if (workload.detached()) {
            java.util.concurrent.CompletableFuture<Outcome> outcome =
                    java.util.concurrent.CompletableFuture.supplyAsync(
                            () -> write(term, token, seq), detachedWriter);
            while (true) {
                try {
                    return outcome.get();
                } catch (InterruptedException ex) {
                    // The term ended while the write is in flight: note when, let it finish.
                    if (interruptedAt == 0) {
                        interruptedAt = System.nanoTime();
                        history.termEnded(id, token, interruptedAt);
                    }
                } catch (java.util.concurrent.ExecutionException ex) {
                    throw new IllegalStateException(ex.getCause());
                }
            }
        }
        return write(term, token, seq);
    }

    private final java.util.concurrent.ExecutorService detachedWriter =
            java.util.concurrent.Executors.newSingleThreadExecutor(
                    runnable -> {
                        Thread thread = new Thread(runnable, "detached-writer");
                        thread.setDaemon(true);
                        return thread;
                    });

    private Outcome write(Term term, long token, long seq) {
        long start = System.nanoTime();
        Outcome outcome;
        String error = "";
        try {
            boolean ok =
                    workload.fenced()
                            ? log.fenced(term.fencer(), seq, id)
                            : log.unfenced(redis, token, seq, id);
            outcome = ok ? Outcome.APPLIED : Outcome.REJECTED;
        } catch (RuntimeException ex) {
            outcome = Outcome.ERROR;
            error = Harness.describe(ex);
        }
        history.write(new History.Write(id, token, seq, start, System.nanoTime(), outcome, error));
        return outcome;
    }

    @Override
    public void onElected(long token) {
        history.elected(id, token, System.nanoTime());
    }

    @Override
    public void onSteppedDown(StepDownReason reason) {
        history.steppedDown(id, reason.name(), System.nanoTime());
    }

    @Override
    public void onError(Operation operation, Throwable error) {
        history.failed(id, operation.name(), Harness.describe(error), System.nanoTime());
    }

    @Override
    public void close() {
        try {
            if (!elector.stop(java.time.Duration.ofSeconds(10))) {
                throw new IllegalStateException(id + " did not stop within 10 s");
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        } finally {
            detachedWriter.shutdownNow();
        }
    }

    @Override
    public String toString() {
        return "Candidate[" + id + "]";
    }
}
