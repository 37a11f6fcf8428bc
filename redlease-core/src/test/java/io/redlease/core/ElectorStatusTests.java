package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer.Operation;
import io.redlease.test.Dedicated;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * What an elector reports about itself and the lease (holder, Redis failures), the Cluster name
 * check and the opt-in replica acknowledgement.
 */
@ExtendWith(RedisExtension.class)
class ElectorStatusTests {

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private String name;

    @BeforeEach
    void setUp(TestInfo info) {
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        electors.forEach(Elector::close);
        templates.close();
    }

    private Elector elector(StringRedisTemplate redis, ElectorConfig.Builder builder) {
        Elector elector = new Elector(redis, builder.build());
        electors.add(elector);
        return elector;
    }

    private ElectorConfig.Builder config(String id, Recorder recorder) {
        return ElectorConfig.builder(name)
                .ttl(Duration.ofSeconds(1))
                .renewInterval(Duration.ofMillis(50))
                .acquireInterval(Duration.ofMillis(50))
                .instanceId(id)
                .observer(recorder);
    }

    @Test
    void holderReportsWhoLeadsAndForHowLong(RedisServer server) {
        StringRedisTemplate redis = templates.on(server);
        Recorder recorder = new Recorder();
        Elector a = elector(redis, config("a", recorder));
        Elector observer = elector(redis, config("watcher", new Recorder()));
        assertThat(observer.holder()).isEmpty();
        a.start();
        recorder.await("elected", 1);
        Elector.LeaseHolder holder = observer.holder().orElseThrow();
        assertThat(holder.instanceId()).isEqualTo("a");
        assertThat(holder.remaining()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(1));
        redis.opsForValue().set(name + ":leader", "forever");
        assertThat(observer.holder().orElseThrow().remaining()).isNull();
    }

    @Test
    void leaseHeldIsSeenByLeaderAndFollowersIncludingALeaseTheyDidNotWrite(RedisServer server) {
        StringRedisTemplate redis = templates.on(server);
        // A holder that exports nothing, such as a Go instance, holds the lease for a while.
        redis.opsForValue().set(name + ":leader", "go", Duration.ofMillis(1500));
        Recorder recorder = new Recorder();
        Elector follower = elector(redis, config("follower", recorder));
        assertThat(follower.leaseHeld()).isFalse();
        follower.start();
        recorder.await("follower", 1);
        assertThat(follower.leaseHeld()).isTrue();
        assertThat(follower.isLeader()).isFalse();
        // The foreign lease lapses: the follower wins, and as leader it sees its own lease.
        recorder.await("elected", 1);
        assertThat(follower.leaseHeld()).isTrue();
        follower.stop();
        assertThat(follower.leaseHeld()).isFalse();
    }

    @Test
    void leaseHeldTurnsFalseWhenAFollowersLookFails(RedisServer server) {
        TcpProxy proxy = TcpProxy.start(server);
        try {
            Recorder leaderEvents = new Recorder();
            elector(templates.on(server), config("leader", leaderEvents)).start();
            leaderEvents.await("elected", 1);
            Recorder recorder = new Recorder();
            Elector follower =
                    elector(
                            templates.on(proxy.host(), proxy.port(), null, Duration.ofMillis(200)),
                            config("follower", recorder));
            follower.start();
            recorder.await("follower", 1);
            assertThat(follower.leaseHeld()).isTrue();
            proxy.drop();
            proxy.cut();
            await().atMost(Duration.ofSeconds(10)).until(() -> !follower.leaseHeld());
            assertThat(follower.redisFailure()).isPresent();
        } finally {
            proxy.close();
        }
    }

    @Test
    void redisFailureIsReportedWhileRedisIsDownAndClearedWhenItAnswers(
            @Dedicated RedisServer server) {
        StringRedisTemplate redis = templates.on(server);
        Recorder recorder = new Recorder();
        Elector elector = elector(redis, config("a", recorder));
        assertThat(elector.redisFailure()).isEmpty();
        elector.start();
        recorder.await("elected", 1);
        assertThat(elector.redisFailure()).isEmpty();
        server.kill();
        await().until(() -> elector.redisFailure().isPresent());
        server.restart();
        await().atMost(Duration.ofSeconds(10)).until(() -> elector.redisFailure().isEmpty());
        elector.stop();
        assertThat(elector.redisFailure()).isEmpty();
    }

