package io.redlease.docs.partitions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Fencer;
import io.redlease.core.StepDownReason;
import io.redlease.core.partition.PartitionListener;
import io.redlease.core.partition.PartitionedElection;
import io.redlease.core.partition.PartitionedElectionConfig;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/** A partitioned election without Spring Boot (docs/partitions.md). */
@ExtendWith(RedisExtension.class)
class PartitionedElectionTests {

    /**
     * Bounds the waits that include a first election: on a loaded machine the first acquire can
     * wait a whole TTL (5 s) for its reply and time out, and the next one comes after that.
     */
    private static final Duration FIRST_ELECTION = Duration.ofMinutes(1);

    private static final Logger log = LoggerFactory.getLogger(PartitionedElectionTests.class);

    @Test
    void aLoneInstanceHoldsEveryPartitionAndWritesThroughEachOnesFence(RedisServer server) {
        LettuceConnectionFactory connectionFactory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        connectionFactory.afterPropertiesSet();
        connectionFactory.start();
        try {
            // tag::start[]
            PartitionedElection orders =
                    new PartitionedElection(
                            connectionFactory,
                            PartitionedElectionConfig.builder(
                                            "orders", 16) // same on every instance
                                    .ttl(Duration.ofSeconds(5))
                                    .listener(
                                            new PartitionListener() {
                                                @Override
                                                public void onAssigned(int partition, long token) {
                                                    log.info("got p{}, token {}", partition, token);
                                                }

                                                @Override
                                                public void onRevoked(
                                                        int partition,
                                                        long token,
                                                        StepDownReason reason) {
                                                    log.info("lost p{}: {}", partition, reason);
                                                }
                                            })
                                    .build());
            orders.start();
            // end::start[]
            await().atMost(FIRST_ELECTION).until(() -> orders.owned().size() == 16);
            String tenantId = "tenant-42";
            // tag::write[]
            int partition = orders.partitionOf(tenantId); // the same on every instance
            Fencer fencer = orders.fencer(partition).orElse(null); // null unless held here
            if (fencer != null) {
                String state = orders.electionName(partition) + ":state"; // {orders:p<i>}:state
                fencer.hsetOrThrow(state, tenantId, "settled"); // throws if the partition moved on
            }
            // end::write[]
            StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
            assertThat(redis.opsForHash().get("{orders:p" + partition + "}:state", tenantId))
                    .isEqualTo("settled");
            // tag::close[]
            orders.close(); // leaves, hands every partition over, releases
            // end::close[]
            assertThat(orders.owned()).isEmpty();
        } finally {
            connectionFactory.destroy();
        }
    }
}
