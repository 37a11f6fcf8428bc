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
 * call is awaited; a reply to an older one is ignored. Confined to the run's loop.
 *
 * <p>Each request sent is reported to {@link Observer#onRoundTrip} once. A request of {@link #call}
 * is reported when it is delivered (its reply, failure or bound); one of {@link #send}, which the
 * loop may wait for over several bounds, when its reply or failure arrives or when it is given up.
 */
final class RoundTrips {

    /** The {@code sent} of a step that is not reported as a round trip. */
    private static final Object UNREPORTED = new Object();

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
        return call(roundTrip, timeoutNanos, cancel, operation, what, false, next);
    }

    /**
     * Like {@link #call}, but its outcome is handled at once on the thread that brings the reply
     * when the loop is idle ({@link Campaign#executeNow}): for a round trip on a graceful
     * hand-off's path, where the hop to the loop thread would be a thread wake-up.
     */
    <T> CompletableFuture<T> callNow(
            Supplier<CompletableFuture<T>> roundTrip,
            long timeoutNanos,
            boolean cancel,
            Operation operation,
            String what,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        return call(roundTrip, timeoutNanos, cancel, operation, what, true, next);
    }

    private <T> CompletableFuture<T> call(
            Supplier<CompletableFuture<T>> roundTrip,
            long timeoutNanos,
            boolean cancel,
            Operation operation,
            String what,
            boolean now,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        long sentAt = System.nanoTime();
        CompletableFuture<T> sent = supply(roundTrip);
        await(sent, sentAt, timeoutNanos, cancel, operation, subject(what), now, next);
        return sent;
    }

    /**
     * Waits for a step that is not a round trip of the lease (opening the connection) and hands its
     * outcome to {@code next} on the loop: null, the failure, or a {@link QueryTimeoutException}
     * naming {@code what} at the bound. Nothing is cancelled at the bound and nothing is reported
     * to {@link Observer#onRoundTrip}; the outcome is recorded as the elector's last Redis failure,
     * or success.
     */
    void within(
            CompletableFuture<Void> step,
            long timeoutNanos,
            String what,
            BiConsumer<@Nullable Void, @Nullable Throwable> next) {
        await(step, UNREPORTED, timeoutNanos, false, Operation.ACQUIRE, what, false, next);
    }

    private String subject(String what) {
        return what + " of '" + campaign.elector.name() + "'";
    }

    private static <T> CompletableFuture<T> supply(Supplier<CompletableFuture<T>> roundTrip) {
        try {
            return roundTrip.get();
        } catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        }
    }

    private static @Nullable Throwable failureOf(CompletableFuture<?> reply) {
        try {
            reply.getNow(null);
            return null;
        } catch (CompletionException ex) {
            return ex.getCause() != null ? ex.getCause() : ex;
        } catch (CancellationException ex) {
            return ex;
        }
    }

    /**
     * Sends a request whose reply may be waited for over several bounds (see {@link #await}). Its
     * round trip is reported once: when its reply or failure arrives, awaited or not, with the time
     * from its send, or when {@link #giveUp} abandons it first; never at a bound, so a request that
     * stalls is one failed round trip, not one per bound.
     */
    <T> InFlight<T> send(Supplier<CompletableFuture<T>> roundTrip, Operation operation) {
        long sentAt = System.nanoTime();
        InFlight<T> call = new InFlight<>(supply(roundTrip), sentAt, operation);
        call.reply.whenComplete(
                (value, error) -> campaign.execute(() -> report(call, failureOf(call.reply))));
        return call;
    }

    /**
     * Waits (again) for a request sent by {@link #send} and hands its outcome to {@code next} on
     * the loop: the reply, the failure, or a {@link QueryTimeoutException} at the bound. The
     * request is not cancelled at the bound and its round trip is not reported here.
     */
    <T> void await(
            InFlight<T> call,
            long timeoutNanos,
            String what,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        await(call.reply, call, timeoutNanos, false, call.operation, subject(what), false, next);
    }

    /**
     * Waits for a reply within the bound; {@code sent} as {@link #deliver} takes it, {@code
     * subject} names the call in a timeout, {@code now} handles the reply as {@link #callNow}.
     */
    private <T> void await(
            CompletableFuture<T> reply,
            Object sent,
            long timeoutNanos,
            boolean cancel,
            Operation operation,
            String subject,
            boolean now,
            BiConsumer<@Nullable T, @Nullable Throwable> next) {
        long id = ++sequence;
        awaited = id;
        Runnable delivery =
                () -> deliver(id, reply, sent, timeoutNanos, cancel, operation, subject, next);
        ScheduledFuture<?> bound = campaign.schedule(delivery, timeoutNanos);
        Runnable onReply =
                () -> {
                    bound.cancel(false);
                    delivery.run();
                };
        reply.whenComplete(
                (value, error) -> {
                    if (now) {
                        campaign.executeNow(onReply);
                    } else {
                        campaign.execute(onReply);
                    }
                });
    }

    /**
     * Stops expecting a request sent by {@link #send}. Unless its outcome was reported already, it
     * is reported as a failed round trip, lasting from its send, once {@code boundNanos} have
     * passed since its send without a reply (at once if they have): a request that was merely in
     * flight when its owner gave up on it still reports its reply.
     */
    void giveUp(InFlight<?> call, long boundNanos) {
        long left = boundNanos - (System.nanoTime() - call.sentAt);
        Runnable expire =
                () -> {
                    if (!call.isDone()) {
                        report(call, new CancellationException("redlease: given up"));
                    }
                };
        if (left <= 0) {
            expire.run();
        } else if (!call.reported) {
            campaign.schedule(expire, left);
        }
    }

    private void report(InFlight<?> call, @Nullable Throwable failure) {
        if (call.reported) {
            return;
        }
        call.reported = true;
        notifyRoundTrip(call.operation, call.sentAt, failure == null);
    }

    /** Stops waiting for the call in flight: its outcome, when it comes, is ignored. */
    void forget() {
        awaited = 0;
    }

    /**
     * Hands a call's outcome to {@code next} if the loop still waits for it, after reporting its
     * round trip: for a call of {@link #call} ({@code sent} is its send time) at once, for one of
     * {@link #send} ({@code sent} is the {@link InFlight}) only once its reply came, for a step of
     * {@link #within} never.
     */
    private <T> void deliver(
            long id,
            CompletableFuture<T> reply,
            Object sent,
            long timeoutNanos,
            boolean cancel,
            Operation operation,
            String subject,
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
                                    + subject
                                    + " got no reply within "
                                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                                    + "ms");
        } else {
            failure = failureOf(reply);
            if (failure == null) {
                value = reply.getNow(null);
            }
        }
        campaign.elector.recordRoundTrip(failure);
        campaign.subscription.afterRoundTrip(failure == null);
        if (sent instanceof InFlight<?> call) {
            if (reply.isDone()) {
                report(call, failure);
            }
        } else if (sent instanceof Long sentAt) {
            notifyRoundTrip(operation, sentAt, failure == null);
        }
        next.accept(failure == null ? value : null, failure);
    }

    private void notifyRoundTrip(Operation operation, long sentAt, boolean succeeded) {
        Duration took = Duration.ofNanos(System.nanoTime() - sentAt);
        Observer observer = campaign.elector.observer();
        campaign.notify("onRoundTrip", () -> observer.onRoundTrip(operation, took, succeeded));
    }

    /** A request sent by {@link #send}, and whether its round trip was reported. */
    static final class InFlight<T> {

        final CompletableFuture<T> reply;

        final long sentAt;

        final Operation operation;

        boolean reported;

        InFlight(CompletableFuture<T> reply, long sentAt, Operation operation) {
            this.reply = reply;
            this.sentAt = sentAt;
            this.operation = operation;
        }

        boolean isDone() {
            return reply.isDone();
        }
    }
}
