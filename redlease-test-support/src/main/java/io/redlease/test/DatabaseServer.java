package io.redlease.test;

import org.jspecify.annotations.Nullable;

/**
 * A real database server that tests talk to over JDBC: a process the fixture started, a Docker
 * container or an external server; see {@link PostgresServer} and {@link MariaDbServer}.
 *
 * <p>Tests share it and its database, so they use table names of their own. {@link #close()} stops
 * what the fixture started and leaves an external server running.
 */
public abstract class DatabaseServer extends FixtureServer {

    private final String scheme;
    private final String host;
    private final int port;
    private final String database;
    private final String username;
    private final String password;

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
        super(kind, workspace, process, container);
        this.scheme = scheme;
        this.host = host;
        this.port = port;
        this.database = database;
        this.username = username;
        this.password = password;
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

    @Override
    public String toString() {
        return getClass().getSimpleName()
                + "["
                + jdbcUrl()
                + " as "
                + username
                + ", "
                + origin()
                + "]";
    }
}
