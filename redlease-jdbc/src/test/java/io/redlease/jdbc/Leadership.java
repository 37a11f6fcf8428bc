package io.redlease.jdbc;

import static org.awaitility.Awaitility.await;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.ElectorConfig;
import io.redlease.core.LeadershipContext;
import io.redlease.core.Observer;
import io.redlease.core.Term;
import io.redlease.test.RedisServer;
import io.redlease.test.RedisServers;
import java.time.Duration;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/** One real elector on the shared test Redis, with a name unique to the test, and its context. */
final class Leadership implements AutoCloseable {

    final Elector elector;

    final LeadershipContext context;

    private final LettuceConnectionFactory factory;

    Leadership(String prefix) {
        this(RedisServers.shared(), prefix + "-" + Long.toHexString(System.nanoTime()));
    }

    /** An elector with an observer made for its election name, such as a claim observer. */
    Leadership(String prefix, Function<String, Observer> observer) {
        this(RedisServers.shared(), prefix + "-" + Long.toHexString(System.nanoTime()), observer);
    }

    /** An elector for an election name shared with another process. */
    Leadership(RedisServer server, String name) {
        this(server, name, null);
    }

    /** An elector for an election name shared with another process, with an observer. */
    Leadership(RedisServer server, String name, @Nullable Function<String, Observer> observer) {
        factory =
                new LettuceConnectionFactory(
                        new RedisStandaloneConfiguration(server.host(), server.port()));
        factory.afterPropertiesSet();
        factory.start();
        ElectorConfig.Builder config = ElectorConfig.builder(name).ttl(Duration.ofSeconds(1));
        if (observer != null) {
            config.observer(observer.apply(name));
        }
        elector = new Elector(factory, config.build());
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
