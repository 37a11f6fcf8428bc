package io.redlease.boot.test;

import io.redlease.core.Elector;
import java.util.Optional;
import org.assertj.core.api.AbstractAssert;

/**
 * AssertJ assertions on an {@link Elector}'s leadership; {@link #holdsTheLease()} and {@link
 * #doesNotHoldTheLease()} read the lease in Redis.
 */
public final class ElectorAssert extends AbstractAssert<ElectorAssert, Elector> {

    ElectorAssert(Elector actual) {
        super(actual, ElectorAssert.class);
    }

    /** Verifies that the elector leads its election. */
    public ElectorAssert isLeader() {
        isNotNull();
        if (!actual.isLeader()) {
            failWithMessage("Expected %s to lead <%s> but it does not", who(), actual.name());
        }
        return this;
    }

    /** Verifies that the elector takes part in its election and does not lead it. */
    public ElectorAssert isFollower() {
        isNotNull();
        if (!actual.isRunning() || actual.isLeader()) {
            failWithMessage(
                    "Expected %s to follow in <%s> but it %s",
                    who(), actual.name(), actual.isRunning() ? "leads" : "is stopped");
        }
        return this;
    }

    /** Verifies that the elector is stopped. */
    public ElectorAssert isStopped() {
        isNotNull();
        if (actual.isRunning()) {
            failWithMessage("Expected %s to be stopped but it is running", who());
        }
        return this;
    }

    /**
     * Verifies that the elector leads with the given fencing token.
     *
     * @param token the expected token
     */
    public ElectorAssert hasToken(long token) {
        isNotNull();
        if (actual.token().isEmpty() || actual.token().getAsLong() != token) {
            failWithMessage(
                    "Expected %s to lead with token <%s> but its token is <%s>",
                    who(), token, actual.token());
        }
        return this;
    }

    /** Verifies that the lease in Redis holds this elector's instance id. */
    public ElectorAssert holdsTheLease() {
        isNotNull();
        Optional<String> holder = holder();
        if (!holder.filter(actual.instanceId()::equals).isPresent()) {
            failWithMessage(
                    "Expected the lease of <%s> to hold <%s> but it holds %s",
                    actual.name(),
                    actual.instanceId(),
                    holder.map(id -> "<" + id + ">").orElse("nothing"));
        }
        return this;
    }

    /** Verifies that the lease in Redis does not hold this elector's instance id. */
    public ElectorAssert doesNotHoldTheLease() {
        isNotNull();
        if (holder().filter(actual.instanceId()::equals).isPresent()) {
            failWithMessage(
                    "Expected the lease of <%s> not to hold <%s> but it does",
                    actual.name(), actual.instanceId());
        }
        return this;
    }

    private Optional<String> holder() {
        return actual.holder().map(Elector.LeaseHolder::instanceId);
    }

    private String who() {
        return "instance <" + actual.instanceId() + ">";
    }
}
