package io.redlease.core.annotation;

import io.redlease.core.annotation.LeaderOnlySkipListener.MethodRef;
import io.redlease.core.annotation.LeaderOnlySkipListener.Reason;
import java.lang.reflect.Method;
import java.util.List;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/** Tells the {@link LeaderOnlySkipListener}s of a skipped call, isolating their failures. */
final class SkipReports {

    private static final Log logger = LogFactory.getLog(LeaderOnlySkipListener.class);

    private final Supplier<List<LeaderOnlySkipListener>> listeners;

    SkipReports(Supplier<List<LeaderOnlySkipListener>> listeners) {
        this.listeners = listeners;
    }

    void skipped(String election, @Nullable Class<?> targetClass, Method method, Reason reason) {
        List<LeaderOnlySkipListener> current = listeners.get();
        if (current.isEmpty()) {
            return;
        }
        MethodRef ref =
                new MethodRef(
                        election,
                        targetClass != null ? targetClass : method.getDeclaringClass(),
                        method);
        for (LeaderOnlySkipListener listener : current) {
            try {
                listener.onSkipped(ref, reason);
            } catch (RuntimeException ex) {
                logger.warn(
                        "redlease: LeaderOnlySkipListener "
                                + listener
                                + " failed for a skipped call of "
                                + ref.name(),
                        ex);
            }
        }
    }
}
