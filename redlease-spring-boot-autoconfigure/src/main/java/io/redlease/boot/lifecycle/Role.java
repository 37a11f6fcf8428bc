package io.redlease.boot.lifecycle;

import io.redlease.boot.lifecycle.LeaderLifecycles.Action;
import io.redlease.boot.lifecycle.LeaderLifecycles.Listener;
import io.redlease.boot.lifecycle.LeaderLifecycles.Member;
import io.redlease.core.BeforeRelease;
import io.redlease.core.Elector;
import io.redlease.core.Observer;
import io.redlease.core.Term;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.context.Lifecycle;
import org.springframework.context.Phased;
import org.springframework.context.SmartLifecycle;

/**
 * The leader-only lifecycles of one election: started on its own thread when this instance is
 * elected, stopped there when the term ends; a graceful release waits for the stop.
 */
final class Role implements Observer, BeforeRelease {

    private static final Log logger = LogFactory.getLog("io.redlease.lifecycle");

    private final String electionId;

    private final Supplier<Elector> elector;

    private final Supplier<List<Listener>> listeners;

    private final List<Entry> entries = new CopyOnWriteArrayList<>();

    /** The stop of each term whose lifecycles were started, by token, until it has finished. */
    private final Map<Long, CompletableFuture<Void>> stops = new ConcurrentHashMap<>();

    private volatile @Nullable ThreadPoolExecutor worker;

    Role(String electionId, Supplier<Elector> elector, Supplier<List<Listener>> listeners) {
        this.electionId = electionId;
        this.elector = elector;
        this.listeners = listeners;
    }

    void add(String name, Lifecycle lifecycle) {
        entries.add(new Entry(name, lifecycle));
    }

    List<Member> members() {
        return sorted().stream()
                .map(entry -> new Member(entry.name, entry.phase(), entry.running()))
                .toList();
    }

    private List<Entry> sorted() {
        List<Entry> sorted = new ArrayList<>(entries);
        sorted.sort(Comparator.comparingInt(Entry::phase));
        return sorted;
    }

    @Override
    public void onElected(long token) {
        if (entries.isEmpty()) {
            return;
        }
        Elector elector = this.elector.get();
        Term term = elector.term().filter(current -> current.token() == token).orElse(null);
        if (term == null) {
            return; // the term has ended already
        }
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        stops.put(token, stopped);
        ThreadPoolExecutor worker = worker();
        List<Entry> started = new CopyOnWriteArrayList<>();
        worker.execute(() -> start(elector, term, started));
        term.whenEnded()
                .whenCompleteAsync(
                        (reason, error) -> {
                            try {
                                stop(elector, started);
                            } finally {
                                stops.remove(token);
                                stopped.complete(null);
                            }
                        },
                        worker);
    }

    @Override
    public CompletionStage<?> beforeRelease(Term term) {
        CompletableFuture<Void> stopped = stops.get(term.token());
        return stopped == null ? CompletableFuture.completedFuture(null) : stopped;
    }

    private void start(Elector elector, Term term, List<Entry> started) {
        for (Entry entry : sorted()) {
            if (!term.isActive()) {
                return;
            }
            CompletableFuture<Void> stopping = entry.stopped;
            if (!stopping.isDone()) {
                failed(
                        elector,
                        entry,
                        Action.START,
                        new IllegalStateException(
                                "redlease: still stopping from an earlier term (its stop has"
                                        + " not called"
                                        + " back); it starts in term "
                                        + term.token()
                                        + " once it has stopped"));
                stopping.thenRunAsync(
                        () -> {
                            if (term.isActive()) {
                                startOne(elector, term, entry, started);
                            }
                        },
                        worker());
                continue;
            }
            startOne(elector, term, entry, started);
        }
        if (!started.isEmpty()) {
            logger.info(
                    "redlease: started "
                            + started.size()
                            + " leader-only lifecycle(s) of '"
                            + elector.name()
                            + "' in term "
                            + term.token());
        }
    }

