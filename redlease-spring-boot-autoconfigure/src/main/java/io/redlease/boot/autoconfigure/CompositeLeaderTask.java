package io.redlease.boot.autoconfigure;

import io.redlease.core.LeaderTask;
import io.redlease.core.Term;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * Runs several leader tasks in one term, each on its own thread (the first on the term's thread).
 * The term lasts until all of them returned; when it ends, the term's thread is interrupted and
 * passes the interrupt on to the others. The first failure is rethrown.
 */
final class CompositeLeaderTask implements LeaderTask {

    private final List<LeaderTask> tasks;

    CompositeLeaderTask(List<LeaderTask> tasks) {
        this.tasks = List.copyOf(tasks);
    }

    @Override
    public void lead(Term term) throws Exception {
        List<FutureTask<Void>> others = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (LeaderTask task : tasks.subList(1, tasks.size())) {
            FutureTask<Void> future =
                    new FutureTask<>(
                            () -> {
                                task.lead(term);
                                return null;
                            });
            Thread thread =
                    new Thread(future, Thread.currentThread().getName() + "-" + others.size());
            thread.setDaemon(true);
            others.add(future);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
        Exception failure = null;
        try {
            tasks.get(0).lead(term);
        } catch (InterruptedException ex) {
            threads.forEach(Thread::interrupt);
        } catch (Exception ex) {
            failure = ex;
        }
        for (FutureTask<Void> other : others) {
            Exception otherFailure = await(other, threads);
            if (failure == null) {
                failure = otherFailure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static Exception await(FutureTask<Void> task, List<Thread> threads) {
        while (true) {
            try {
                task.get();
                return null;
            } catch (ExecutionException ex) {
                return ex.getCause() instanceof Exception cause
                                && !(cause instanceof InterruptedException)
                        ? cause
                        : null;
            } catch (InterruptedException ex) {
                // The term ended while this thread waited: pass it on and keep waiting.
                threads.forEach(Thread::interrupt);
            }
        }
    }
}
