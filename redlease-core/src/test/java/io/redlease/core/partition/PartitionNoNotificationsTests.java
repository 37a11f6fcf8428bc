package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.RespClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Instances whose Redis user may not subscribe or publish to any channel hear no release and
 * announce no join or leave: a leaver's partitions are still taken over, by the balancing rounds,
 * each by one instance, and the member set is kept all the same.
 */
@ExtendWith(RedisExtension.class)
class PartitionNoNotificationsTests {

    private static final int PARTITIONS = 10;

    private final List<LettuceConnectionFactory> factories = new ArrayList<>();

    private final List<PartitionedElection> instances = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(@Dedicated RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Connections.unique(info);
        try (RespClient client = RespClient.connect(server.host(), server.port())) {
            client.command("ACL", "SETUSER", "deaf", "on", ">deaf", "~*", "resetchannels", "+@all");
        }
    }

    @AfterEach
    void tearDown() {
        instances.forEach(PartitionedElection::close);
        factories.forEach(LettuceConnectionFactory::destroy);
    }

    private PartitionedElection instance(String id) {
        PartitionedElection instance =
                new PartitionedElection(
                        deafTemplate(),
                        PartitionedElectionConfig.builder(name, PARTITIONS)
                                .ttl(Duration.ofSeconds(3))
                                .balanceInterval(Duration.ofMillis(200))
                                .instanceId(id)
                                .build());
        instances.add(instance);
        instance.start();
        return instance;
    }

    /** Operations as the user that may neither subscribe nor publish to any channel. */
    private StringRedisTemplate deafTemplate() {
        RedisStandaloneConfiguration standalone =
                new RedisStandaloneConfiguration(server.host(), server.port());
        standalone.setUsername("deaf");
        standalone.setPassword("deaf");
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(
                        standalone,
                        LettuceClientConfiguration.builder()
                                .commandTimeout(Duration.ofSeconds(10))
                                .build());
        factory.afterPropertiesSet();
        factory.start();
        factories.add(factory);
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        return template;
    }

    private static void awaitBalanced(List<PartitionedElection> live) {
        await().atMost(Duration.ofSeconds(20))
                .untilAsserted(
                        () -> {
                            Set<Integer> held = new TreeSet<>();
                            int min = Integer.MAX_VALUE;
                            int max = 0;
                            for (PartitionedElection instance : live) {
                                Set<Integer> owned = instance.owned();
                                min = Math.min(min, owned.size());
                                max = Math.max(max, owned.size());
                                for (int partition : owned) {
                                    assertThat(held.add(partition))
                                            .as("second holder of %d", partition)
                                            .isTrue();
                                }
                            }
                            assertThat(held).hasSize(PARTITIONS);
                            assertThat(max - min).isLessThanOrEqualTo(1);
                        });
    }

    @Test
    void aLeaversPartitionsAreTakenOverAtTheRoundsWhenNoReleaseIsHeard() {
        List<PartitionedElection> live =
                new ArrayList<>(List.of(instance("a"), instance("b"), instance("c")));
        awaitBalanced(live);
        PartitionedElection leaver = live.remove(1);

        leaver.close();

        awaitBalanced(live);
    }

    @Test
    void aMemberThatMayNotAnnounceItsJoinOrLeaveStillJoinsAndLeaves() {
        Duration interval = Duration.ofMillis(200);
        Membership member =
                new Membership(
                        deafTemplate(),
                        name,
                        "a",
                        Duration.ofSeconds(3),
                        interval,
                        interval,
                        System::nanoTime);

        assertThat(member.refresh()).containsExactly("a");
        member.leave();

        assertThat(member.live()).isEmpty();
    }
}
