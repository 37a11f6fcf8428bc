package io.redlease.test;

import java.util.Map;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A database or broker container run with Testcontainers, the fallback where Docker is available
 * and the server's binaries are not; kept in its own class so that Testcontainers is loaded only
 * when this fallback is used.
 */
final class ContainerServer implements AutoCloseable {

    private final GenericContainer<?> container;
    private final String image;
    private final Processes.Registration registration;

    private ContainerServer(GenericContainer<?> container, String image) {
        this.container = container;
        this.image = image;
        this.registration = Processes.onJvmExit(container::stop);
    }

    /** Returns whether a Docker engine can be used; {@code false} if Testcontainers is absent. */
    static boolean dockerAvailable() {
        return ContainerRedis.dockerAvailable();
    }

    /**
     * Starts a container and waits until its log has shown {@code readyLog} {@code times} times.
     *
     * @param image the image, for example {@code postgres:17-alpine}
     * @param env the container's environment
     * @param readyLog a regular expression matching the log line that says the server is ready
     * @param times how many times that line appears before the server is ready (database images
     *     start a temporary server first)
     * @param ports the container ports to expose
     * @return the running container
     */
    static ContainerServer start(
            String image, Map<String, String> env, String readyLog, int times, int... ports) {
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(image));
        container.withEnv(env);
        for (int port : ports) {
            container.addExposedPort(port);
        }
        container.waitingFor(Wait.forLogMessage(readyLog, times));
        container.start();
        ContainerServer server = new ContainerServer(container, image);
        try {
            for (int port : ports) {
                server.port(port);
            }
        } catch (RuntimeException ex) {
            server.close();
            throw ex;
        }
        return server;
    }

    /** Returns the host to connect to. */
    String host() {
        return container.getHost();
    }

    /**
     * Returns the host port mapped to a container port.
     *
     * @throws IllegalStateException if Docker mapped it to a port the tests never use
     */
    int port(int containerPort) {
        return Ports.requireNotReserved(
                container.getMappedPort(containerPort),
                image + "'s port " + containerPort + " on the host");
    }

    /** Stops the container. */
    @Override
    public void close() {
        try {
            container.stop();
        } finally {
            registration.cancel();
        }
    }

    @Override
    public String toString() {
        return "container " + image;
    }
}
