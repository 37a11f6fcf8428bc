package io.redlease.core;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;

/**
 * Calls the {@link BeforeRelease} hooks of a gracefully ended term on the election's lane and
 * reports each one's completion back to the loop.
 */
final class ReleaseHooks {

    private ReleaseHooks() {}

    /** Returns whether a term that ended for this reason waits for the hooks before its release. */
    static boolean graceful(StepDownReason reason) {
        return switch (reason) {
            case LOST, EXPIRED, INTERNAL_ERROR -> false;
            default -> true;
        };
    }

    /**
     * Calls every hook with the term, on the lane; {@code done} runs on the loop once per hook,
     * when its stage completes or it fails.
     */
    static void call(Campaign campaign, List<BeforeRelease> hooks, Term term, Runnable done) {
        campaign.notify(
                "beforeRelease",
                () -> {
                    for (BeforeRelease hook : hooks) {
                        CompletionStage<?> stage;
                        try {
                            stage = hook.beforeRelease(term);
                        } catch (Throwable ex) {
                            failed(campaign, term, hook, ex);
                            completed(campaign, done);
                            continue;
                        }
                        if (stage == null) {
                            completed(campaign, done);
                            continue;
                        }
                        stage.whenComplete(
                                (result, error) -> {
                                    if (error != null) {
                                        failed(campaign, term, hook, error);
                                    }
                                    completed(campaign, done);
                                });
                    }
                });
    }

    private static void completed(Campaign campaign, Runnable done) {
        try {
            campaign.execute(done);
        } catch (RejectedExecutionException ex) {
            // The run has ended meanwhile: its lease is no longer waited for.
        }
    }

    private static void failed(Campaign campaign, Term term, BeforeRelease hook, Throwable error) {
        Campaign.logger.warn(
                "redlease: the before-release hook "
                        + hook
                        + " of '"
                        + campaign.elector.name()
                        + "' term "
                        + term.token()
                        + " failed; releasing the lease anyway",
                error);
    }
}