    private void startOne(Elector elector, Term term, Entry entry, List<Entry> started) {
        try {
            entry.lifecycle.start();
            started.add(entry);
            if (logger.isDebugEnabled()) {
                logger.debug("redlease: started '" + entry.name + "' in term " + term.token());
            }
        } catch (Throwable ex) {
            failed(elector, entry, Action.START, ex);
        }
    }

    private void stop(Elector elector, List<Entry> started) {
        long begin = System.nanoTime();
        long deadline = begin + elector.config().drainTimeout().toNanos();
        List<Entry> reverse = new ArrayList<>(started);
        reverse.sort(Comparator.comparingInt(Entry::phase).reversed());
        for (Entry entry : reverse) {
            try {
                if (entry.lifecycle instanceof SmartLifecycle smart) {
                    CountDownLatch latch = new CountDownLatch(1);
                    CompletableFuture<Void> done = new CompletableFuture<>();
                    entry.stopped = done;
                    try {
                        smart.stop(
                                () -> {
                                    done.complete(null);
                                    latch.countDown();
                                });
                    } catch (Throwable ex) {
                        done.complete(null);
                        throw ex;
                    }
                    long left = Math.max(deadline - System.nanoTime(), 0);
                    if (!latch.await(left, TimeUnit.NANOSECONDS)) {
                        failed(
                                elector,
                                entry,
                                Action.STOP,
                                new TimeoutException(
                                        "redlease: did not stop within the drain timeout of "
                                                + elector.config().drainTimeout()));
                    }
                } else {
                    entry.lifecycle.stop();
                }
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                failed(elector, entry, Action.STOP, ex);
            } catch (Throwable ex) {
                failed(elector, entry, Action.STOP, ex);
            }
        }
        Duration drain = Duration.ofNanos(System.nanoTime() - begin);
        if (!started.isEmpty()) {
            logger.info(
                    "redlease: stopped "
                            + started.size()
                            + " leader-only lifecycle(s) of '"
                            + elector.name()
                            + "' in "
                            + drain.toMillis()
                            + " ms");
        }
        for (Listener listener : listeners.get()) {
            try {
                listener.onDrained(electionId, elector, drain);
            } catch (RuntimeException ex) {
                logger.warn("redlease: a lifecycle listener failed", ex);
            }
        }
    }

    private void failed(Elector elector, Entry entry, Action action, Throwable error) {
        logger.warn(
                "redlease: leader-only lifecycle '"
                        + entry.name
                        + "' of '"
                        + elector.name()
                        + "' failed to "
                        + action.name().toLowerCase(java.util.Locale.ROOT)
                        + "; the election goes on",
                error);
        for (Listener listener : listeners.get()) {
            try {
                listener.onFailed(electionId, elector, entry.name, action, error);
            } catch (RuntimeException ex) {
                logger.warn("redlease: a lifecycle listener failed", ex);
            }
        }
    }

    /** Returns the election's own thread, started on first use; it ends when idle. */
    private ThreadPoolExecutor worker() {
        ThreadPoolExecutor current = worker;
        if (current == null) {
            synchronized (this) {
                current = worker;
                if (current == null) {
                    current =
                            new ThreadPoolExecutor(
                                    1,
                                    1,
                                    30,
                                    TimeUnit.SECONDS,
                                    new LinkedBlockingQueue<>(),
                                    runnable -> {
                                        Thread thread =
                                                new Thread(
                                                        runnable,
                                                        "redlease-lifecycle-" + electionId);
                                        thread.setDaemon(true);
                                        return thread;
                                    });
                    current.allowCoreThreadTimeOut(true);
                    worker = current;
                }
            }
        }
        return current;
    }

    private static final class Entry {

        final String name;

        final Lifecycle lifecycle;

        /** Completes when the last stop has called back: a start waits for it. */
        volatile CompletableFuture<Void> stopped = CompletableFuture.completedFuture(null);

        Entry(String name, Lifecycle lifecycle) {
            this.name = name;
            this.lifecycle = lifecycle;
        }

        int phase() {
            return lifecycle instanceof Phased phased ? phased.getPhase() : 0;
        }

        boolean running() {
            try {
                return lifecycle.isRunning();
            } catch (RuntimeException ex) {
                return false;
            }
        }
    }
}
