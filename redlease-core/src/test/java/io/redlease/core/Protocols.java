package io.redlease.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Drives an elector's protocol one round trip at a time, waiting for each reply. */
final class Protocols {

    /** A token at or above every token a test mints: a release that ignores the term. */
    static final long ANY_TERM = LeaseProtocol.MAX_TOKEN - 1;

    private Protocols() {}

    static LeaseProtocol.AcquireReply acquire(Elector elector) {
        return await(elector.protocol().acquire());
    }

    static boolean renew(Elector elector, long token) {
        return await(elector.protocol().renew(token));
    }

    static boolean release(Elector elector, long token) {
        return await(elector.protocol().release(token));
    }

    static boolean release(Elector elector) {
        return release(elector, ANY_TERM);
    }

    static <T> T await(CompletableFuture<T> reply) {
        try {
            return reply.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(ex.getCause());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        } catch (TimeoutException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
