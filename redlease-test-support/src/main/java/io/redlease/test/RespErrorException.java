package io.redlease.test;

/**
 * An error reply from Redis, such as {@code WRONGTYPE Operation against a key holding the wrong
 * kind of value}.
 *
 * <p>The connection that received it stays usable.
 */
public final class RespErrorException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception for the given error reply text.
     *
     * @param message the error text as Redis sent it, without the leading {@code -}
     */
    public RespErrorException(String message) {
        super(message);
    }

    /**
     * Returns the error code: the first word of the error text, for example {@code WRONGTYPE},
     * {@code NOAUTH} or {@code ERR}.
     *
     * @return the first word of the error text
     */
    public String code() {
        String message = getMessage();
        int space = message.indexOf(' ');
        return space < 0 ? message : message.substring(0, space);
    }

    @Override
    public String getMessage() {
        String message = super.getMessage();
        return message == null ? "" : message;
    }
}
