package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Map;

/**
 * Free loopback ports for the servers the fixtures start, and the guard that keeps them off the
 * ports of the machine's own servers.
 *
 * <p>The tests never use the well-known ports of PostgreSQL (5432), MariaDB (3306), Redis (6379) or
 * RabbitMQ (5672, its management port 15672, its distribution port 25672 and epmd's 4369): a
 * developer's or CI machine may run those servers for something else. A fixture that would hand out
 * one of them fails with {@link IllegalStateException} instead.
 */
final class Ports {

    /** The ports the tests never use, with whose they are. */
    static final Map<Integer, String> RESERVED =
            Map.of(
                    3306, "MariaDB/MySQL",
                    4369, "epmd (Erlang)",
                    5432, "PostgreSQL",
                    5672, "RabbitMQ",
                    6379, "Redis",
                    15672, "the RabbitMQ management plugin",
                    25672, "RabbitMQ distribution");

    private static final String LOOPBACK = "127.0.0.1";

    private Ports() {}

    /**
     * Returns a loopback port that was free a moment ago and is not {@linkplain #RESERVED
     * reserved}.
     *
     * @return a port number
     */
    static int freeLoopbackPort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            return requireNotReserved(socket.getLocalPort(), "a free loopback port");
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not find a free port", ex);
        }
    }

    /**
     * Returns the port, or throws if it is one the tests never use.
     *
     * @param port the port a fixture is about to hand out
     * @param what what the port is for, for the message
     * @return the port
     * @throws IllegalStateException if the port is reserved
     */
    static int requireNotReserved(int port, String what) {
        String owner = RESERVED.get(port);
        if (owner != null) {
            throw new IllegalStateException(
                    "Refusing to use port "
                            + port
                            + " for "
                            + what
                            + ": it is the port of the machine's own "
                            + owner
                            + ", which the tests never use (they start their own servers on free"
                            + " ports)");
        }
        return port;
    }
}
