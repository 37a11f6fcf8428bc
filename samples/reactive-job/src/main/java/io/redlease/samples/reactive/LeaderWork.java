package io.redlease.samples.reactive;

import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import java.util.concurrent.CompletableFuture;
import org.springframework.scheduling.annotation.Async;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** Work only the leader does, reactive and asynchronous. */
@Service
public class LeaderWork {

    private final LeadershipContext leadership;

    public LeaderWork(LeadershipContext leadership) {
        this.leadership = leadership;
    }

    /**
     * Answers with the token of the term it ran in, seen from another thread of the pipeline; on a
     * follower the subscription fails with a {@code NotLeaderException}.
     */
    @LeaderOnly(whenNotLeader = WhenNotLeader.REJECT)
    public Mono<Long> token() {
        return Mono.fromCallable(() -> leadership.boundTerm().map(Term::token).orElseThrow())
                .subscribeOn(Schedulers.boundedElastic());
    }

    /** The same on an {@code @Async} executor, whose tasks carry the term. */
    @Async
    @LeaderOnly
    public CompletableFuture<Long> tokenAsync() {
        return CompletableFuture.completedFuture(
                leadership.boundTerm().map(Term::token).orElse(0L));
    }
}
