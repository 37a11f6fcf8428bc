package io.redlease.jdbc;

import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Term;
import io.redlease.test.RedisServer;
import io.redlease.test.RedisServers;
import java.time.Duration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** One real elector on the shared test Redis, with a name unique to the test, and its context. */
final class Leadership implements AutoCloseable {

    final Elector elector;

    final LeadershipContext context;

    private final LettuceConnectionFactory factory;

    Leadership(String prefix) {
        RedisServer server = RedisServers.shared();
        factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        factory.start();
        elector =
                new Elector(
                        factory,
                        ElectorConfig.builder(prefix + "-" + Long.toHexString(System.nanoTime()))
                                .ttl(Duration.ofSeconds(1))
                                .build());
        context = new LeadershipContext(Elections.of(elector));
    }

    /** Starts contending and returns the first term. */
    Term lead() {
        elector.start();
        await().atMost(Duration.ofSeconds(10)).until(elector::isLeader);
        return elector.term().orElseThrow();
    }

    /** Resigns the current term and returns the next one this elector wins. */
    Term next(Term previous) {
        elector.resign();
        await().atMost(Duration.ofSeconds(10))
                .until(
                        () ->
                                elector.term()
                                        .filter(term -> term.token() > previous.token())
                                        .isPresent());
        return elector.term().orElseThrow();
    }

    String name() {
        return elector.name();
    }

    @Override
    public void close() {
        elector.close();
        factory.destroy();
    }
}
