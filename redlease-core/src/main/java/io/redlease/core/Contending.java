package io.redlease.core;

import io.redlease.core.LeaseProtocol.AcquireReply;
import io.redlease.core.Observer.Operation;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;
import org.springframework.dao.QueryTimeoutException;

/**
 * The contending half of a run: opening the connection before the first look at the lease, then one
 * acquire at a time, each bounded, and what its reply means. Confined to the run's loop.
 *
 * <p>Opening the connection (the client's connect and handshake) is bounded by the {@linkplain
 * ElectorConfig#connectTimeout() connect timeout} and waits on the blocking pool, so the acquire's
 * own bound counts one round trip, never the connection: a slow first connection costs no acquire
 * timeout and no token. The first acquire of a run may take up to the time to live, later ones the
 * acquire timeout; either is safe, as a term's deadline counts from the acquire's send.
 *
 * <p>An acquire that missed its bound is not cancelled: it may still win at Redis, taking a token.
 * No second acquire is sent while it waits for Redis. When its reply does come and it won, the run
 * takes that win as its term if the term still has a renew interval before its deadline (time to
 * live after the send), so the token is not burnt by a takeover. A later win, or one that comes
 * after a stop, is released at once (token-checked), so that no lease outlives its run and the
 * others need not wait out its time to live; the wire protocol is the Go library's.
 */
final class Contending {

    private final Campaign campaign;

    private final ElectorConfig config;

    private final long connectTimeout;

    /** Whether the connection was opened in this run; it is opened once per run. */
    private boolean connected;

    private boolean firstAttempt = true;

    /** The last acquire sent, until a newer one is. */
    private @Nullable Attempt last;

    /** Whether the run has followed since it started or since its last term. */
    private boolean wasFollower;

    Contending(Campaign campaign, ElectorConfig config) {
        this.campaign = campaign;
        this.config = config;
        this.connectTimeout = config.connectTimeout().toNanos();
    }

    /** Returns whether the run's connection has been opened. */
    boolean connected() {
        return connected;
    }

    /**
     * Opens the connection, bounded by the connect timeout; its outcome goes to {@link
     * Campaign#onConnected()} or {@link Campaign#onAcquireFailed}.
     */
    void connect() {
        campaign.roundTrips()
                .within(
                        campaign.protocol.connect(),
                        connectTimeout,
                        "connecting to Redis for '" + config.name() + "'",
                        (ignored, error) -> {
                            if (error == null) {
                                connected = true;
                                campaign.onConnected();
                            } else {
                                campaign.onAcquireFailed(error);
                            }
                        });
    }

    /**
     * Sends an acquire, unless the last one still waits for Redis; its outcome is handled here. One
     * sent because a release was heard has its reply handled on the thread that brings it.
     */
    void acquire(boolean releaseHeard) {
        long now = config.clock().getAsLong();
        if (last != null && !last.reply.isDone()) {
            // The last acquire was abandoned at its bound and still waits for Redis. Sending
            // another could let the two run in either order, the later one minting a newer
            // token behind the term the earlier one starts; wait for it instead.
            onReply(
                    now,
                    null,
                    new QueryTimeoutException(
                            "redlease: the previous acquire of '"
                                    + config.name()
                                    + "' still has no reply"));
            return;
        }
        // The first attempt of a run may take up to the TTL (nothing else is due meanwhile),
        // later attempts the acquire timeout; the connection is already open.
        long bound = firstAttempt ? campaign.ttl : campaign.acquireTimeout;
        firstAttempt = false;
        Attempt attempt = new Attempt(now);
        BiConsumer<@Nullable AcquireReply, @Nullable Throwable> next =
                (reply, error) -> {
                    // Given up: no reply was delivered (the bound passed), though the reply
                    // may have come meanwhile; settled() takes a win that came late.
                    attempt.delivered = true;
                    attempt.abandoned = reply == null;
                    onReply(attempt.sentAt, reply, error);
                };
        RoundTrips trips = campaign.roundTrips();
        attempt.reply =
                releaseHeard
                        ? trips.callNow(
                                campaign.protocol::acquire,
                                bound,
                                false,
                                Operation.ACQUIRE,
                                "acquire",
                                next)
                        : trips.call(
                                campaign.protocol::acquire,
                                bound,
                                false,
                                Operation.ACQUIRE,
                                "acquire",
                                next);
        last = attempt;
        Runnable settle = () -> settled(attempt);
        // Handled where the reply's delivery is: queued ahead of an inline delivery, it would
        // send that to the loop thread too.
        attempt.reply.whenComplete(
                (reply, error) -> {
                    if (releaseHeard) {
                        campaign.executeNow(settle);
                    } else {
                        campaign.execute(settle);
                    }
                });
    }

