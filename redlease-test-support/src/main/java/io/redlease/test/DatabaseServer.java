package io.redlease.test;

import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import org.opentest4j.TestAbortedException;

/**
 * A real database server that tests talk to over JDBC: a process the fixture started, a Docker
 * container or an external server; see {@link PostgresServer} and {@link MariaDbServer}.
 *
 * <p>Tests share it and its database, so they use table names of their own. {@link #close()} stops
 * what the fixture started and leaves an external server running.
 */
public abstract class DatabaseServer implements AutoCloseable {

    private final ServerKind kind;
    private final String scheme;
    private final String host;
    private final int port;
    private final String database;
    private final String username;
    private final String password;
    private final @Nullable Workspace workspace;
    private final @Nullable ManagedProcess process;
    private final @Nullable AutoCloseable container;
    private volatile boolean closed;

    DatabaseServer(
            ServerKind kind,
            String scheme,
            String host,
            int port,
            String database,
            String username,
            String password,
            @Nullable Workspace workspace,
            @Nullable ManagedProcess process,
            @Nullable AutoCloseable container) {
        this.kind = kind;
        this.scheme = scheme;
        this.host = host;
        this.port = port;
        this.database = database;
        this.username = username;
        this.password = password;
        this.workspace = workspace;
        this.process = process;
        this.container = container;
    }

    /**
     * Returns where the server comes from.
     *
     * @return the kind of server
     */
    public ServerKind kind() {
        return kind;
    }

    /**
     * Returns the JDBC URL, without credentials: {@code jdbc:<scheme>://host:port/database}.
     *
     * @return the URL to hand to a driver or to {@code spring.datasource.url}
     */
    public String jdbcUrl() {
        return "jdbc:" + scheme + "://" + host + ":" + port + "/" + database;
    }

    /**
     * Returns the host to connect to.
     *
     * @return the host name or address, {@code 127.0.0.1} for a server the fixture started
     */
    public String host() {
        return host;
    }

    /**
     * Returns the TCP port to connect to; a free port for a server the fixture started.
     *
     * @return the port
     */
    public int port() {
        return port;
    }

    /**
     * Returns the name of the database the tests use.
     *
     * @return {@code test} unless an external server's URL names another
     */
    public String database() {
        return database;
    }

    /**
     * Returns the user to connect as; it may create and drop tables in {@link #database()}.
     *
     * @return the user name
     */
    public String username() {
        return username;
    }

    /**
     * Returns the password of {@link #username()}.
     *
     * @return the password, empty for a server the fixture started
     */
    public String password() {
        return password;
    }

    /**
     * Returns the process id of a server the fixture started.
     *
     * @return the pid of the server's main process
     * @throws TestAbortedException if the fixture did not start the server as a process
     */
    public long pid() {
        if (process == null) {
            throw new TestAbortedException(this + " is not a process the fixture started");
        }
        return process.pid();
    }

    /** Returns the directory of a server the fixture started, or {@code null}. */
    @Nullable Path dir() {
        return workspace == null ? null : workspace.dir();
    }

    boolean isClosed() {
        return closed;
    }

    /**
     * Stops the server and deletes its directory if the fixture started it, stops a container, and
     * leaves an external server running. Calling it again does nothing.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (workspace != null) {
            workspace.close();
        }
        if (container != null) {
            try {
                container.close();
            } catch (Exception ex) {
                throw new IllegalStateException("Could not stop " + container, ex);
            }
        }
    }

    @Override
    public String toString() {
        String what =
                switch (kind) {
                    case MANAGED -> "managed, dir " + dir();
                    case CONTAINER -> String.valueOf(container);
                    case EXTERNAL -> "external";
                };
        return getClass().getSimpleName() + "[" + jdbcUrl() + " as " + username + ", " + what + "]";
    }
}
