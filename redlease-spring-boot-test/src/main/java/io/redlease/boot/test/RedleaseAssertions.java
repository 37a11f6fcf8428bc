package io.redlease.boot.test;

import io.redlease.core.Elector;

/** Entry point for AssertJ assertions on redlease types. */
public final class RedleaseAssertions {

    private RedleaseAssertions() {}

    /**
     * Starts an assertion on an elector's leadership.
     *
     * @param elector the elector
     * @return the assertion
     */
    public static ElectorAssert assertThat(Elector elector) {
        return new ElectorAssert(elector);
    }
}
