package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A closed registration's release channel leaves the shared subscription whatever the connection
 * does meanwhile: closed while the subscription is being built, or while the connection is lost and
 * then restored by the client, silent or flapping. From a hostile review of the close path.
 */
@ExtendWith(RedisExtension.class)
class ReleaseChannelCloseTests {

    private final Templates templates = new Templates();

    private final List<LettuceConnectionFactory> ownFactories = new ArrayList<>();

    private final List<TcpProxy> proxies = new ArrayList<>();

    private final List<ReleaseNotifications.Registration> registrations = new ArrayList<>();

    private final ExecutorService pool = Executors.newCachedThreadPool();

    /** Registrations that subscribe again after an interruption, as an election does. */
    private final List<ReleaseNotifications.Registration> restoring = new ArrayList<>();

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        for (ReleaseNotifications.Registration registration : registrations) {
            try {
                registration.close();
            } catch (RuntimeException ignored) {
                // Closed by the test already, or its connection is gone.
            }
        }
        pool.shutdownNow();
        ownFactories.forEach(LettuceConnectionFactory::destroy);
        proxies.forEach(TcpProxy::close);
        templates.close();
    }

    /**
     * A registration closed while a subscription that includes it is being built (here the
     * factory's first; a rebuild after a lost connection is the same): the build subscribed its
     * channel, and its close, waiting for the build, found it not subscribed and left it there.
     */
    @Test
    void aRegistrationClosedWhileTheSubscriptionIsBuiltLeavesNoChannel() throws Exception {
        BuildGate factory =
                new BuildGate(
                        new RedisStandaloneConfiguration(server.host(), server.port()),
                        LettuceClientConfiguration.builder()
                                .commandTimeout(Duration.ofSeconds(10))
                                .build());
        factory.afterPropertiesSet();
        factory.start();
        ownFactories.add(factory);
        String first = LeaseProtocol.releaseChannel(name + "-1");
        String second = LeaseProtocol.releaseChannel(name + "-2");
        ReleaseNotifications.Registration r1 = register(factory, List.of(first), null, false);
        ReleaseNotifications.Registration r2 = register(factory, List.of(second), null, false);
        factory.armed = true;
        Future<?> subscribing = pool.submit(r1::subscribe);
        assertThat(factory.entered.await(10, TimeUnit.SECONDS)).isTrue();
        AtomicReference<Thread> closer = new AtomicReference<>();
        Future<?> closing =
                pool.submit(
                        () -> {
                            closer.set(Thread.currentThread());
                            r2.close();
                        });
        // The close waits for the build.
        await().atMost(Duration.ofSeconds(5))
                .until(
                        () ->
                                closer.get() != null
                                        && closer.get().getState() == Thread.State.BLOCKED);
        factory.open.countDown();
        subscribing.get(10, TimeUnit.SECONDS);
        closing.get(10, TimeUnit.SECONDS);
        assertThat(subscribers(first)).isEqualTo(1);
        assertThat(subscribers(second)).as("channel of the registration closed meanwhile").isZero();
    }

    /**
     * Dropping a closed registration's channel that the client subscribed again waits for Redis; if
     * the connection goes silent right after the client restored it, that wait ends only at the
     * client's command timeout. It must not hold the subscription's changes lock that long, which
     * every subscribe and close of the factory's elections takes.
     */
    @Test
    void droppingAChannelOnASilentConnectionDoesNotHoldTheOthersUp() throws Exception {
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        RedisConnectionFactory factory =
                templates
                        .on(proxy.host(), proxy.port(), null, Duration.ofSeconds(30))
                        .getConnectionFactory();
        ReleaseNotifications.Registration first =
                register(factory, List.of(LeaseProtocol.releaseChannel(name + "-1")), null, false);
        closeWhileLostAndSilenceTheRestore(proxy, factory, first);
        Object changes = field(notificationsOf(factory), "changes");
        CountDownLatch taken = new CountDownLatch(1);
        Thread other =
                new Thread(
                        () -> {
                            synchronized (changes) {
                                taken.countDown();
                            }
                        });
        other.start();
        try {
            // The drop holds it at most 5 s (ADD_BOUND_MILLIS), not the client's 30 s.
            assertThat(taken.await(20, TimeUnit.SECONDS))
                    .as("another subscribe or close takes the changes lock while the drop waits")
                    .isTrue();
        } finally {
            proxy.pass();
            other.join(40_000);
            // Leaves no drop going on for the next test to see.
            await().atMost(Duration.ofSeconds(40)).until(() -> !dropping());
        }
    }

    /**
     * A connection that flaps while a closed registration's channel is dropped (restored, silent
     * until the drop's unsubscribe times out, lost and restored again): the client still tracks the
     * channel and subscribes it again, with no listener left to drop it. The connection is replaced
     * instead.
     */
    @Test
    void aConnectionFlappingWhileAChannelIsDroppedLeavesNoChannel() throws Exception {
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        RedisConnectionFactory factory =
                templates
                        .on(proxy.host(), proxy.port(), null, Duration.ofSeconds(3))
                        .getConnectionFactory();
        String first = LeaseProtocol.releaseChannel(name + "-1");
        String second = LeaseProtocol.releaseChannel(name + "-2");
        AtomicInteger heard = new AtomicInteger();
        ReleaseNotifications.Registration r1 = register(factory, List.of(first), heard, true);
        closeWhileLostAndSilenceTheRestore(proxy, factory, r1);
        // The drop's unsubscribe times out (3 s command timeout), then the connection is lost.
        await().atMost(Duration.ofSeconds(15)).until(() -> !dropping());
        proxy.cut();
        proxy.pass();
        // The client restores the first registration's channel, and the closed one's with it,
        // unless that connection was replaced; the first registration subscribes again then.
        await().atMost(Duration.ofSeconds(20))
                .until(() -> r1.subscribed() && subscribers(first) == 1);
        await().atMost(Duration.ofSeconds(20))
                .alias("closed registration's channel after the connection flapped")
                .until(() -> subscribers(second) == 0);
        server.command("PUBLISH", first, "other");
        await().atMost(Duration.ofSeconds(5)).until(() -> heard.get() == 1);
    }

    /**
     * Subscribes {@code kept} and a second registration (its channel {@code <name>-2}) on the
     * proxied factory, loses the connection, closes the second while it is lost, lets the client
     * restore the connection slowly and makes it silent right after: returns once a thread drops
     * the closed registration's channel, which the client subscribed again.
     */
    private void closeWhileLostAndSilenceTheRestore(
            TcpProxy proxy,
            RedisConnectionFactory factory,
            ReleaseNotifications.Registration kept) {
        ReleaseNotifications.Registration closed =
                register(
                        factory,
                        List.of(LeaseProtocol.releaseChannel(name + "-2")),
                        null,
                        restores(kept));
        kept.subscribe();
        closed.subscribe();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> kept.subscribed() && closed.subscribed());
        proxy.blackhole();
        proxy.cut();
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !kept.subscribed() && !closed.subscribed());
        closed.close();
        // The client restores slowly, so that the connection can go silent right after.
        proxy.delay(Duration.ofMillis(700));
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(1))
                .until(kept::subscribed);
        proxy.blackhole();
        await().atMost(Duration.ofSeconds(5))
                .pollInterval(Duration.ofMillis(1))
                .until(ReleaseChannelCloseTests::dropping);
    }

    /**
     * Registers a channel; one that {@code restores} subscribes again after an interruption, as an
     * election does.
     */
    private ReleaseNotifications.Registration register(
            RedisConnectionFactory factory,
            List<String> channels,
            AtomicInteger heard,
            boolean restores) {
        AtomicReference<ReleaseNotifications.Registration> self = new AtomicReference<>();
        ReleaseNotifications.Registration registration =
                ReleaseNotifications.register(
                        factory,
                        channels,
                        "a",
                        new ReleaseNotifications.Registration.Listener() {
                            @Override
                            public void released() {
                                if (heard != null) {
                                    heard.incrementAndGet();
                                }
                            }

                            @Override
                            public void subscribed() {}

                            @Override
                            public void interrupted(Throwable cause) {
                                if (restores) {
                                    restoreLater(self.get());
                                }
                            }
                        });
        self.set(registration);
        registrations.add(registration);
        if (restores) {
            restoring.add(registration);
        }
        return registration;
    }

    /**
     * Subscribes an interrupted registration again unless the client restored it meanwhile, as an
     * election does: after {@value Subscription#GRACE_MILLIS} ms, and again until it is subscribed.
     */
    private void restoreLater(ReleaseNotifications.Registration registration) {
        CompletableFuture.delayedExecutor(Subscription.GRACE_MILLIS, TimeUnit.MILLISECONDS, pool)
                .execute(
                        () -> {
                            if (registration.subscribed() || closed(registration)) {
                                return;
                            }
                            try {
                                registration.subscribe();
                            } catch (RuntimeException notYet) {
                                restoreLater(registration);
                            }
                        });
    }

    private static boolean closed(ReleaseNotifications.Registration registration) {
        try {
            return (Boolean) field(registration, "closed");
        } catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }

    private boolean restores(ReleaseNotifications.Registration registration) {
        return restoring.contains(registration);
    }

    private long subscribers(String channel) {
        List<?> reply = (List<?>) server.command("PUBSUB", "NUMSUB", channel);
        return (Long) reply.get(1);
    }

    /** Whether a thread drops a closed registration's channel now. */
    private static boolean dropping() {
        return Thread.getAllStackTraces().values().stream()
                .anyMatch(
                        frames ->
                                Arrays.stream(frames)
                                        .anyMatch(
                                                frame ->
                                                        frame.getMethodName()
                                                                .contains("dropLate")));
    }

    private static Object notificationsOf(RedisConnectionFactory factory) throws Exception {
        Field byFactory = ReleaseNotifications.class.getDeclaredField("byFactory");
        byFactory.setAccessible(true);
        Map<?, ?> map = (Map<?, ?>) byFactory.get(null);
        synchronized (map) {
            return map.get(factory);
        }
    }

    private static Object field(Object owner, String name) throws Exception {
        Field field = owner.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(owner);
    }

    /** A Lettuce factory that holds getConnection() once while a subscription is being built. */
    static final class BuildGate extends LettuceConnectionFactory {

        volatile boolean armed;

        final CountDownLatch entered = new CountDownLatch(1);

        final CountDownLatch open = new CountDownLatch(1);

        BuildGate(RedisStandaloneConfiguration standalone, LettuceClientConfiguration client) {
            super(standalone, client);
        }

        @Override
        public RedisConnection getConnection() {
            if (armed && Stacks.onStack(ReleaseNotifications.class, "rebuild")) {
                armed = false;
                entered.countDown();
                try {
                    open.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.getConnection();
        }
    }
}
