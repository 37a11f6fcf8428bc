package io.redlease.docs.check;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** Just enough of a Markdown reader for the checks: fenced blocks, links, headings, tables. */
final class Markdown {

    private static final Pattern FENCE = Pattern.compile("^(\\s*)(```+|~~~+)\\s*([\\w+-]*).*$");

    private static final Pattern LINK =
            Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");

    private static final Pattern CODE_SPAN = Pattern.compile("`+[^`]*`+");

    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

    private static final Pattern ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");

    final Path path;

    final List<String> lines;

    final List<Block> blocks = new ArrayList<>();

    /** Whether each line is inside a fenced block (the fences included). */
    private final boolean[] code;

    Markdown(Path path) {
        this.path = path;
        this.lines = Repository.lines(path);
        this.code = new boolean[lines.size()];
        parseBlocks();
    }

    /**
     * A fenced code block: its language, where it starts (the opening fence, 0-based), its content
     * with the fence's indentation removed, and the comment right above it, if any.
     */
    record Block(
            String language,
            int fenceLine,
            int endLine,
            String indent,
            List<String> content,
            String comment) {}

    /** A link outside code: its target and its 1-based line. */
    record Link(String target, int line) {}

    private void parseBlocks() {
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            String fence = open.group(2);
            int end = i + 1;
            while (end < lines.size() && !lines.get(end).strip().equals(fence)) {
                end++;
            }
            List<String> content = new ArrayList<>();
            for (int j = i + 1; j < end && j < lines.size(); j++) {
                String line = lines.get(j);
                content.add(
                        line.startsWith(indent) ? line.substring(indent.length()) : line.strip());
            }
            for (int j = i; j <= end && j < lines.size(); j++) {
                code[j] = true;
            }
            blocks.add(new Block(open.group(3), i, end, indent, content, commentAbove(i)));
            i = end;
        }
    }

    private String commentAbove(int line) {
        for (int i = line - 1; i >= 0; i--) {
            String text = lines.get(i).strip();
            if (text.isEmpty()) {
                continue;
            }
            return text.startsWith("<!--") && text.endsWith("-->") ? text : "";
        }
        return "";
    }

    /** Whether the 0-based line is inside a fenced block (the fences included). */
    boolean isCode(int line) {
        return code[line];
    }

    /** Returns the links outside fenced blocks and code spans. */
    List<Link> links() {
        List<Link> links = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (code[i]) {
                continue;
            }
            Matcher matcher = LINK.matcher(CODE_SPAN.matcher(lines.get(i)).replaceAll(""));
            while (matcher.find()) {
                links.add(new Link(matcher.group(1), i + 1));
            }
        }
        return links;
    }

    /** Returns the anchors GitHub makes for this file's headings, and explicit ones. */
    Set<String> anchors() {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            if (code[i]) {
                continue;
            }
            Matcher explicit = ANCHOR.matcher(lines.get(i));
            while (explicit.find()) {
                anchors.add(explicit.group(1));
            }
            Matcher heading = HEADING.matcher(lines.get(i));
            if (heading.matches()) {
                String slug = slug(heading.group(1));
                int count = seen.merge(slug, 1, Integer::sum);
                anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
            }
        }
        return anchors;
    }

    /**
     * A part of the file from a heading (or the start) to the next heading: its anchor ("" before
     * the first heading), its level (0 before the first heading), its 0-based lines, and its
     * parent, the nearest section above it with a lower level.
     */
    record Section(String anchor, int level, int from, int to, @Nullable Section parent) {}

    /** Returns the file's sections in order. */
    List<Section> sections() {
        List<Section> sections = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        String anchor = "";
        int level = 0;
        int from = 0;
        Section parent = null;
        for (int i = 0; i <= lines.size(); i++) {
            Matcher heading = i < lines.size() && !code[i] ? HEADING.matcher(lines.get(i)) : null;
            if (i < lines.size() && (heading == null || !heading.matches())) {
                continue;
            }
            Section section = new Section(anchor, level, from, i, parent);
            sections.add(section);
            if (i == lines.size()) {
                break;
            }
            level = lines.get(i).indexOf(' ');
            String slug = slug(heading.group(1));
            int count = seen.merge(slug, 1, Integer::sum);
            anchor = count == 1 ? slug : slug + "-" + (count - 1);
            from = i;
            parent = section;
            while (parent != null && parent.level() >= level) {
                parent = parent.parent();
            }
        }
        return sections;
    }

    /** GitHub's heading anchor: lower case, punctuation dropped, spaces made hyphens. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1"); // link text only
        StringBuilder slug = new StringBuilder();
        for (char c : text.toLowerCase(Locale.ROOT).toCharArray()) {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.append(c);
            } else if (c == ' ') {
                slug.append('-');
            }
        }
        return slug.toString();
    }

    /** Returns the rows of every table outside code whose header matches, cells trimmed. */
    List<Row> tableRows(String firstHeader, String otherHeader) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (code[i] || !lines.get(i).strip().startsWith("|")) {
                continue;
            }
            List<String> header = cells(lines.get(i));
            if (header.isEmpty()
                    || !header.get(0).equals(firstHeader)
                    || !header.contains(otherHeader)) {
                continue;
            }
            int column = header.indexOf(otherHeader);
            int j = i + 2; // after the delimiter row
            for (; j < lines.size() && lines.get(j).strip().startsWith("|"); j++) {
                List<String> cells = cells(lines.get(j));
                rows.add(
                        new Row(
                                cells.get(0),
                                column < cells.size() ? cells.get(column) : "",
                                j + 1));
            }
            i = j;
        }
        return rows;
    }

    /** A table row: its first cell, the chosen column's cell and its 1-based line. */
    record Row(String key, String value, int line) {}

    private static List<String> cells(String line) {
        String text = line.strip();
        if (text.startsWith("|")) {
            text = text.substring(1);
        }
        if (text.endsWith("|")) {
            text = text.substring(0, text.length() - 1);
        }
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean inCode = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '`') {
                inCode = !inCode;
            }
            if (c == '\\' && i + 1 < text.length() && text.charAt(i + 1) == '|') {
                cell.append('|');
                i++;
            } else if (c == '|' && !inCode) {
                cells.add(cell.toString().strip());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        cells.add(cell.toString().strip());
        return cells;
    }
}
