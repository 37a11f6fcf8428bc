package io.redlease.core;

import org.springframework.dao.DataAccessResourceFailureException;

/**
 * Reported (as an acquire error) when fewer replicas than configured acknowledged a won term in
 * time; the term was not started and its lease was released.
 */
public class ReplicaAcknowledgementException extends DataAccessResourceFailureException {

    private static final long serialVersionUID = 1L;

    ReplicaAcknowledgementException(String name, long token, long acknowledged, int required) {
        super(
                "redlease: term "
                        + token
                        + " of '"
                        + name
                        + "' was acknowledged by "
                        + acknowledged
                        + " replica(s), "
                        + required
                        + " required; not started");
    }
}
