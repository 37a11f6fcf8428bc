package io.redlease.test;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Finds the server binaries the fixtures start: on the {@code PATH}, then in the usual install
 * locations (for example {@code /usr/lib/postgresql/<version>/bin}, newest version first).
 *
 * <p>The system property {@value #PATH_PROPERTY}, when set, replaces both: only the directories it
 * lists (separated like the {@code PATH}) are searched. An empty value finds nothing, which is how
 * a test run can see what happens on a machine where the packages are missing.
 */
final class Binaries {

    /** The system property that replaces the {@code PATH} and the usual install locations. */
    static final String PATH_PROPERTY = "redlease.test.serverPath";

    private final List<String> path;
    private final boolean usualLocations;

    private Binaries(List<String> path, boolean usualLocations) {
        this.path = path;
        this.usualLocations = usualLocations;
    }

    /**
     * Returns the lookup of this JVM: {@value #PATH_PROPERTY} if set, else the {@code PATH} and the
     * usual install locations.
     */
    static Binaries fromEnvironment() {
        String override = System.getProperty(PATH_PROPERTY);
        if (override != null) {
            return new Binaries(split(override), false);
        }
        return new Binaries(split(System.getenv("PATH")), true);
    }

    /**
     * Returns a lookup over the given directories only, separated like the {@code PATH}, and the
     * usual install locations if asked.
     */
    static Binaries of(@Nullable String path, boolean usualLocations) {
        return new Binaries(split(path), usualLocations);
    }

    /**
     * Returns the first directory, on the {@code PATH} and then among {@code usualDirs}, that holds
     * every one of {@code names} as an executable file.
     *
     * @param names the executables that must sit side by side, for example {@code initdb} and
     *     {@code postgres}
     * @param usualDirs install locations; a {@code *} segment stands for every subdirectory, newest
     *     version first
     * @return the directory, or {@code null} if there is none
     */
    @Nullable Path findDir(List<String> names, List<String> usualDirs) {
        for (Path dir : candidates(usualDirs)) {
            if (names.stream().allMatch(name -> isExecutable(dir.resolve(name)))) {
                return dir;
            }
        }
        return null;
    }

    /**
     * Returns the first executable called {@code name}, on the {@code PATH} and then among {@code
     * usualDirs}, that {@code acceptable} accepts.
     *
     * @param name the executable's file name
     * @param usualDirs install locations, as for {@link #findDir}
     * @param acceptable rejects files that have the name but cannot be used (a wrapper script)
     * @return the executable, or {@code null} if there is none
     */
    @Nullable Path find(String name, List<String> usualDirs, Predicate<Path> acceptable) {
        for (Path dir : candidates(usualDirs)) {
            Path candidate = dir.resolve(name);
            if (isExecutable(candidate) && acceptable.test(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** Returns {@link #find(String, List, Predicate)} accepting any executable. */
    @Nullable Path find(String name, List<String> usualDirs) {
        return find(name, usualDirs, candidate -> true);
    }

    private List<Path> candidates(List<String> usualDirs) {
        List<Path> dirs = new ArrayList<>();
        for (String entry : path) {
            dirs.add(Path.of(entry));
        }
        if (usualLocations) {
            for (String pattern : usualDirs) {
                dirs.addAll(expand(pattern));
            }
        }
        return dirs;
    }

    /** Expands one {@code *} segment into the existing subdirectories, newest version first. */
    static List<Path> expand(String pattern) {
        int star = pattern.indexOf('*');
        if (star < 0) {
            return List.of(Path.of(pattern));
        }
        int slash = pattern.lastIndexOf('/', star);
        Path parent = Path.of(pattern.substring(0, Math.max(slash, 1)));
        String prefix = pattern.substring(slash + 1, star);
        int end = pattern.indexOf('/', star);
        String suffix = end < 0 ? "" : pattern.substring(end);
        String tail = pattern.substring(star + 1, end < 0 ? pattern.length() : end);
        if (!Files.isDirectory(parent)) {
            return List.of();
        }
        try (Stream<Path> children = Files.list(parent)) {
            return children.map(child -> child.getFileName().toString())
                    .filter(name -> name.startsWith(prefix) && name.endsWith(tail))
                    .filter(name -> name.length() >= prefix.length() + tail.length())
                    .sorted(Comparator.comparing(Binaries::versionKey).reversed())
                    .map(name -> Path.of(parent.toString(), name + suffix))
                    .toList();
        } catch (IOException ex) {
            return List.of();
        }
    }

    /** A sort key that orders {@code 9} before {@code 15} and {@code 3.10.8} after {@code 3.9}. */
    private static String versionKey(String name) {
        StringBuilder key = new StringBuilder();
        for (String part : name.split("(?<=\\d)(?=\\D)|(?<=\\D)(?=\\d)")) {
            if (!part.isEmpty() && Character.isDigit(part.charAt(0)) && part.length() < 10) {
                key.append(String.format("%010d", Long.parseLong(part)));
            } else {
                key.append(part);
            }
        }
        return key.toString();
    }

    private static boolean isExecutable(Path file) {
        return Files.isRegularFile(file) && Files.isExecutable(file);
    }

    private static List<String> split(@Nullable String path) {
        if (path == null || path.isBlank()) {
            return List.of();
        }
        return Arrays.stream(path.split(File.pathSeparator)).filter(s -> !s.isEmpty()).toList();
    }

    @Override
    public String toString() {
        return "Binaries[path=" + path + ", usualLocations=" + usualLocations + "]";
    }
}
