package io.redlease.test;

import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import org.opentest4j.TestAbortedException;

/**
 * A server a fixture hands to tests: a process the fixture started (with its directory), a Docker
 * container, or an external server it only connects to. {@link #close()} stops what the fixture
 * started and leaves an external server running.
 */
public abstract class FixtureServer implements AutoCloseable {

    private final ServerKind kind;
    private final @Nullable Workspace workspace;
    private final @Nullable ManagedProcess process;
    private final @Nullable AutoCloseable container;
    private volatile boolean closed;

    FixtureServer(
            ServerKind kind,
            @Nullable Workspace workspace,
            @Nullable ManagedProcess process,
            @Nullable AutoCloseable container) {
        this.kind = kind;
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

    /** Describes where the server comes from, for {@link #toString()}. */
    String origin() {
        return switch (kind) {
            case MANAGED -> "managed, dir " + dir();
            case CONTAINER -> String.valueOf(container);
            case EXTERNAL -> "external";
        };
    }
}
