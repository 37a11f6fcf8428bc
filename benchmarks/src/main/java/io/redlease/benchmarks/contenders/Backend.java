package io.redlease.benchmarks.contenders;

/** What one process shares among its candidacies: the client, its connections and threads. */
public interface Backend extends AutoCloseable {

    /** Starts contending for the named election. */
    Candidacy join(String name, Candidacy.Listener listener);

    /** Returns a one-line description of the settings in force, for the logs. */
    String describe();

    @Override
    void close();

    /** Creates the backend of a contestant, connected to the Redis on the loopback port. */
    static Backend create(Contestant contestant, int port) {
        return switch (contestant) {
            case REDLEASE -> new RedleaseBackend(port, false);
            case REDLEASE_GO -> new RedleaseBackend(port, true);
            case SPRING_INTEGRATION, SPRING_INTEGRATION_5S ->
                    new SpringIntegrationBackend(port, contestant.ttl());
            case REDISSON, REDISSON_5S -> new RedissonBackend(port, contestant.ttl());
        };
    }
}