    /**
     * The run no longer waits for the last acquire's outcome (an internal error dropped it): a win
     * it brings is settled as one that came late.
     */
    void giveUp() {
        Attempt attempt = last;
        if (attempt != null && !attempt.delivered) {
            attempt.abandoned = true;
            if (attempt.reply.isDone()) {
                // Its settling step may have run already, when it still looked delivered.
                campaign.execute(() -> settled(attempt));
            }
        }
    }

    /** Takes a win that came after its attempt was abandoned, if it can still be a term. */
    private void settled(Attempt attempt) {
        if (attempt != last || !attempt.abandoned || attempt.reply.isCompletedExceptionally()) {
            return;
        }
        AcquireReply reply = attempt.reply.getNow(null);
        if (reply == null || reply.token() <= 0 || attempt.settled) {
            return;
        }
        attempt.settled = true;
        if (campaign.stopRequested()) {
            // The stop ended the run while this acquire was past its bound: it won a lease no
            // term will hold. Give it back, so the others need not wait out its time to live.
            campaign.releaseUnheld(reply.token(), "answered after the stop");
            return;
        }
        long age = config.clock().getAsLong() - attempt.sentAt;
        boolean inTime = campaign.sleepingFollower() && age < campaign.ttl - campaign.renewInterval;
        if (Campaign.logger.isDebugEnabled()) {
            Campaign.logger.debug(
                    "redlease: the acquire of '"
                            + config.name()
                            + "' that missed its bound won token "
                            + reply.token()
                            + " after "
                            + TimeUnit.NANOSECONDS.toMillis(age)
                            + " ms"
                            + (inTime ? "; it is the term" : "; too late for a term, released"));
        }
        if (inTime) {
            campaign.cancelTimer();
            campaign.elector.recordRoundTrip(null);
            onReply(attempt.sentAt, reply, null);
        } else {
            // No term holds it: held on until this run's next attempt took it over, it outlived
            // a stop that came first (up to its time to live), and it kept the others waiting.
            campaign.releaseUnheld(reply.token(), "too late for a term");
        }
    }

    /** Handles an acquire's outcome: leads, follows or backs off. */
    private void onReply(long sentAt, @Nullable AcquireReply reply, @Nullable Throwable error) {
        if (Campaign.logger.isDebugEnabled()) {
            Campaign.logger.debug(
                    "redlease: acquire of '"
                            + config.name()
                            + "' by "
                            + config.instanceId()
                            + (reply == null
                                    ? " failed: " + error
                                    : reply.token() > 0
                                            ? " won token " + reply.token()
                                            : " lost to "
                                                    + reply.holder()
                                                    + "; its lease has "
                                                    + reply.holderTtlMillis()
                                                    + " ms left"));
        }
        if (reply == null) {
            campaign.onAcquireFailed(error);
            return;
        }
        campaign.pacing.reset();
        if (reply.token() >= LeaseProtocol.MAX_TOKEN) {
            campaign.wonTerms().tokenExhausted(reply.token());
            return;
        }
        if (reply.token() > 0) {
            wasFollower = false;
            campaign.onWon(reply.token(), sentAt);
            return;
        }
        // Another instance's lease, valid for holderTtl more from the send (a negative one is a
        // free lease that preference holds back); the next look is due when it lapses, so it
        // counts as seen for one acquire timeout more, while that look is on its way.
        long holderTtl = reply.holderTtlMillis();
        campaign.elector.leaseSeen(
                holderTtl >= 0,
                sentAt
                        + TimeUnit.MILLISECONDS.toNanos(Math.max(holderTtl, 0))
                        + campaign.acquireTimeout);
        if (!wasFollower) {
            wasFollower = true;
            String holder = reply.holder();
            Observer observer = campaign.elector.observer();
            campaign.reportFollower(
                    () -> campaign.notify("onFollower", () -> observer.onFollower(holder)));
        }
        campaign.onLost(holderTtl);
    }

    /** One acquire sent: when, its reply, and whether the loop stopped waiting for it. */
    private static final class Attempt {

        final long sentAt;

        CompletableFuture<AcquireReply> reply = new CompletableFuture<>();

        /** Whether its outcome was delivered as a timeout, or dropped; confined to the loop. */
        boolean abandoned;

        /** Whether its outcome was delivered; confined to the loop. */
        boolean delivered;

        /** Whether its late win was taken or given back; confined to the loop. */
        boolean settled;

        Attempt(long sentAt) {
            this.sentAt = sentAt;
        }
    }
}
