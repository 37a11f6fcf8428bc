package io.redlease.boot.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.redlease.boot.event.PartitionAssignedEvent;
import io.redlease.boot.event.PartitionEvent;
import io.redlease.boot.event.PartitionRevokedEvent;
import io.redlease.core.Elections;
import io.redlease.core.StepDownReason;
import io.redlease.core.partition.PartitionedElection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationListener;

/**
 * Micrometer meters of partitioned elections, tagged {@value #TAG_NAME} (the partitioned election's
 * name shared in Redis):
 *
 * <ul>
 *   <li>{@value #OWNED}: gauge of the partitions this instance holds;
 *   <li>{@value #IMBALANCE}: gauge of the partitions held minus this instance's fair share
 *       (positive while it holds surplus, negative while short; NaN before the first balancing
 *       round);
 *   <li>{@value #MEMBERS}: gauge of the live members this instance counts;
 *   <li>{@value #MOVES}: counter of partitions gained and lost, tag {@value #TAG_DIRECTION}
 *       (assigned, revoked) and {@value #TAG_REASON} ("elected" for an assignment, else the
 *       step-down reason: shutdown for a hand-over or a close, lost, expired, ...).
 * </ul>
 *
 * <p>Counted from the partition events, so it is an application listener as well as a binder.
 */
public final class PartitionMetrics implements MeterBinder, ApplicationListener<PartitionEvent> {

    /** Gauge: partitions held by this instance. */
    public static final String OWNED = "redlease.partitions.owned";

    /** Gauge: partitions held minus the fair share. */
    public static final String IMBALANCE = "redlease.partitions.imbalance";

    /** Gauge: live members counted. */
    public static final String MEMBERS = "redlease.partitions.members";

    /** Counter: partitions gained and lost. */
    public static final String MOVES = "redlease.partitions.moves";

    /** Tag: the partitioned election's name. */
    public static final String TAG_NAME = "name";

    /** Tag: assigned or revoked. */
    public static final String TAG_DIRECTION = "direction";

    /** Tag: why a partition moved. */
    public static final String TAG_REASON = "reason";

    private static final String ELECTED = "elected";

    private final Supplier<@Nullable Elections> elections;

    private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

    /**
     * Creates the meters.
     *
     * @param elections supplies the application's elections, looked up when bound; null when there
     *     are none
     */
    public PartitionMetrics(Supplier<@Nullable Elections> elections) {
        this.elections = elections;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        registries.add(registry);
        Elections found = elections.get();
        if (found == null) {
            return;
        }
        for (PartitionedElection election : found.partitionedAsMap().values()) {
            String name = election.name();
            Gauge.builder(OWNED, election, e -> e.owned().size())
                    .tag(TAG_NAME, name)
                    .description("Partitions this instance holds")
                    .baseUnit("partitions")
                    .register(registry);
            Gauge.builder(IMBALANCE, election, PartitionMetrics::imbalance)
                    .tag(TAG_NAME, name)
                    .description("Partitions this instance holds minus its fair share")
                    .baseUnit("partitions")
                    .register(registry);
            Gauge.builder(MEMBERS, election, e -> e.members().size())
                    .tag(TAG_NAME, name)
                    .description("Live members of the partitioned election")
                    .register(registry);
            moves(registry, name, "assigned", ELECTED);
            for (StepDownReason reason : StepDownReason.values()) {
                moves(registry, name, "revoked", reason.tagValue());
            }
        }
    }

    private static double imbalance(PartitionedElection election) {
        int share = election.share();
        return share < 0 ? Double.NaN : election.owned().size() - share;
    }

    @Override
    public void onApplicationEvent(PartitionEvent event) {
        String name = event.getElection().name();
        boolean assigned = event instanceof PartitionAssignedEvent;
        String reason =
                event instanceof PartitionRevokedEvent revoked
                        ? revoked.getReason().tagValue()
                        : ELECTED;
        for (MeterRegistry registry : registries) {
            moves(registry, name, assigned ? "assigned" : "revoked", reason).increment();
        }
    }

    private static Counter moves(
            MeterRegistry registry, String name, String direction, String reason) {
        return Counter.builder(MOVES)
                .tag(TAG_NAME, name)
                .tag(TAG_DIRECTION, direction)
                .tag(TAG_REASON, reason)
                .description("Partitions gained and lost by this instance")
                .register(registry);
    }
}
