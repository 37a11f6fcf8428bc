package io.redlease.benchmarks.contenders;

import io.redlease.benchmarks.support.BenchRedis;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Redisson's {@link RLock} used as a leader lease: one thread per election takes the lock with the
 * watchdog (no lease time), holds it while leading and unlocks it to step down. One {@link
 * RedissonClient} per process with Redisson's default pools; only the watchdog timeout differs
 * between the default (30 s) and the normalised (5 s) contestant.
 */
final class RedissonBackend implements Backend {

    private static final long DEFAULT_WATCHDOG_MILLIS = 30_000;

    private final RedissonClient client;

    private final long watchdogMillis;

    RedissonBackend(int port, Duration ttl) {
        Config config = new Config();
        config.useSingleServer().setAddress("redis://" + BenchRedis.HOST + ":" + port);
        if (ttl.toMillis() != DEFAULT_WATCHDOG_MILLIS) {
            config.setLockWatchdogTimeout(ttl.toMillis());
        }
        this.watchdogMillis = config.getLockWatchdogTimeout();
        this.client = Redisson.create(config);
    }

    @Override
    public Candidacy join(String name, Candidacy.Listener listener) {
        CountDownLatch stop = new CountDownLatch(1);
        boolean[] leading = new boolean[1];
        Thread thread =
                new Thread(
                        () -> {
                            RLock lock = client.getLock(name);
                            boolean held = false;
                            try {
                                if (!lock.tryLock()) {
                                    listener.following(name);
                                    lock.lockInterruptibly();
                                }
                                held = true;
                                synchronized (leading) {
                                    leading[0] = true;
                                }
                                listener.elected(name);
                                stop.await();
                            } catch (InterruptedException ex) {
                                // stopped while waiting
                            } catch (RuntimeException ex) {
                                listener.error(name, ex);
                            } finally {
                                if (held) {
                                    Thread.interrupted(); // unlock must reach Redis
                                    lock.unlock();
                                }
                            }
                        },
                        "redisson-candidate-" + name);
        thread.setDaemon(true);
        thread.start();
        return () -> {
            stop.countDown();
            synchronized (leading) {
                if (!leading[0]) {
                    thread.interrupt();
                }
            }
            thread.join(30_000);
        };
    }

    @Override
    public String describe() {
        return "Redisson RLock (lockWatchdogTimeout " + watchdogMillis + " ms, default pools)";
    }

    @Override
    public void close() {
        client.shutdown();
    }
}
