package io.redlease.test;

/**
 * Thrown when a test needs a server that cannot be had: no binary, no environment variable naming
 * one, no Docker. Its message is one line saying what to install; it carries no stack trace, so a
 * test run reports that line and nothing else.
 */
public final class MissingServerException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message one line naming what to install or set
     */
    public MissingServerException(String message) {
        super(message);
    }

    /**
     * Returns this exception without recording a stack trace: where it was thrown says nothing the
     * message does not.
     *
     * @return this exception
     */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