    @Test
    void aClusterNameWithoutAHashTagFailsFast() {
        LettuceConnectionFactory cluster =
                new LettuceConnectionFactory(new RedisClusterConfiguration(List.of("127.0.0.1:1")));
        cluster.afterPropertiesSet();
        try {
            StringRedisTemplate redis = new StringRedisTemplate(cluster);
            assertThatExceptionOfType(InvalidElectorConfigException.class)
                    .isThrownBy(() -> new Elector(redis, ElectorConfig.builder("reports").build()))
                    .withMessageContaining("hash tag")
                    .withMessageContaining("'{reports}'");
            assertThat(new Elector(redis, ElectorConfig.builder("{reports}").build()).name())
                    .isEqualTo("{reports}");
        } finally {
            cluster.destroy();
        }
    }

    @Test
    void hashTagRecognitionFollowsRedisCluster() {
        assertThat(Elector.hasHashTag("{a}")).isTrue();
        assertThat(Elector.hasHashTag("x{job}:y")).isTrue();
        assertThat(Elector.hasHashTag("{}job")).isFalse();
        assertThat(Elector.hasHashTag("job}{")).isFalse();
        assertThat(Elector.hasHashTag("job")).isFalse();
    }

    @Test
    void anUnacknowledgedTermIsNotStarted(RedisServer server) {
        // A lone server has no replica, so WAIT 1 always times out with 0.
        StringRedisTemplate redis = templates.on(server);
        Recorder recorder = new Recorder();
        Elector elector =
                elector(
                        redis,
                        config("a", recorder)
                                .acquireInterval(Duration.ofMillis(400))
                                .replicaAcknowledgement(1, Duration.ofMillis(20)));
        elector.start();
        recorder.awaitEvent(
                event ->
                        event.detail() instanceof Recorder.ErrorDetail detail
                                && detail.error() instanceof ReplicaAcknowledgementException);
        Recorder.ErrorDetail detail =
                recorder.errors(Operation.ACQUIRE).stream()
                        .map(event -> (Recorder.ErrorDetail) event.detail())
                        .filter(error -> error.error() instanceof ReplicaAcknowledgementException)
                        .findFirst()
                        .orElseThrow();
        assertThat(detail.error()).hasMessageContaining("acknowledged by 0 replica(s), 1 required");
        assertThat(recorder.count("elected")).isZero();
        assertThat(elector.isLeader()).isFalse();
        // The unconfirmed lease was released each time, so another instance can win.
        Recorder other = new Recorder();
        elector(redis, config("b", other)).start();
        assertThat(other.await("elected", 1, Duration.ofSeconds(5)).token()).isPositive();
    }

    @Test
    void anAcknowledgedTermStarts(
            @Dedicated(extraArgs = {"--repl-diskless-sync-delay", "0"}) RedisServer primary,
            @Dedicated RedisServer replica) {
        replica.command("REPLICAOF", primary.host(), Integer.toString(primary.port()));
        await().atMost(Duration.ofSeconds(10))
                .until(() -> primary.info("replication").contains("state=online"));
        StringRedisTemplate redis = templates.on(primary);
        Recorder recorder = new Recorder();
        Elector elector =
                elector(
                        redis,
                        config("a", recorder)
                                .acquireInterval(Duration.ofMillis(900))
                                .replicaAcknowledgement(1, Duration.ofMillis(500)));
        elector.start();
        long token = recorder.await("elected", 1).token();
        // The term started only after the replica confirmed it: the replica has its token.
        assertThat(Long.parseLong((String) replica.command("GET", name + ":fence")))
                .isGreaterThanOrEqualTo(token);
    }
}
