package io.redlease.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Who a managed database server runs as. PostgreSQL refuses to run as root (and MariaDB needs to be
 * told): when the tests run as root, as CI does, the fixtures run the server as the package's own
 * unprivileged user ({@code postgres}, {@code mysql}) or else {@code nobody}, through {@code
 * setpriv} (or {@code runuser}) from util-linux, and hand that user the server's directory. Run as
 * any other user, a server runs as that user and nothing is wrapped.
 */
final class RunAs {

    private static final Duration ID_TIMEOUT = Duration.ofSeconds(10);
    private static final List<String> TOOL_DIRS = List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin");

    private final @Nullable String user;
    private final int uid;
    private final int gid;
    private final List<String> prefix;

    private RunAs(@Nullable String user, int uid, int gid, List<String> prefix) {
        this.user = user;
        this.uid = uid;
        this.gid = gid;
        this.prefix = prefix;
    }

    /**
     * Decides who runs the server whose directory {@code dir} this JVM just created: this JVM's
     * user, unless that is root.
     *
     * @param dir a directory this JVM created, whose owner tells this JVM's user
     * @param server the server's name, for messages
     * @param users the unprivileged users to try, in order, before {@code nobody}
     * @param envVar the environment variable that names an external server instead, for messages
     */
    static RunAs forDirectory(Path dir, String server, List<String> users, String envVar) {
        if (uidOf(dir) != 0) {
            return new RunAs(null, -1, -1, List.of());
        }
        List<String> candidates = new ArrayList<>(users);
        candidates.add("nobody");
        for (String candidate : candidates) {
            Integer uid = id(candidate, "-u");
            Integer gid = uid == null ? null : id(candidate, "-g");
            if (uid == null || gid == null || uid == 0) {
                continue;
            }
            return new RunAs(candidate, uid, gid, wrapper(candidate, gid, server, envVar));
        }
        throw new IllegalStateException(
                server
                        + " refuses to run as root and none of the users "
                        + candidates
                        + " exists to run it as: run the tests as another user, or set "
                        + envVar);
    }

    private static List<String> wrapper(String user, int gid, String server, String envVar) {
        Binaries tools = Binaries.of(System.getenv("PATH"), true);
        Path setpriv = tools.find("setpriv", TOOL_DIRS);
        if (setpriv != null) {
            return List.of(
                    setpriv.toString(), "--reuid=" + user, "--regid=" + gid, "--init-groups", "--");
        }
        Path runuser = tools.find("runuser", TOOL_DIRS);
        if (runuser != null) {
            return List.of(runuser.toString(), "-u", user, "--");
        }
        throw new IllegalStateException(
                server
                        + " refuses to run as root, and neither setpriv nor runuser (util-linux) is"
                        + " there to run it as "
                        + user
                        + ": install util-linux, run the tests as another user, or set "
                        + envVar);
    }

    /** Returns the command prefixed with what runs it as the server's user. */
    List<String> wrap(List<String> command) {
        if (prefix.isEmpty()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(prefix);
        wrapped.addAll(command);
        return wrapped;
    }

    /** Hands the file or directory tree to the server's user; does nothing for this JVM's user. */
    void own(Path path) {
        if (user == null) {
            return;
        }
        try (Stream<Path> files = Files.walk(path)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Files.setAttribute(file, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
                Files.setAttribute(file, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("Could not hand " + path + " to " + user, ex);
        }
    }

    /** Returns the numeric owner of a file. */
    static int uidOf(Path file) {
        try {
            return (Integer) Files.getAttribute(file, "unix:uid");
        } catch (IOException | UnsupportedOperationException ex) {
            return -1;
        }
    }

    private static @Nullable Integer id(String user, String option) {
        try {
            Process id =
                    new ProcessBuilder("id", option, user)
                            .redirectError(ProcessBuilder.Redirect.DISCARD)
                            .start();
            String out = new String(id.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!Processes.awaitExit(id, ID_TIMEOUT)) {
                id.destroyForcibly();
                return null;
            }
            return id.exitValue() == 0 ? Integer.valueOf(out.strip()) : null;
        } catch (IOException | NumberFormatException ex) {
            return null;
        }
    }

    @Override
    public String toString() {
        return user == null ? "RunAs[this JVM's user]" : "RunAs[" + user + "]";
    }
}
