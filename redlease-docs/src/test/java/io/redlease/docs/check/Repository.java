package io.redlease.docs.check;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The repository the checks read: its root and its Markdown files. */
final class Repository {

    private Repository() {}

    /**
     * Returns the repository's root: the nearest directory above the working directory (the
     * module's, when Maven runs the tests) that holds README.md and the redlease-docs module.
     */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path current = dir; current != null; current = current.getParent()) {
            if (Files.isRegularFile(current.resolve("README.md"))
                    && Files.isDirectory(current.resolve("redlease-docs"))) {
                return current;
            }
        }
        throw new IllegalStateException(
                "No repository root (README.md beside redlease-docs) above " + dir);
    }

    /** Returns README.md, CONTRIBUTING.md and every Markdown file under docs/, sorted. */
    static List<Path> guide() {
        Path root = root();
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            return Stream.concat(
                            Stream.of(root.resolve("README.md"), root.resolve("CONTRIBUTING.md"))
                                    .filter(Files::isRegularFile),
                            docs.filter(path -> path.toString().endsWith(".md")).sorted())
                    .toList();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /** Returns every Markdown file of the repository outside build output and hidden folders. */
    static List<Path> markdown() {
        Path root = root();
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(path -> path.toString().endsWith(".md"))
                    .filter(path -> !excluded(root.relativize(path)))
                    .sorted()
                    .toList();
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static boolean excluded(Path relative) {
        for (Path part : relative) {
            String name = part.toString();
            if (name.equals("target") || name.equals("node_modules") || name.startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    /** Returns a path relative to the root, with forward slashes, for messages. */
    static String display(Path path) {
        return root().relativize(path.toAbsolutePath()).toString().replace('\\', '/');
    }

    /** Reads a file's lines. */
    static List<String> lines(Path path) {
        try {
            return Files.readAllLines(path);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
