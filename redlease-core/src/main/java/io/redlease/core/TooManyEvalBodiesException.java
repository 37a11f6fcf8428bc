package io.redlease.core;

/**
 * Thrown by a fenced eval when the elector already holds the maximum number of distinct Lua bodies
 * (256), before any Redis call.
 *
 * <p>It signals a bug in the caller: variable data is being written into the body. Keep bodies
 * constant and pass variable data through the keys and arguments; do not retry.
 */
public class TooManyEvalBodiesException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /** Maximum number of distinct fenced-eval bodies one elector caches. */
    public static final int CAP = 256;

    TooManyEvalBodiesException() {
        super(
                "redlease: too many distinct FenceEval bodies; keep bodies constant and pass"
                        + " variable data through writeKeys and args (cap "
                        + CAP
                        + ")");
    }
}
