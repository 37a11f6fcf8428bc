package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.redlease.core.Observer.Operation;
import io.redlease.test.RedisExtension;
import io.redlease.test.RedisServer;
import io.redlease.test.TcpProxy;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
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
 * Hostile review of the inline steps ({@link Campaign#executeNow}, the handed-on steps of 1cdadce)
 * and of the stopping / hand-off path (07c56d6, 3324af9). Nine probes failed on the reviewed code
 * and pass since their fixes (a stop between start and the subscription's opening, a stopAsync
 * dependent on a loop thread, a stop during a resign's hook wait, a late win after the stop, a
 * direct callback executor, a handed-on step overtaken, a stop while the subscription connection is
 * lost, an error before the release was sent, a win too late for a term); the others passed as
 * evidence that the invariant they name held.
 */
@ExtendWith(RedisExtension.class)
class InlineStepHostileTests {

    private static final Duration POLL = Duration.ofSeconds(4);

    private static final Duration TTL = Duration.ofSeconds(6);

    private final Templates templates = new Templates();

    private final List<Elector> electors = new ArrayList<>();

    private final List<LettuceConnectionFactory> ownFactories = new ArrayList<>();

    private final List<TcpProxy> proxies = new ArrayList<>();

    private StringRedisTemplate redis;

    private RedisServer server;

    private String name;

    @BeforeEach
    void setUp(RedisServer server, TestInfo info) {
        this.server = server;
        this.redis = templates.on(server);
        this.name = Names.unique(info);
    }

    @AfterEach
    void tearDown() {
        if (server.isPaused()) {
            server.resume();
        }
        electors.forEach(Elector::close);
        ownFactories.forEach(LettuceConnectionFactory::destroy);
        proxies.forEach(TcpProxy::close);
        templates.close();
    }

    private Elector elector(
            StringRedisTemplate template,
            String election,
            String id,
            boolean notifications,
            Observer... observers) {
        ElectorConfig.Builder builder =
                ElectorConfig.builder(election)
                        .ttl(TTL)
                        .acquireInterval(POLL)
                        .instanceId(id)
                        .releaseNotifications(notifications);
        for (Observer observer : observers) {
            builder.observer(observer);
        }
        Elector elector = new Elector(template, builder.build());
        electors.add(elector);
        return elector;
    }

    private long subscribers(String election) {
        List<?> reply =
                (List<?>)
                        server.command("PUBSUB", "NUMSUB", LeaseProtocol.releaseChannel(election));
        return (Long) reply.get(1);
    }

    @SuppressWarnings("unchecked")
    private static Campaign campaignOf(Elector elector) throws Exception {
        Field runs = Elector.class.getDeclaredField("runs");
        runs.setAccessible(true);
        Object control = runs.get(elector);
        Field campaign = RunControl.class.getDeclaredField("campaign");
        campaign.setAccessible(true);
        return ((AtomicReference<Campaign>) campaign.get(control)).get();
    }

    private static Object field(Object owner, String name) throws Exception {
        Field field = owner.getClass().getDeclaredField(name);
        field.setAccessible(true);
        return field.get(owner);
    }

    /**
     * Starts leader a and follower b, then stops a: the first time b's clock is read where {@code
     * at} holds, b is stopped from another thread while that read waits (up to 5 s) for the stop to
     * be requested. Returns b once that stop has completed; {@code heldOn} names the thread the
     * read was held on.
     */
    private Elector stopFollowerFromAnotherThreadWhen(
            BooleanSupplier at, Recorder leader, Recorder follower, AtomicReference<String> heldOn)
            throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        AtomicReference<CompletableFuture<Void>> stop = new AtomicReference<>();
        AtomicReference<Elector> self = new AtomicReference<>();
        LongSupplier clock =
                () -> {
                    if (at.getAsBoolean() && armed.compareAndSet(true, false)) {
                        heldOn.set(Thread.currentThread().getName());
                        Thread stopper =
                                new Thread(() -> stop.set(self.get().stopAsync()), "stopper");
                        stopper.start();
                        try {
                            stopper.join(5000);
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    return System.nanoTime();
                };
        Elector a = elector(redis, name, "a", true, leader);
        a.start();
        leader.await("elected", 1);
        Elector b =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .acquireInterval(POLL)
                                .instanceId("b")
                                .clock(clock)
                                .observer(follower)
                                .build());
        self.set(b);
        electors.add(b);
        b.start();
        follower.await("follower", 1);
        await().until(() -> b.idleFollower() && b.stepsIdle() && a.stepsIdle());
        armed.set(true);
        a.stop();
        await().atMost(Duration.ofSeconds(10)).until(() -> stop.get() != null);
        stop.get().get(10, TimeUnit.SECONDS);
        return b;
    }

    private static boolean clientThread() {
        return Thread.currentThread().getName().startsWith("lettuce-");
    }

    // ---------------------------------------------------------------------------------------
    // White-box probes of Steps.executeNow and its handed-on steps on a live run.

    /**
     * Invariant 1 (order): a step an inline step hands on (handedOn) was handed over before a step
     * another thread queues to the loop while the inline step runs; it must not be overtaken by it
     * (Steps once sent the handed-on step to the loop behind the later one).
     */
    @Test
    void aStepQueuedDuringAnInlineStepDoesNotOvertakeTheStepItHandedOnEarlier() throws Exception {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(30))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .build());
        electors.add(elector);
        elector.start();
        await().until(elector::isLeader);
        await().until(elector::stepsIdle);
        Campaign campaign = campaignOf(elector);
        List<String> order = new CopyOnWriteArrayList<>();
        campaign.executeNow(
                () -> {
                    order.add("inline");
                    // 1st hand-over: handed on by this inline step (a reply that came early).
                    campaign.executeNow(() -> order.add("handed on first"));
                    // 2nd hand-over, later, from another thread (a reply, a subscription event).
                    Thread other =
                            new Thread(() -> campaign.executeNow(() -> order.add("queued later")));
                    other.start();
                    try {
                        other.join();
                    } catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                });
        await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == 3);
        assertThat(order).containsExactly("inline", "handed on first", "queued later");
    }

    /**
     * Invariant 5: a handed-on step that throws is contained (internalError), the next handed-on
     * step still runs on the same thread, and the run is left able to run inline steps again (no
     * stale inlineStep flag, no handedOn leftovers).
     */
    @Test
    void aHandedOnStepThatThrowsIsContainedAndTheNextStillRuns() throws Exception {
        Recorder recorder = new Recorder();
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(30))
                                // Contends again soon after the error's step-down.
                                .acquireInterval(Duration.ofMillis(500))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .observer(recorder)
                                .build());
        electors.add(elector);
        elector.start();
        recorder.await("elected", 1);
        await().until(elector::stepsIdle);
        Campaign campaign = campaignOf(elector);
        List<String> order = new CopyOnWriteArrayList<>();
        String me = Thread.currentThread().getName();
        campaign.executeNow(
                () -> {
                    order.add("inline@" + Thread.currentThread().getName());
                    campaign.executeNow(
                            () -> {
                                order.add("h1@" + Thread.currentThread().getName());
                                throw new IllegalStateException("probe: h1 throws");
                            });
                    campaign.executeNow(() -> order.add("h2@" + Thread.currentThread().getName()));
                });
        await().atMost(Duration.ofSeconds(5)).until(() -> order.size() == 3);
        assertThat(order.subList(0, 2)).containsExactly("inline@" + me, "h1@" + me);
        // h2 runs on this thread unless the release h1's error sent was answered meanwhile.
        assertThat(order.get(2)).startsWith("h2@");
        assertThat((Boolean) field(campaign.steps(), "inline")).isFalse();
        assertThat((Integer) field(campaign.steps(), "handedOn")).isZero();
        // The internal error ended the term; the run contends again and wins a newer term.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !recorder.errors(Operation.INTERNAL).isEmpty());
        Recorder.Event again = recorder.await("elected", 2, Duration.ofSeconds(15));
        assertThat(again.token()).isGreaterThan(recorder.electedTokens().get(0));
        assertThat(recorder.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.INTERNAL_ERROR);
        // The next event brought while idle runs inline again.
        await().until(elector::stepsIdle);
        CompletableFuture<String> where = new CompletableFuture<>();
        Campaign same = campaignOf(elector);
        assertThat(same).isSameAs(campaign);
        same.executeNow(() -> where.complete(Thread.currentThread().getName()));
        assertThat(where.get(5, TimeUnit.SECONDS)).isEqualTo(me);
    }

    /** Invariant 5: an inline step that throws after handing a step on still runs that step. */
    @Test
    void anInlineStepThatThrowsStillRunsWhatItHandedOn() throws Exception {
        Elector elector =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(30))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .build());
        electors.add(elector);
        elector.start();
        await().until(elector::isLeader);
        await().until(elector::stepsIdle);
        Campaign campaign = campaignOf(elector);
        AtomicBoolean ran = new AtomicBoolean();
        campaign.executeNow(
                () -> {
                    campaign.executeNow(() -> ran.set(true));
                    throw new IllegalStateException("probe: the inline step throws");
                });
        await().atMost(Duration.ofSeconds(5)).untilTrue(ran);
        assertThat((Integer) field(campaign.steps(), "handedOn")).isZero();
        assertThat((Boolean) field(campaign.steps(), "inline")).isFalse();
    }

    // ---------------------------------------------------------------------------------------
    // Inline steps on the client's I/O thread, end to end.

    /**
     * Invariant 5 / internalError path: the follower's acquire sent on hearing a release throws on
     * the client's I/O thread (its clock throws once there). The error is contained and reported on
     * the lane, not the I/O thread, and the follower still takes over.
     */
    @Test
    void anInlineAcquireThatThrowsOnTheClientThreadIsRecovered() throws Exception {
        Recorder leader = new Recorder();
        Recorder follower = new Recorder();
        AtomicBoolean armed = new AtomicBoolean();
        AtomicReference<String> thrownOn = new AtomicReference<>();
        LongSupplier clock =
                () -> {
                    if (clientThread()
                            && Stacks.onStack(Contending.class, "acquire")
                            && armed.compareAndSet(true, false)) {
                        thrownOn.set(Thread.currentThread().getName());
                        throw new IllegalStateException("probe: the clock throws");
                    }
                    return System.nanoTime();
                };
        Elector a = elector(redis, name, "a", true, leader);
        a.start();
        leader.await("elected", 1);
        Elector b =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .acquireInterval(POLL)
                                .instanceId("b")
                                .clock(clock)
                                .observer(follower)
                                .build());
        electors.add(b);
        b.start();
        follower.await("follower", 1);
        await().until(() -> b.idleFollower() && b.stepsIdle() && a.stepsIdle());
        armed.set(true);
        a.stop();
        Recorder.Event elected = follower.await("elected", 1, Duration.ofSeconds(20));
        assertThat(thrownOn.get()).as("the inline acquire ran on the client's thread").isNotNull();
        List<Recorder.Event> internal =
                follower.events("error").stream()
                        .filter(
                                e ->
                                        ((Recorder.ErrorDetail) e.detail()).operation()
                                                == Operation.INTERNAL)
                        .toList();
        assertThat(internal).hasSize(1);
        assertThat(internal.get(0).thread()).doesNotStartWith("lettuce-");
        assertThat(elected.thread()).doesNotStartWith("lettuce-");
        assertThat(follower.count("elected")).isEqualTo(1);
        assertThat(elected.token()).isGreaterThan(leader.electedTokens().get(0));
        assertThat(redis.opsForValue().get(name + ":leader")).isEqualTo("b");
        b.stop();
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
    }

    /**
     * Invariants 3 and 4: a stop that arrives while the follower's win is being taken inline on the
     * client's I/O thread (held inside Leadership.lead) queues behind that step; the won term is
     * ended at once, its lease released, and the stop completes with its subscription closed.
     */
    @Test
    void aStopArrivingWhileAnInlineWinRunsReleasesTheLease() throws Exception {
        Recorder leader = new Recorder();
        Recorder follower = new Recorder();
        AtomicReference<String> heldOn = new AtomicReference<>();
        Elector b =
                stopFollowerFromAnotherThreadWhen(
                        () -> Stacks.onStack(Leadership.class, "lead"), leader, follower, heldOn);
        assertThat(heldOn.get())
                .as("the win was taken inline on a client thread")
                .startsWith("lettuce-");
        assertThat(b.isRunning()).isFalse();
        assertThat(b.isLeader()).isFalse();
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
        assertThat(follower.count("elected")).isEqualTo(1);
        await().atMost(Duration.ofSeconds(5)).until(() -> follower.count("steppedDown") == 1);
        assertThat(follower.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.SHUTDOWN);
        assertThat(subscribers(name)).isZero();
    }

    // ---------------------------------------------------------------------------------------
    // Stopping.

    /**
     * Invariant 4: concurrent stop() calls from many threads on a leader with a task: all return,
     * the lease is released once, the observers heard one step-down and the subscription is closed
     * when they return.
     */
    @Test
    void concurrentStopsOfALeaderWithATaskAllReturnAndReleaseOnce() throws Exception {
        Recorder recorder = new Recorder();
        Elector a = elector(redis, name, "a", true, recorder);
        a.start(Term::awaitEnd);
        recorder.await("elected", 1);
        await().until(() -> subscribers(name) == 1 && a.stepsIdle());
        int threads = 6;
        CyclicBarrier barrier = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Boolean>> stops = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                stops.add(
                        pool.submit(
                                () -> {
                                    barrier.await();
                                    boolean stopped = a.stop(Duration.ofSeconds(5));
                                    // Checked by each stopper as it returns.
                                    assertThat(subscribers(name)).isZero();
                                    assertThat(recorder.count("steppedDown")).isEqualTo(1);
                                    return stopped;
                                }));
            }
            for (Future<Boolean> stopped : stops) {
                assertThat(stopped.get(20, TimeUnit.SECONDS)).isTrue();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
        assertThat(recorder.events("steppedDown").get(0).detail())
                .isEqualTo(StepDownReason.SHUTDOWN);
        assertThat(a.isRunning()).isFalse();
    }

    /**
     * Invariant 4 (restart after stop): an elector restarted while its last run still keeps its
     * subscription for the 20 ms settle must keep hearing releases once that old subscription is
     * closed (the old close must not take the channel from the new run).
     */
    @Test
    void aRestartWithinTheSettleWindowKeepsTheNewRunsSubscription() throws Exception {
        StringRedisTemplate other = templates.on(server);
        Recorder ra = new Recorder();
        Recorder rc = new Recorder();
        Elector a = elector(redis, name, "a", true, ra);
        Elector c = elector(other, name, "c", true, rc);
        a.start();
        ra.await("elected", 1);
        c.start();
        rc.await("follower", 1);
        await().until(() -> subscribers(name) == 2 && c.idleFollower());
        await().until(() -> a.stepsIdle() && c.stepsIdle());
        CompletableFuture<Void> stopping = a.stopAsync();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (a.isRunning() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        a.start();
        boolean inWindow = !stopping.isDone();
        assumeTrue(inWindow, "restarted after the old run's subscription was closed");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> rc.count("elected") == 1 || ra.count("elected") == 2);
        stopping.get(10, TimeUnit.SECONDS);
        assumeTrue(ra.count("elected") == 1, "the restarted run won the lease before c");
        await().atMost(Duration.ofSeconds(10))
                .until(() -> a.idleFollower() && a.notificationsOff().isEmpty());
        assertThat(subscribers(name)).isEqualTo(2);
        long released = System.nanoTime();
        c.stop();
        Recorder.Event elected = ra.await("elected", 2);
        assertThat(Duration.ofNanos(elected.nanos() - released)).isLessThan(POLL.dividedBy(2));
    }

    /**
     * Invariant 4: stop() racing start(). The run is published (isRunning() is true, so a stop acts
     * on it) before its subscription is opened; a stop in that window ended the run, then start()
     * went on to register the run's release channel, never closed: the next subscription built on
     * the same connection factory subscribed the stopped elector's channel, long after its stop()
     * returned. The stop is asked for while start() is held in that window.
     */
    @Test
    void aStopBetweenStartAndTheSubscriptionsOpeningLeavesNoChannelRegistered() throws Exception {
        GatedFactory factory =
                new GatedFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()),
                        LettuceClientConfiguration.builder()
                                .commandTimeout(Duration.ofSeconds(10))
                                .build());
        factory.afterPropertiesSet();
        factory.start();
        ownFactories.add(factory);
        StringRedisTemplate template = new StringRedisTemplate(factory);
        template.afterPropertiesSet();
        Elector a = elector(template, name, "a", true);
        Thread starter =
                new Thread(
                        () -> {
                            factory.gated = Thread.currentThread();
                            a.start();
                        },
                        "starter");
        starter.start();
        assertThat(factory.entered.await(10, TimeUnit.SECONDS)).isTrue();
        // Published, not yet subscribed: the stop ends this run (once start() has let it).
        assertThat(a.isRunning()).isTrue();
        CompletableFuture<Void> stopped = a.stopAsync(Duration.ofSeconds(5));
        factory.open.countDown();
        stopped.get(10, TimeUnit.SECONDS);
        assertThat(a.isRunning()).isFalse();
        starter.join(10_000);
        assertThat(starter.isAlive()).isFalse();
        assertThat(a.isRunning()).isFalse();
        // Another election on the same factory builds the factory's subscription.
        String second = name + ":second";
        Elector b = elector(template, second, "b", true);
        b.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> subscribers(second) == 1);
        assertThat(subscribers(name))
                .as("release channel of the stopped elector still subscribed")
                .isZero();
    }

    /**
     * Invariant 2 / 4: what a stopAsync() caller chains on the returned future runs where the
     * future completes. When the leader's subscription close is slow (here: every subscribing
     * thread busy), Stopping.finished's bound completes it on the run's loop thread; there a
     * blocking stop() of another elector returns at once without stopping it (stop() sees a loop
     * thread, which Elector.stop's javadoc does not list), and blocking work there stalls every
     * election on that loop.
     */
    @Test
    void aStopAsyncDependentRunsOffTheEngineThreadsWhereAStopWaits() throws Exception {
        Recorder ra = new Recorder();
        Recorder rb = new Recorder();
        String bName = name + ":b";
        Elector a = elector(redis, name, "a", true, ra);
        Elector b = elector(redis, bName, "b", false, rb);
        a.start();
        b.start();
        ra.await("elected", 1);
        rb.await("elected", 1);
        await().until(() -> subscribers(name) == 1 && a.stepsIdle());
        CountDownLatch held = new CountDownLatch(Subscription.SUBSCRIBING_THREADS);
        CountDownLatch release = new CountDownLatch(1);
        for (int i = 0; i < Subscription.SUBSCRIBING_THREADS; i++) {
            Subscription.later(
                    () -> {
                        held.countDown();
                        try {
                            release.await();
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    });
        }
        String seen;
        try {
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<String> outcome =
                    a.stopAsync()
                            .thenApply(
                                    ignored -> {
                                        String thread = Thread.currentThread().getName();
                                        b.stop();
                                        return thread
                                                + " b.running="
                                                + b.isRunning()
                                                + " b.lease="
                                                + redis.hasKey(bName + ":leader");
                                    });
            seen = outcome.get(10, TimeUnit.SECONDS);
        } finally {
            release.countDown();
        }
        assertThat(seen).doesNotStartWith("redlease-loop-");
        assertThat(seen).endsWith("b.running=false b.lease=false");
    }

    /**
     * Invariant 4 (release subscription closed when stop() returns): a follower stopped while its
     * subscription connection is lost (and not yet restored by the client) has no channel on Redis
     * when stop() returns, but its channel stays on the shared subscription, which the client
     * restores with every channel it had: the stopped elector's channel would stay subscribed for
     * as long as another election uses the factory.
     */
    @Test
    void aStopWhileTheSubscriptionConnectionIsLostDoesNotLeaveTheChannelSubscribed()
            throws Exception {
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        StringRedisTemplate proxied =
                templates.on(proxy.host(), proxy.port(), null, Duration.ofSeconds(10));
        String first = name + ":1";
        String second = name + ":2";
        // Both elections held by someone else for a minute: their electors are sleeping followers.
        redis.opsForValue().set(first + ":leader", "other", Duration.ofSeconds(60));
        redis.opsForValue().set(second + ":leader", "other", Duration.ofSeconds(60));
        Recorder r1 = new Recorder();
        Recorder r2 = new Recorder();
        Elector e1 = elector(proxied, first, "a", true, r1);
        Elector e2 = elector(proxied, second, "a", true, r2);
        e1.start();
        e2.start();
        r1.await("follower", 1);
        r2.await("follower", 1);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> subscribers(first) == 1 && subscribers(second) == 1);
        await().until(() -> e1.idleFollower() && e2.idleFollower());
        proxy.blackhole();
        proxy.cut();
        await().atMost(Duration.ofSeconds(5)).until(() -> e2.notificationsOff().isPresent());
        assertThat(e2.stop(Duration.ofSeconds(5))).isTrue();
        proxy.pass();
        // The client restores the first election's subscription.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> subscribers(first) == 1 && e1.notificationsOff().isEmpty());
        // The client subscribes the stopped follower's channel again with the others; hearing
        // it, the registration unsubscribes it.
        await().atMost(Duration.ofSeconds(10))
                .alias("release channel of the stopped follower left subscribed")
                .until(() -> subscribers(second) == 0);
        assertThat(subscribers(first)).isEqualTo(1);
    }

    /**
     * Invariant 3: a stop while a follower's acquire is in flight on a stalled Redis returns once
     * the acquire's bound passes; when Redis answers, that acquire has won. The stopped elector
     * never leads it (good), but nothing releases it either: the successor waits out the whole time
     * to live of a lease held by a stopped instance.
     */
    @Test
    void aLateWinAfterTheStopIsReleased() throws Exception {
        Recorder recorder = new Recorder();
        redis.opsForValue().set(name + ":leader", "other", Duration.ofSeconds(30));
        Elector b =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(20))
                                .acquireInterval(Duration.ofMillis(300))
                                .instanceId("b")
                                .releaseNotifications(false)
                                .observer(recorder)
                                .build());
        electors.add(b);
        b.start();
        recorder.await("follower", 1);
        Campaign campaign = campaignOf(b);
        redis.delete(name + ":leader");
        server.pause();
        // The follower's next look is in flight, stuck at the paused server.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> "ACQUIRING".equals(String.valueOf(field(campaign, "phase"))));
        assertThat(b.stop(Duration.ofSeconds(1))).isTrue();
        assertThat(b.isRunning()).isFalse();
        server.resume();
        // The stuck acquire is answered now: it won. Nothing holds the lease for a stopped
        // elector (20 s TTL): its reply gives it back.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> redis.opsForValue().get(name + ":leader") == null);
        assertThat(recorder.count("elected")).isZero();
    }

    /**
     * Invariant 3: an acquire answered after its bound, and too late for a term (its age past TTL
     * minus the renew interval, here by the clock read in the settling step), won a lease no term
     * holds. It was left for the run's next attempt to take over: a stop that came first (here,
     * requested while the settling step runs) left it held for its whole time to live.
     */
    @Test
    void aWinTooLateForATermIsReleasedSoAStopLeavesNothingHeld() throws Exception {
        Recorder recorder = new Recorder();
        AtomicBoolean armed = new AtomicBoolean();
        AtomicReference<Elector> self = new AtomicReference<>();
        AtomicReference<CompletableFuture<Void>> stop = new AtomicReference<>();
        LongSupplier clock =
                () -> {
                    if (Stacks.onStack(Contending.class, "settled")
                            && armed.compareAndSet(true, false)) {
                        Thread stopper =
                                new Thread(() -> stop.set(self.get().stopAsync()), "stopper");
                        stopper.start();
                        try {
                            stopper.join(5000);
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                        // Read as if the reply came 30 s after the send: too late for a term.
                        return System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    }
                    return System.nanoTime();
                };
        redis.opsForValue().set(name + ":leader", "other", Duration.ofSeconds(30));
        Elector b =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(20))
                                .acquireInterval(Duration.ofMillis(300))
                                .instanceId("b")
                                .releaseNotifications(false)
                                .clock(clock)
                                .observer(recorder)
                                .build());
        self.set(b);
        electors.add(b);
        b.start();
        recorder.await("follower", 1);
        redis.delete(name + ":leader");
        server.pause();
        // The follower's next look is stuck at the paused server, and given up at its bound.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> !recorder.errors(Operation.ACQUIRE).isEmpty());
        armed.set(true);
        server.resume();
        // The stuck acquire is answered: it won, too late for a term, and the stop follows.
        await().atMost(Duration.ofSeconds(10)).until(() -> stop.get() != null);
        stop.get().get(10, TimeUnit.SECONDS);
        assertThat(b.isRunning()).isFalse();
        // Nothing holds the lease for a stopped elector (20 s TTL).
        await().atMost(Duration.ofSeconds(5))
                .until(() -> redis.opsForValue().get(name + ":leader") == null);
        assertThat(recorder.count("elected")).isZero();
    }

    /**
     * Invariant 4 (stop is bounded by its own drain timeout; stop(Duration) returns false only
     * where it cannot wait): a stop that comes while a resign's step-down waits for a
     * before-release hook does nothing to that wait (onStopRequested's STEPPING_DOWN branch), which
     * was armed with the configured drain timeout. stop(Duration.ZERO) from a plain thread then
     * gives up after its own bound (2 x TTL) and returns false, with the run still running.
     */
    @Test
    void aStopDuringAResignsBeforeReleaseHookEndsThatWaitByItsOwnDeadline() throws Exception {
        Recorder recorder = new Recorder();
        CompletableFuture<Void> never = new CompletableFuture<>();
        CountDownLatch hookStarted = new CountDownLatch(1);
        Elector a =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(2))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .drainTimeout(Duration.ofSeconds(10))
                                .beforeRelease(
                                        term -> {
                                            hookStarted.countDown();
                                            return never;
                                        })
                                .observer(recorder)
                                .build());
        electors.add(a);
        a.start();
        recorder.await("elected", 1);
        a.resign();
        assertThat(hookStarted.await(5, TimeUnit.SECONDS)).isTrue();
        // The resign's step-down has armed its wait for the hook (the step that did is over).
        await().until(a::stepsIdle);
        long begin = System.nanoTime();
        boolean stopped = a.stop(Duration.ZERO);
        Duration took = Duration.ofNanos(System.nanoTime() - begin);
        String state =
                "stop(ZERO) returned "
                        + stopped
                        + " after "
                        + took.toMillis()
                        + " ms, running="
                        + a.isRunning();
        assertThat(state).startsWith("stop(ZERO) returned true");
        assertThat(a.isRunning()).as(state).isFalse();
        assertThat(took).as(state).isLessThan(Duration.ofSeconds(2));
    }

    /**
     * Invariant 2 with a direct callback executor (Runnable::run, Spring's SyncTaskExecutor): the
     * inline steps submit observer callbacks to the lane from the client's I/O thread, so the
     * follower's onElected runs on that thread; a synchronous Redis read there waits for a reply
     * that thread has to deliver.
     */
    @Test
    void aDirectCallbackExecutorDoesNotRunCallbacksOnTheClientsIoThread() throws Exception {
        Recorder leader = new Recorder();
        CompletableFuture<String> elected = new CompletableFuture<>();
        Observer reading =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        String thread = Thread.currentThread().getName();
                        long begin = System.nanoTime();
                        String read;
                        try {
                            read = String.valueOf(redis.opsForValue().get(name + ":leader"));
                        } catch (RuntimeException ex) {
                            read = ex.getClass().getSimpleName();
                        }
                        elected.complete(
                                thread
                                        + " read "
                                        + read
                                        + " in "
                                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)
                                        + " ms");
                    }
                };
        Elector a = elector(redis, name, "a", true, leader);
        a.start();
        leader.await("elected", 1);
        Elector b =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .acquireInterval(POLL)
                                .instanceId("b")
                                .callbackExecutor(Runnable::run)
                                .observer(reading)
                                .build());
        electors.add(b);
        b.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> b.idleFollower() && b.stepsIdle());
        a.stop();
        String outcome = elected.get(20, TimeUnit.SECONDS);
        assertThat(outcome).doesNotStartWith("lettuce-");
    }

    /**
     * Invariant 3 end to end: repeated graceful hand-offs through release notifications (the inline
     * path: release heard, acquire sent and answered on the client's threads), with the stopped
     * leader restarted at once each time (inside its 20 ms settle). Leader tasks never overlap,
     * tokens strictly increase in the order terms begin, and at the end no lease and no
     * subscription is left.
     */
    @Test
    void repeatedHandOffsWithImmediateRestartsNeverOverlapTerms() throws Exception {
        AtomicReference<String> overlap = new AtomicReference<>();
        java.util.concurrent.atomic.AtomicInteger active =
                new java.util.concurrent.atomic.AtomicInteger();
        List<Long> begun = new CopyOnWriteArrayList<>();
        LeaderTask task =
                term -> {
                    if (active.incrementAndGet() > 1) {
                        overlap.compareAndSet(null, "two tasks at once in term " + term.token());
                    }
                    begun.add(term.token());
                    try {
                        term.awaitEnd();
                    } finally {
                        active.decrementAndGet();
                    }
                };
        List<Elector> all = new ArrayList<>();
        for (String id : List.of("a", "b", "c")) {
            all.add(elector(redis, name, id, true));
        }
        for (Elector elector : all) {
            elector.start(task);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> begun.size() == 1);
        for (int round = 0; round < 12; round++) {
            int before = begun.size();
            Elector leader =
                    await().atMost(Duration.ofSeconds(10))
                            .until(
                                    () -> all.stream().filter(Elector::isLeader).findFirst(),
                                    java.util.Optional::isPresent)
                            .orElseThrow();
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> all.stream().allMatch(e -> e.isLeader() || e.idleFollower()));
            leader.stopAsync();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (leader.isRunning() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            leader.start(task);
            await().atMost(Duration.ofSeconds(10)).until(() -> begun.size() > before);
        }
        for (Elector elector : all) {
            elector.stop();
        }
        assertThat(overlap.get()).isNull();
        assertThat(begun).isSorted().doesNotHaveDuplicates();
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
        assertThat(subscribers(name)).isZero();
    }

    /**
     * Invariant 5 (a Timer firing while an inline step runs and cancels it), on the inline path the
     * existing review test does not reach: the acquire a follower sends on hearing a release
     * (callNow) misses its bound, so the run backs off with a retry timer; the acquire then wins
     * and its late win is taken inline on the client's I/O thread (settled, executeNow). That step
     * is held until the retry timer has fired and its task waits for the run's lock; the step
     * cancels it, and it must not run afterwards (it would acquire again while leading: a second
     * term).
     */
    @Test
    void aRetryTimerFiringWhileAnInlineLateWinCancelsItDoesNotRun() throws Exception {
        TcpProxy proxy = TcpProxy.start(server);
        proxies.add(proxy);
        StringRedisTemplate proxied =
                templates.on(proxy.host(), proxy.port(), null, Duration.ofSeconds(10));
        Recorder leader = new Recorder();
        Recorder follower = new Recorder();
        java.util.concurrent.atomic.AtomicInteger renewals =
                new java.util.concurrent.atomic.AtomicInteger();
        Observer renewed =
                new Observer() {
                    @Override
                    public void onRoundTrip(
                            Operation operation, Duration duration, boolean succeeded) {
                        if (operation == Operation.RENEW && succeeded) {
                            renewals.incrementAndGet();
                        }
                    }
                };
        AtomicBoolean armed = new AtomicBoolean();
        AtomicBoolean engaged = new AtomicBoolean();
        AtomicBoolean timerWaited = new AtomicBoolean();
        AtomicReference<Thread> loop = new AtomicReference<>();
        LongSupplier clock =
                () -> {
                    if (clientThread()
                            && Stacks.onStack(Contending.class, "settled")
                            && armed.compareAndSet(true, false)) {
                        engaged.set(true);
                        await().atMost(Duration.ofSeconds(10))
                                .pollInterval(Duration.ofMillis(1))
                                .until(() -> waitsForRunLock(loop.get()));
                        timerWaited.set(true);
                    }
                    return System.nanoTime();
                };
        Elector a = elector(redis, name, "a", true, leader);
        a.start();
        leader.await("elected", 1);
        Elector b =
                new Elector(
                        proxied,
                        ElectorConfig.builder(name)
                                .ttl(TTL)
                                .acquireInterval(Duration.ofMillis(300))
                                .instanceId("b")
                                .clock(clock)
                                .observer(follower)
                                .observer(renewed)
                                .build());
        electors.add(b);
        b.start();
        follower.await("follower", 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> b.idleFollower() && b.stepsIdle());
        loop.set(b.loop().submit(Thread::currentThread).get(10, TimeUnit.SECONDS));
        // Every chunk to and from b's Redis 200 ms late: b hears the release 200 ms after it,
        // and its acquire's reply comes 400 ms after its send, past its 300 ms bound.
        proxy.delay(Duration.ofMillis(200));
        armed.set(true);
        a.stop();
        Recorder.Event elected = follower.await("elected", 1, Duration.ofSeconds(20));
        assumeTrue(engaged.get(), "the late win was not taken inline on a client thread");
        assertThat(timerWaited).as("the retry timer waited for the run's lock").isTrue();
        assertThat(follower.errors(Operation.ACQUIRE)).isNotEmpty();
        int before = renewals.get();
        await().atMost(Duration.ofSeconds(15)).until(() -> renewals.get() >= before + 2);
        assertThat(follower.electedTokens()).containsExactly(elected.token());
        assertThat(redis.opsForValue().get(name + ":fence"))
                .isEqualTo(Long.toString(elected.token()));
        assertThat(b.token()).hasValue(elected.token());
    }

    private static boolean waitsForRunLock(Thread thread) {
        return thread != null
                && thread.getState() == Thread.State.WAITING
                && java.util.concurrent.locks.LockSupport.getBlocker(thread)
                        instanceof java.util.concurrent.locks.AbstractQueuedSynchronizer
                && java.util.Arrays.stream(thread.getStackTrace())
                        .anyMatch(frame -> frame.getClassName().startsWith(Steps.class.getName()));
    }

    /**
     * Invariants 3 and 4 (stop racing a release notification): the follower's inline wake on the
     * client's thread is held just before it sends its acquire while a stop arrives (it queues
     * behind the step). The acquire still goes out and wins; whatever it wins is released and the
     * stop completes with nothing left held or subscribed.
     */
    @Test
    void aStopArrivingWhileTheInlineWakeSendsItsAcquireReleasesWhatItWins() throws Exception {
        Recorder leader = new Recorder();
        Recorder follower = new Recorder();
        AtomicReference<String> heldOn = new AtomicReference<>();
        Elector b =
                stopFollowerFromAnotherThreadWhen(
                        () -> clientThread() && Stacks.onStack(Contending.class, "acquire"),
                        leader,
                        follower,
                        heldOn);
        assertThat(heldOn.get()).startsWith("lettuce-");
        assertThat(b.isRunning()).isFalse();
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
        assertThat(follower.count("elected")).isEqualTo(follower.count("steppedDown"));
        assertThat(subscribers(name)).isZero();
    }

    /**
     * Invariant 3 / internalError path: a throwable escaping a step after the term began to end but
     * before its release was sent (here the term's clock, read by Term.end, throws once while the
     * stop's first step runs inline on the stopping thread). Abandoning "the release that went
     * wrong" would leave the lease held until its TTL, as none was sent: the recovery sends it, and
     * the term's end completes (whenEnded fires, its task is interrupted).
     */
    @Test
    void anErrorWhileEndingTheTermStillSendsTheRelease() throws Exception {
        Recorder recorder = new Recorder();
        AtomicBoolean armed = new AtomicBoolean();
        LongSupplier clock =
                () -> {
                    if (Stacks.onStack(Term.class, "end") && armed.compareAndSet(true, false)) {
                        throw new IllegalStateException("probe: the clock throws in Term.end");
                    }
                    return System.nanoTime();
                };
        Elector a =
                new Elector(
                        redis,
                        ElectorConfig.builder(name)
                                .ttl(Duration.ofSeconds(20))
                                .instanceId("a")
                                .releaseNotifications(false)
                                .clock(clock)
                                .observer(recorder)
                                .build());
        electors.add(a);
        CompletableFuture<StepDownReason> ended = new CompletableFuture<>();
        a.start(
                term -> {
                    term.whenEnded().thenAccept(ended::complete);
                    term.awaitEnd();
                });
        recorder.await("elected", 1);
        await().until(a::stepsIdle);
        armed.set(true);
        assertThat(a.stop(Duration.ofSeconds(2))).isTrue();
        assertThat(recorder.errors(Operation.INTERNAL)).hasSize(1);
        String state =
                "lease holder "
                        + redis.opsForValue().get(name + ":leader")
                        + ", whenEnded done "
                        + ended.isDone();
        assertThat(state).isEqualTo("lease holder null, whenEnded done true");
    }

    /**
     * Invariant 4: stop() from inside the elector's own observer callbacks (onElected, then again
     * from onSteppedDown) returns at once instead of deadlocking on the lane it runs on; the run
     * still ends with its lease released and its subscription closed.
     */
    @Test
    void stopFromInsideTheObserverCallbacksDoesNotDeadlock() throws Exception {
        AtomicReference<Elector> self = new AtomicReference<>();
        List<String> inside = new CopyOnWriteArrayList<>();
        Observer stopping =
                new Observer() {
                    @Override
                    public void onElected(long token) {
                        stopInside("onElected");
                    }

                    @Override
                    public void onSteppedDown(StepDownReason reason) {
                        stopInside("onSteppedDown " + reason);
                    }

                    private void stopInside(String where) {
                        long begin = System.nanoTime();
                        try {
                            boolean stopped = self.get().stop(Duration.ofSeconds(5));
                            inside.add(
                                    where
                                            + " stopped="
                                            + stopped
                                            + " in "
                                            + TimeUnit.NANOSECONDS.toMillis(
                                                    System.nanoTime() - begin)
                                            + " ms");
                        } catch (InterruptedException ex) {
                            Thread.currentThread().interrupt();
                        }
                    }
                };
        Elector a = elector(redis, name, "a", true, stopping);
        self.set(a);
        a.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> inside.size() == 2);
        await().atMost(Duration.ofSeconds(5)).until(() -> !a.isRunning());
        assertThat(inside.get(0)).startsWith("onElected stopped=false");
        assertThat(inside.get(1)).startsWith("onSteppedDown SHUTDOWN");
        assertThat(redis.opsForValue().get(name + ":leader")).isNull();
        await().atMost(Duration.ofSeconds(5)).until(() -> subscribers(name) == 0);
    }

    /** A Lettuce factory that holds the first isClusterAware() call of one thread. */
    static final class GatedFactory extends LettuceConnectionFactory {

        volatile Thread gated;

        final CountDownLatch entered = new CountDownLatch(1);

        final CountDownLatch open = new CountDownLatch(1);

        GatedFactory(RedisStandaloneConfiguration standalone, LettuceClientConfiguration client) {
            super(standalone, client);
        }

        @Override
        public boolean isClusterAware() {
            if (Thread.currentThread() == gated) {
                gated = null;
                entered.countDown();
                try {
                    open.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }
            return super.isClusterAware();
        }
    }
}
