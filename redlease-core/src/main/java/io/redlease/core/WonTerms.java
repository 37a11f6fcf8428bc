package io.redlease.core;

import io.redlease.core.Observer.Operation;

/**
 * What happens between winning the lease and starting the term: the replicas' acknowledgement when
 * one is configured, or giving up a won lease (a token at 2^53, unacknowledged replicas, a stop in
 * the same instant). Confined to the run's loop.
 */
final class WonTerms {

    private final Campaign campaign;

    private final ElectorConfig config;

    WonTerms(Campaign campaign, ElectorConfig config) {
        this.campaign = campaign;
        this.config = config;
    }

    /** Starts a won term: at once, or once the replicas have acknowledged it when so configured. */
    void start(long token, long sentAt) {
        if (config.replicaAcknowledgements() > 0) {
            confirm(token, sentAt);
        } else {
            campaign.lead(token, sentAt);
        }
    }

    /**
     * Gives up a won term whose token is 2^53 or more. Lua compares tokens as doubles: from 2^53 on
     * the fence is no longer exact, and every fenced write of such a term is refused.
     */
    void tokenExhausted(long token) {
        abandon(
                token,
                new IllegalStateException(
                        "redlease: the token counter of '"
                                + config.name()
                                + "' reached "
                                + token
                                + ", at or above 2^53; reset <name>:fence and"
                                + " <name>:fence:applied below it"));
    }

    /**
     * Waits for replicas to acknowledge a won term before starting it; a term they did not
     * acknowledge in time is released and reported as an acquire error.
     */
    private void confirm(long token, long sentAt) {
        int replicas = config.replicaAcknowledgements();
        campaign.roundTrips()
                .call(
                        () ->
                                ScriptRunner.Blocking.supply(
                                        () ->
                                                campaign.protocol.confirmReplicas(
                                                        token,
                                                        replicas,
                                                        config.replicaAcknowledgementTimeout())),
                        campaign.acquireTimeout,
                        true,
                        Operation.ACQUIRE,
                        "replica acknowledgement",
                        (acknowledged, error) -> {
                            if (acknowledged != null && acknowledged < 0) {
                                // The renewal found the lease gone or superseded: another won.
                                campaign.sleep(campaign.pacing.poll());
                            } else if (acknowledged != null && acknowledged >= replicas) {
                                if (campaign.stopRequested()) {
                                    releaseUnstarted(token);
                                } else {
                                    campaign.lead(token, sentAt);
                                }
                            } else {
                                abandon(
                                        token,
                                        error != null
                                                ? error
                                                : new ReplicaAcknowledgementException(
                                                        config.name(),
                                                        token,
                                                        acknowledged == null ? 0 : acknowledged,
                                                        replicas));
                            }
                        });
    }

    /**
     * Gives up a won lease without starting its term: reports why as an acquire error, releases the
     * lease and backs off as after a failed acquire.
     */
    void abandon(long token, Throwable why) {
        if (!campaign.stopRequested()) {
            campaign.notifyError(Operation.ACQUIRE, why);
        }
        long delay = campaign.pacing.afterError();
        campaign.release(token, error -> campaign.sleep(delay));
    }

    /** Releases a won term that never started because the run is stopping. */
    private void releaseUnstarted(long token) {
        campaign.release(token, error -> campaign.finish());
    }
}
