package io.redlease.test;

import java.util.List;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A {@code redis:7} container run with Testcontainers; kept in its own class so that Testcontainers
 * is loaded only when this fallback is used.
 */
final class ContainerRedis {

    static final String IMAGE = "redis:7";
    private static final int REDIS_PORT = 6379;

    private final GenericContainer<?> container;

    private ContainerRedis(GenericContainer<?> container) {
        this.container = container;
    }

    /** Returns whether a Docker engine can be used; {@code false} if Testcontainers is absent. */
    static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError ex) {
            return false;
        }
    }

    /** Starts a container whose {@code redis-server} is configured by {@code args}. */
    static ContainerRedis start(List<String> args) {
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(IMAGE));
        container.withExposedPorts(REDIS_PORT);
        container.withCommand(args.toArray(String[]::new));
        container.waitingFor(Wait.forLogMessage(".*Ready to accept connections.*\\n", 1));
        container.start();
        return new ContainerRedis(container);
    }

    String host() {
        return container.getHost();
    }

    int port() {
        return container.getMappedPort(REDIS_PORT);
    }

    boolean isRunning() {
        return container.isRunning();
    }

    void stop() {
        container.stop();
    }
}
