package io.redlease.benchmarks.contenders;

import io.redlease.benchmarks.support.BenchRedis;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.leader.Candidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.LeaderEventPublisher;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Spring Integration's {@link LockRegistryLeaderInitiator} over one {@link RedisLockRegistry} per
 * process (spin lock, its default), one initiator per election, all other settings at their
 * defaults. Only the registry's lock TTL ({@code expireAfter}) differs between the default (60 s)
 * and the normalised (5 s) contestant.
 */
final class SpringIntegrationBackend implements Backend {

    private static final Duration DEFAULT_EXPIRE_AFTER = Duration.ofSeconds(60);

    private final LettuceConnectionFactory factory;

    private final RedisLockRegistry registry;

    private final Duration ttl;

    private final String id = UUID.randomUUID().toString();

    SpringIntegrationBackend(int port, Duration ttl) {
        this.factory = BenchRedis.lettuce(port);
        this.ttl = ttl;
        this.registry =
                ttl.equals(DEFAULT_EXPIRE_AFTER)
                        ? new RedisLockRegistry(factory, Contestant.SI_REGISTRY_KEY)
                        : new RedisLockRegistry(factory, Contestant.SI_REGISTRY_KEY, ttl);
    }

    @Override
    public Candidacy join(String name, Candidacy.Listener listener) {
        AtomicBoolean leading = new AtomicBoolean();
        AtomicBoolean reportedFollowing = new AtomicBoolean();
        CountDownLatch revoked = new CountDownLatch(1);
        Candidate candidate =
                new Candidate() {
                    @Override
                    public String getRole() {
                        return name;
                    }

                    @Override
                    public String getId() {
                        return id;
                    }

                    @Override
                    public void onGranted(Context context) {
                        leading.set(true);
                        listener.elected(name);
                    }

                    @Override
                    public void onRevoked(Context context) {
                        if (leading.get()) {
                            revoked.countDown();
                        }
                    }
                };
        LockRegistryLeaderInitiator initiator =
                new LockRegistryLeaderInitiator(registry, candidate);
        initiator.setPublishFailedEvents(true);
        initiator.setLeaderEventPublisher(
                new LeaderEventPublisher() {
                    @Override
                    public void publishOnGranted(Object source, Context context, String role) {}

                    @Override
                    public void publishOnRevoked(Object source, Context context, String role) {}

                    @Override
                    public void publishOnFailedToAcquire(
                            Object source, Context context, String role) {
                        if (reportedFollowing.compareAndSet(false, true)) {
                            listener.following(name);
                        }
                    }
                });
        initiator.start();
        return () -> {
            // stop() only cancels the selector; it unlocks on its own thread, then revokes.
            initiator.stop();
            if (leading.get() && !revoked.await(30, TimeUnit.SECONDS)) {
                listener.error(name, new IllegalStateException("no onRevoked within 30 s"));
            }
        };
    }

    @Override
    public String describe() {
        return "Spring Integration LockRegistryLeaderInitiator (heartBeat "
                + LockRegistryLeaderInitiator.DEFAULT_HEART_BEAT_TIME
                + " ms, busyWait "
                + LockRegistryLeaderInitiator.DEFAULT_BUSY_WAIT_TIME
                + " ms) + RedisLockRegistry (SPIN_LOCK, idleBetweenTries 100 ms, expireAfter "
                + ttl.toMillis()
                + " ms)";
    }

    @Override
    public void close() {
        registry.destroy();
        factory.destroy();
    }
}
