package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.boot.autoconfigure.ElectorCustomizer;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Observer;
import io.redlease.core.StepDownReason;
import io.redlease.jdbc.FenceClaims;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Has every elector the auto-configuration builds claim the fence rows as soon as it wins a term,
 * and remembers which elections it reached, so that an elector built elsewhere (an {@code Elector}
 * bean of the application) can be named in a warning. The claims are looked up at the first
 * election, after the context started, since the fence table needs the elections.
 */
final class FenceClaimsCustomizer implements ElectorCustomizer {

    private final ObjectProvider<FenceClaims> claims;

    private final Set<String> claiming = ConcurrentHashMap.newKeySet();

    FenceClaimsCustomizer(ObjectProvider<FenceClaims> claims) {
        this.claims = claims;
    }

    @Override
    public void customize(String electionId, ElectorConfig.Builder builder) {
        claiming.add(builder.name());
        builder.observer(new ClaimingObserver(builder.name(), claims));
    }

    /** Whether the electors of an election claim the fence rows. */
    boolean claims(String electionName) {
        return claiming.contains(electionName);
    }

    /** Hands an election's term transitions to the claims, once they exist. */
    private static final class ClaimingObserver implements Observer {

        private final String electionName;

        private final ObjectProvider<FenceClaims> claims;

        private @Nullable Observer delegate;

        ClaimingObserver(String electionName, ObjectProvider<FenceClaims> claims) {
            this.electionName = electionName;
            this.claims = claims;
        }

        @Override
        public void onElected(long token) {
            Observer observer = delegate;
            if (observer == null) {
                FenceClaims available = claims.getIfAvailable();
                if (available == null) {
                    return;
                }
                observer = available.observer(electionName);
                delegate = observer;
            }
            observer.onElected(token);
        }

        @Override
        public void onSteppedDown(StepDownReason reason) {
            Observer observer = delegate;
            if (observer != null) {
                observer.onSteppedDown(reason);
            }
        }

        @Override
        public String toString() {
            return "FenceClaims[" + electionName + "]";
        }
    }
}
