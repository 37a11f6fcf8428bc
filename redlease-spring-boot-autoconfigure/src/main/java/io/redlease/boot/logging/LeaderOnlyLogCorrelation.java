package io.redlease.boot.logging;

import io.redlease.core.Slot;
import io.redlease.core.annotation.LeaderOnlyRun;
import io.redlease.core.annotation.LeaderOnlyRunListener;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import org.slf4j.MDC;

/**
 * Puts a leader-only run's election, token, partition and slot in the logging context (SLF4J's MDC)
 * on the thread that runs it, while it runs, and puts back what was there after: a nested run shows
 * its own, and the outer run's come back when it ends. Keys with no value for a run (the partition
 * of a single election's run, the slot outside a once-per-slot run) are removed while it runs.
 *
 * <p>The keys follow Spring Boot's correlation keys ({@code traceId}, {@code spanId}): {@value
 * #ELECTION}, {@value #TOKEN}, {@value #PARTITION} and {@value #SLOT}, for example in {@code
 * logging.pattern.correlation}.
 */
public class LeaderOnlyLogCorrelation implements LeaderOnlyRunListener {

    /** The MDC key of the election. */
    public static final String ELECTION = "redleaseElection";

    /** The MDC key of the term's fencing token. */
    public static final String TOKEN = "redleaseToken";

    /** The MDC key of the partition. */
    public static final String PARTITION = "redleasePartition";

    /** The MDC key of the once-per-slot run's slot (ISO-8601). */
    public static final String SLOT = "redleaseSlot";

    private static final String[] KEYS = {ELECTION, TOKEN, PARTITION, SLOT};

    @Override
    public @Nullable Object around(LeaderOnlyRun run, Callable<@Nullable Object> proceed)
            throws Exception {
        String[] previous = new String[KEYS.length];
        for (int i = 0; i < KEYS.length; i++) {
            previous[i] = MDC.get(KEYS[i]);
        }
        Integer partition = run.partition();
        Slot slot = run.slot();
        put(ELECTION, run.election());
        put(TOKEN, Long.toString(run.token()));
        put(PARTITION, partition != null ? partition.toString() : null);
        put(SLOT, slot != null ? slot.time().toString() : null);
        try {
            return proceed.call();
        } finally {
            for (int i = 0; i < KEYS.length; i++) {
                put(KEYS[i], previous[i]);
            }
        }
    }

    private static void put(String key, @Nullable String value) {
        if (value == null) {
            MDC.remove(key);
        } else {
            MDC.put(key, value);
        }
    }

    @Override
    public String toString() {
        return "LeaderOnlyLogCorrelation";
    }
}
