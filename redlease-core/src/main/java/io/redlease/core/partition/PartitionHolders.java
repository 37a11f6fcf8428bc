package io.redlease.core.partition;

import io.redlease.core.Elector;
import java.util.ArrayList;
import java.util.List;
import org.springframework.data.redis.core.RedisOperations;

/** Reads every partition's holder and newest token from Redis, for display. */
final class PartitionHolders {

    private PartitionHolders() {}

    /**
     * Reads each partition's lease holder and its fence counter: two round trips per partition, a
     * snapshot that may be stale by the time it returns.
     *
     * @throws org.springframework.dao.DataAccessException if Redis fails
     */
    static List<PartitionHolder> read(RedisOperations<String, String> redis, Elector[] electors) {
        List<PartitionHolder> holders = new ArrayList<>(electors.length);
        for (int partition = 0; partition < electors.length; partition++) {
            Elector.LeaseHolder holder = electors[partition].holder().orElse(null);
            String token = redis.opsForValue().get(electors[partition].name() + ":fence");
            holders.add(
                    new PartitionHolder(
                            partition,
                            holder == null ? null : holder.instanceId(),
                            token == null ? null : Long.valueOf(token),
                            holder == null ? null : holder.remaining()));
        }
        return holders;
    }
}
