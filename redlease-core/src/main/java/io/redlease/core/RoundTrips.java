package io.redlease.core;

import io.redlease.core.Observer.Operation;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.QueryTimeoutException;

/**
 * The bounded Redis round trips of one run: each hands its outcome to the loop once, as the reply,
 * the failure, or a {@link QueryTimeoutException} when no reply came within its bound. A reply that
 * completed by the time the bound fires wins over the timeout ("photo finish"). Only the latest
 * call is awaited; a reply to an older one is ignored. Confined to the run's loop thread.
 */
final class RoundTrips {

    private final Campaign campaign;

    private long sequence;

    /** The call whose reply the loop waits for; 0 when none. */
    private long awaited;

    RoundTrips(Campaign campaign) {
        this.campaign = campaign;
    }

    /**
     * Sends a round trip and hands its outcome to {@code next} on the loop.
     *
     * @param cancel whether to cancel the call when its bound passes; an acquire is not cancelled,
     *     so the next attempt can wait for it to settle
     * @return the call's future
     */
    <T> CompletableFuture<T> call(
            Supplier<CompletableFuture<T>> roundTrip,
            long timeoutNanos,
            boolean cancel,
            Operation operation,
            String what,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        long id = ++sequence;
        long sentAt = System.nanoTime();
        awaited = id;
        CompletableFuture<T> reply;
        try {
            reply = roundTrip.get();
        } catch (RuntimeException ex) {
            reply = CompletableFuture.failedFuture(ex);
        }
        CompletableFuture<T> sent = reply;
        ScheduledFuture<?> bound =
                campaign.schedule(
                        () ->
                                deliver(
                                        id,
                                        sent,
                                        sentAt,
                                        timeoutNanos,
                                        cancel,
                                        operation,
                                        what,
                                        next),
                        timeoutNanos);
        sent.whenComplete(
                (value, error) ->
                        campaign.execute(
                                () -> {
                                    bound.cancel(false);
                                    deliver(
                                            id,
                                            sent,
                                            sentAt,
                                            timeoutNanos,
                                            cancel,
                                            operation,
                                            what,
                                            next);
                                }));
        return sent;
    }

    /** Stops waiting for the call in flight: its outcome, when it comes, is ignored. */
    void forget() {
        awaited = 0;
    }

    private <T> void deliver(
            long id,
            CompletableFuture<T> reply,
            long sentAt,
            long timeoutNanos,
            boolean cancel,
            Operation operation,
            String what,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        if (awaited != id) {
            return;
        }
        awaited = 0;
        T value = null;
        Throwable failure = null;
        if (!reply.isDone()) {
            if (cancel) {
                reply.cancel(true);
            }
            failure =
                    new QueryTimeoutException(
                            "redlease: "
                                    + what
                                    + " of '"
                                    + campaign.elector.name()
                                    + "' got no reply within "
                                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                                    + "ms");
        } else {
            try {
                value = reply.getNow(null);
            } catch (CompletionException ex) {
                failure = ex.getCause() != null ? ex.getCause() : ex;
            } catch (CancellationException ex) {
                failure = ex;
            }
        }
        campaign.elector.recordRoundTrip(failure);
        Duration took = Duration.ofNanos(System.nanoTime() - sentAt);
        boolean succeeded = failure == null;
        Observer observer = campaign.elector.observer();
        campaign.notify("onRoundTrip", () -> observer.onRoundTrip(operation, took, succeeded));
        next.accept(failure == null ? value : null, failure);
    }
}
