package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Helpers shared by the tests of the database and broker fixtures. */
final class ServersTestSupport {

    private ServersTestSupport() {}

    /** Returns whether this JVM runs as root, from the owner of a file it creates. */
    static boolean jvmIsRoot() {
        try {
            Path file = Files.createTempFile("redlease-uid-", ".tmp");
            try {
                return RunAs.uidOf(file) == 0;
            } finally {
                Files.delete(file);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Asserts that the failure is one line with no stack trace, as a test report shows it. */
    static void isOneLineWithoutStackTrace(Throwable failure) {
        assertThat(failure.getMessage()).doesNotContain("\n");
        assertThat(failure.getStackTrace()).isEmpty();
        assertThat(failure.getCause()).isNull();
    }

    /** Returns whether the process has exited (a zombie waiting to be reaped counts as gone). */
    static boolean isGone(long pid) {
        Character state = Processes.state(pid);
        return ProcessHandle.of(pid).map(handle -> !handle.isAlive()).orElse(true)
                || (state != null && state == 'Z');
    }
}
