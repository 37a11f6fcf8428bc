package io.redlease.samples.partitioned;

import io.redlease.core.Fencer;
import io.redlease.core.LeadershipContext;
import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.partition.PartitionedElection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The partitioned job: on every tick, each partition this instance owns syncs its tenants and
 * records the sync through that partition's fence.
 *
 * <p>A tenant belongs to partition {@code partitionOf(tenant)}, the same on every instance. The
 * record is written with the partition's own token: an instance that lost the partition (its lease
 * lapsed while it was paused, say) is refused by Redis, whatever it still believes.
 */
@Component
public class TenantSync {

    /** The partitioned election's id: {@code redlease.partitions.tenants.*}. */
    static final String PARTITIONS = "tenants";

    /**
     * Records the sync in the partition's hash (token, instance, tenants, count of syncs) and, at a
     * term's first sync, appends {@code token:instance} to the partition's list of terms.
     */
    static final String RECORD =
            """
            if redis.call('HGET', KEYS[2], 'token') ~= ARGV[2] then
              redis.call('RPUSH', KEYS[3], ARGV[2] .. ':' .. ARGV[3])
            end
            redis.call('HSET', KEYS[2], 'token', ARGV[2], 'instance', ARGV[3], 'tenants', ARGV[4])
            redis.call('HINCRBY', KEYS[2], 'syncs', 1)
            """;

    private final LeadershipContext leadership;

    private final PartitionedElection election;

    private final DemoEvents events;

    private final List<List<String>> tenantsByPartition = new ArrayList<>();

    /** The token of each partition's last reported sync, so a term reports only its first. */
    private final Map<Integer, Long> reported = new ConcurrentHashMap<>();

    public TenantSync(
            LeadershipContext leadership,
            DemoEvents events,
            @Value("${sample.tenants:200}") int tenants) {
        this.leadership = leadership;
        this.election = leadership.partitions(PARTITIONS);
        this.events = events;
        for (int p = 0; p < election.partitionCount(); p++) {
            tenantsByPartition.add(new ArrayList<>());
        }
        for (int i = 1; i <= tenants; i++) {
            String tenant = String.format("tenant-%03d", i);
            tenantsByPartition.get(election.partitionOf(tenant)).add(tenant);
        }
    }

    /** Runs once per owned partition, with that partition's term bound. */
    @Scheduled(fixedDelayString = "${sample.sync.interval:500ms}")
    @LeaderOnly(partitions = PARTITIONS)
    public void sync() {
        int partition = leadership.partition().orElseThrow();
        Fencer fencer = leadership.requireFencer();
        List<String> tenants = tenantsByPartition.get(partition);
        // ... sync each tenant of the partition here ...
        String tag = election.electionName(partition);
        boolean applied =
                fencer.eval(
                        RECORD,
                        List.of(syncKey(partition), tag + ":terms"),
                        Long.toString(fencer.token()),
                        election.instanceId(),
                        Integer.toString(tenants.size()));
        if (!applied) {
            events.emit(election.instanceId(), "rejected", partition, fencer.token(), "");
        } else if (!Long.valueOf(fencer.token()).equals(reported.put(partition, fencer.token()))) {
            events.emit(
                    election.instanceId(),
                    "synced",
                    partition,
                    fencer.token(),
                    "tenants=" + tenants.size());
        }
    }

    /** Returns the tenants of a partition. */
    public List<String> tenants(int partition) {
        return List.copyOf(tenantsByPartition.get(partition));
    }

    /** Returns the key of a partition's sync record; it carries the partition's hash tag. */
    public String syncKey(int partition) {
        return election.electionName(partition) + ":sync";
    }
}
