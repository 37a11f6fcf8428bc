package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A normal start is quiet: opening the connection does not count against the first acquire's bound,
 * and an acquire that missed its bound but won at Redis becomes the term, so no token is burnt.
 */
@ExtendWith(RedisExtension.class)
class QuietStartTests {

    private final Templates templates = new Templates();

    private final List<AutoCloseable> closeables = new ArrayList<>();

    private String name;

    @BeforeEach
    void setUp(TestInfo info) {
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        templates.close();
    }

    private TcpProxy proxy(RedisServer server) {
        TcpProxy proxy = TcpProxy.start(server);
        closeables.add(proxy);
        return proxy;
    }

    private Elector elector(StringRedisTemplate redis, ElectorConfig.Builder config) {
        Elector elector = new Elector(redis, config.build());
        closeables.add(elector);
        return elector;
    }

    @Test
    void aSlowFirstConnectionCostsNeitherAnErrorNorAToken(RedisServer server) throws Exception {
        TcpProxy proxy = proxy(server);
        proxy.blackhole();
        StringRedisTemplate redis = templates.withoutClientTimeouts(proxy.host(), proxy.port());
        Recorder recorder = new Recorder();
        Duration ttl = Duration.ofSeconds(2);
        Elector elector =
                elector(
                        redis,
                        ElectorConfig.builder(name).ttl(ttl).instanceId("a").observer(recorder));
        elector.start();
        // The client's handshake is held at the proxy, as on a cold, loaded machine.
        await().until(() -> proxy.heldChunks() > 0);
        // A sleep that only opens the fault window: the connection takes longer than the TTL.
        Thread.sleep(ttl.plusMillis(500).toMillis());
        proxy.pass();
        assertThat(recorder.await("elected", 1).token()).isEqualTo(1);
        assertThat(recorder.events("error")).isEmpty();
        assertThat(templates.on(server).opsForValue().get(name + ":fence")).isEqualTo("1");
    }

    @Test
    void anAcquireThatMissedItsBoundButWonIsTheTerm(RedisServer server) {
        StringRedisTemplate direct = templates.on(server);
        direct.opsForValue().set(name + ":leader", "other", Duration.ofMinutes(1));
        TcpProxy proxy = proxy(server);
        StringRedisTemplate redis = templates.withoutClientTimeouts(proxy.host(), proxy.port());
        Recorder recorder = new Recorder();
        // Acquire timeout min(1 s, 3 s - 500 ms) = 1 s; a term must start within 2.5 s of its send.
        Elector elector =
                elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(3))
                                .renewInterval(Duration.ofMillis(500))
                                .acquireInterval(Duration.ofSeconds(1))
                                .instanceId("b")
                                .observer(recorder));
        elector.start();
        recorder.await("follower", 1);
        await().until(elector::idleFollower);
        // Each round trip now takes 1.2 s, more than the acquire timeout; the lease is free.
        proxy.delay(Duration.ofMillis(600));
        direct.delete(name + ":leader");
        Recorder.Event missed = recorder.await("error", 1);
        assertThat(((Recorder.ErrorDetail) missed.detail()).operation())
                .isEqualTo(Operation.ACQUIRE);
        assertThat(((Recorder.ErrorDetail) missed.detail()).error())
                .isInstanceOf(QueryTimeoutException.class);
        proxy.pass();
        // The acquire won at Redis with token 1: that is the term, no second token is minted.
        assertThat(recorder.await("elected", 1).token()).isEqualTo(1);
        assertThat(direct.opsForValue().get(name + ":fence")).isEqualTo("1");
        assertThat(elector.fencer().orElseThrow().set(name + ":state", "written")).isTrue();
    }

    @Test
    void theFirstOutcomeIsKnownOnceTheFirstAttemptHasBeenMade(RedisServer server) throws Exception {
        StringRedisTemplate redis = templates.on(server);
        Elector a = elector(redis, ElectorConfig.builder(name).instanceId("a"));
        Elector b = elector(redis, ElectorConfig.builder(name).instanceId("b"));
        assertThat(a.firstOutcome()).isCompletedWithValue(false);
        Elector elector = a;
        // tag::first-outcome[]
        elector.start();
        // At most the connect timeout plus the TTL: 15 s with the defaults.
        boolean leads = elector.firstOutcome().get(15, TimeUnit.SECONDS);
        // end::first-outcome[]
        assertThat(leads).isTrue();
        // The term is published by then: leader-only work can start at once.
        assertThat(a.isLeader()).isTrue();
        b.start();
        assertThat(b.firstOutcome().get(10, TimeUnit.SECONDS)).isFalse();
        assertThat(b.isLeader()).isFalse();
        assertThat(b.leaseHeld()).isTrue();
        // What a caller does with its copy does not touch the run's.
        b.firstOutcome().complete(true);
        assertThat(b.firstOutcome()).isCompletedWithValue(false);
    }

    @Test
    void anUnreachableRedisEndsTheWaitForTheFirstOutcome() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        StringRedisTemplate redis =
                templates.on("127.0.0.1", closedPort, null, Duration.ofSeconds(10));
        Recorder recorder = new Recorder();
        Elector elector =
                elector(redis, ElectorConfig.builder(name).instanceId("a").observer(recorder));
        elector.start();
        // Refused at once: the outcome does not wait for the connect timeout.
        assertThat(
                        elector.firstOutcome()
                                .get(
                                        ElectorConfig.DEFAULT_CONNECT_TIMEOUT.toSeconds(),
                                        TimeUnit.SECONDS))
                .isFalse();
        Recorder.Event error = recorder.await("error", 1);
        assertThat(((Recorder.ErrorDetail) error.detail()).operation())
                .isEqualTo(Operation.ACQUIRE);
        assertThat(elector.redisFailure()).isPresent();
    }

    @Test
    void aFollowerIsToldWhichInstanceLeads(RedisServer server) {
        StringRedisTemplate redis = templates.on(server);
        redis.opsForValue().set(name + ":leader", "web-2-0a1b2c3d4e5f6a7b", Duration.ofMinutes(1));
        List<String> holders = new CopyOnWriteArrayList<>();
        Observer observer =
                new Observer() {
                    @Override
                    public void onFollower(String holder) {
                        holders.add(holder);
                    }
                };
        Recorder recorder = new Recorder();
        Elector elector =
                elector(
                        redis,
                        ElectorConfig.builder(name)
                                .instanceId("b")
                                .observer(observer)
                                .observer(recorder));
        elector.start();
        // An observer that only knows the old callback still hears it.
        recorder.await("follower", 1);
        await().until(() -> !holders.isEmpty());
        assertThat(holders).containsExactly("web-2-0a1b2c3d4e5f6a7b");
    }

    @Test
    void anElectorOnConnectionsItDoesNotShareConnectsThenLeads(RedisServer server)
            throws Exception {
        // Lettuce without a shared connection: the engine's reactive runner, which connects
        // with a PING on the blocking pool before the first acquire.
        LettuceConnectionFactory factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.setShareNativeConnection(false);
        factory.afterPropertiesSet();
        factory.start();
        closeables.add(factory::destroy);
        StringRedisTemplate redis = new StringRedisTemplate(factory);
        redis.afterPropertiesSet();
        Recorder recorder = new Recorder();
        Elector elector =
                elector(redis, ElectorConfig.builder(name).instanceId("a").observer(recorder));
        elector.start();
        assertThat(elector.firstOutcome().get(15, TimeUnit.SECONDS)).isTrue();
        assertThat(elector.token()).hasValue(1);
        assertThat(recorder.events("error")).isEmpty();
    }
}
