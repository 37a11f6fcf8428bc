package io.redlease.benchmarks.contenders;

import io.redlease.benchmarks.support.BenchRedis;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.Observer;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * redlease electors on one {@link StringRedisTemplate} (one Lettuce connection per process, plus
 * one Pub/Sub connection for release notifications), in token-driven style (no leader task).
 *
 * <p>Go-library mode switches lease-aware scheduling and release notifications off: followers poll
 * at a jittered acquire interval, as the Go library does.
 */
final class RedleaseBackend implements Backend {

    private final LettuceConnectionFactory factory;

    private final StringRedisTemplate template;

    private final boolean goMode;

    RedleaseBackend(int port, boolean goMode) {
        this.factory = BenchRedis.lettuce(port);
        this.template = new StringRedisTemplate(factory);
        this.template.afterPropertiesSet();
        this.goMode = goMode;
    }

    @Override
    public Candidacy join(String name, Candidacy.Listener listener) {
        ElectorConfig.Builder builder =
                config(ElectorConfig.builder(name))
                        .observer(
                                new Observer() {
                                    @Override
                                    public void onElected(long token) {
                                        listener.elected(name);
                                    }

                                    @Override
                                    public void onFollower() {
                                        listener.following(name);
                                    }

                                    @Override
                                    public void onError(Operation operation, Throwable error) {
                                        listener.error(name, error);
                                    }
                                });
        Elector elector = new Elector(template, builder.build());
        elector.start();
        return elector::stop;
    }

    private ElectorConfig.Builder config(ElectorConfig.Builder builder) {
        return goMode ? builder.leaseAwareScheduling(false).releaseNotifications(false) : builder;
    }

    @Override
    public String describe() {
        ElectorConfig config = config(ElectorConfig.builder("describe")).build();
        return (goMode ? "redlease Go-library mode: " : "redlease defaults: ")
                + config
                + ", leaseAwareScheduling="
                + config.leaseAwareScheduling()
                + ", releaseNotifications="
                + config.releaseNotifications();
    }

    @Override
    public void close() {
        factory.destroy();
    }
}
