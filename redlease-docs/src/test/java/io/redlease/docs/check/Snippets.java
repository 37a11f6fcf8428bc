package io.redlease.docs.check;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Tagged regions of source files, as the guide quotes them: the lines between {@code tag::name[]}
 * and {@code end::name[]}, without the lines of other tags, without leading and trailing blank
 * lines, and without their common indentation.
 */
final class Snippets {

    /** {@code <!-- snippet: path#tag -->}, the path relative to the repository's root. */
    static final Pattern MARKER =
            Pattern.compile("<!--\\s*snippet:\\s*([^#\\s]+)#([\\w.-]+)\\s*-->");

    /** {@code <!-- not-compiled: reason -->}, for a block that is deliberately not code. */
    static final Pattern NOT_COMPILED = Pattern.compile("<!--\\s*not-compiled:\\s*\\S.*-->");

    private static final Pattern TAG_LINE = Pattern.compile(".*\\b(tag|end)::[\\w.-]+\\[\\].*");

    private Snippets() {}

    /** A reference to a region: the file, relative to the root, and the tag. */
    record Reference(String file, String tag) {

        static Reference parse(String comment) {
            Matcher matcher = MARKER.matcher(comment);
            return matcher.matches() ? new Reference(matcher.group(1), matcher.group(2)) : null;
        }

        @Override
        public String toString() {
            return file + "#" + tag;
        }
    }

    /**
     * Returns the region, or throws naming what is missing.
     *
     * @throws IllegalArgumentException if the file, or the tag in it, does not exist
     */
    static List<String> region(Path root, Reference reference) {
        Path file = root.resolve(reference.file());
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("no file " + reference.file());
        }
        List<String> lines = Repository.lines(file);
        int start = -1;
        int end = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("tag::" + reference.tag() + "[]")) {
                start = i;
            } else if (lines.get(i).contains("end::" + reference.tag() + "[]")) {
                end = i;
                break;
            }
        }
        if (start < 0 || end < start) {
            throw new IllegalArgumentException(
                    "no region tag::"
                            + reference.tag()
                            + "[] … end::"
                            + reference.tag()
                            + "[] in "
                            + reference.file());
        }
        List<String> region = new ArrayList<>();
        for (String line : lines.subList(start + 1, end)) {
            if (!TAG_LINE.matcher(line).matches()) {
                region.add(line.stripTrailing());
            }
        }
        return dedent(trimBlankEnds(region));
    }

    /** Returns the lines without trailing spaces, and without leading and trailing blank lines. */
    static List<String> trimBlankEnds(List<String> lines) {
        int from = 0;
        int to = lines.size();
        while (from < to && lines.get(from).isBlank()) {
            from++;
        }
        while (to > from && lines.get(to - 1).isBlank()) {
            to--;
        }
        return lines.subList(from, to).stream().map(String::stripTrailing).toList();
    }

    private static List<String> dedent(List<String> lines) {
        int indent = Integer.MAX_VALUE;
        for (String line : lines) {
            if (!line.isBlank()) {
                indent = Math.min(indent, line.length() - line.stripLeading().length());
            }
        }
        int cut = indent == Integer.MAX_VALUE ? 0 : indent;
        return lines.stream().map(line -> line.isBlank() ? "" : line.substring(cut)).toList();
    }
}
