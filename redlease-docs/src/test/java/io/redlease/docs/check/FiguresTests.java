package io.redlease.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.docs.check.Markdown.Link;
import io.redlease.docs.check.Markdown.Section;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every measured figure in the README and the guide names the command that produced it: the part of
 * the page it is in (its section, or a section it is part of) shows the command, or links to a part
 * of the guide that does. A measured figure is a line with a time or a ratio next to a percentile,
 * a maximum, a median or the word "measured".
 */
class FiguresTests {

    private static final String NUMBER = "\\d[\\d.,]*\\s?(ms|µs|s|×)\\b";

    private static final String KIND = "\\b(p50|p95|p99|median|measured|max)\\b";

    private static final Pattern FIGURE =
            Pattern.compile(
                    "(?i)" + KIND + ".*?" + NUMBER + "|" + NUMBER + ".*?" + KIND,
                    Pattern.UNICODE_CASE);

    /** What a command that measures looks like on these pages. */
    private static final Pattern COMMAND =
            Pattern.compile("mvn |benchmarks/run\\.sh|samples/demo\\.sh|java -cp ");

    /** Pages that quote no measurement (a map of test names, some of which read like one). */
    private static final List<String> NOT_MEASURED = List.of("docs/go-test-map.md");

    private final Map<Path, Markdown> pages = new HashMap<>();

    @Test
    void everyMeasuredFigureNamesItsCommand() {
        List<String> unnamed = new ArrayList<>();
        int figures = 0;
        for (Path file : Repository.markdown()) {
            String name = Repository.display(file);
            if (!(name.equals("README.md") || name.startsWith("docs/"))
                    || NOT_MEASURED.contains(name)) {
                continue;
            }
            Markdown page = page(file);
            for (Section section : page.sections()) {
                String figure = firstFigure(page, section);
                if (figure == null) {
                    continue;
                }
                figures++;
                if (!namesCommand(file, page, section)) {
                    unnamed.add(name + "#" + section.anchor() + ": " + figure.strip());
                }
            }
        }
        assertThat(unnamed)
                .as("measured figures whose section neither shows nor links to its command")
                .isEmpty();
        assertThat(figures).as("sections with measured figures").isGreaterThan(10);
    }

    @Test
    void aFigureWithoutItsCommandIsFound() {
        assertThat(FIGURE.matcher("| graceful hand-off | p50 6.89 ms, p99 14.6 ms |").find())
                .isTrue();
        assertThat(FIGURE.matcher("taken within 0.47–1.58 s, measured over six runs").find())
                .isTrue();
        assertThat(FIGURE.matcher("the TTL (5 s by default)").find()).isFalse();
        assertThat(COMMAND.matcher("`benchmarks/run.sh failover --trials 60`").find()).isTrue();
    }

    private Markdown page(Path file) {
        return pages.computeIfAbsent(file, Markdown::new);
    }

    private static String firstFigure(Markdown page, Section section) {
        for (int i = section.from(); i < section.to(); i++) {
            if (!page.isCode(i) && FIGURE.matcher(page.lines.get(i)).find()) {
                return page.lines.get(i);
            }
        }
        return null;
    }

    /** Whether the section, a section it is part of, or a section it links to shows a command. */
    private boolean namesCommand(Path file, Markdown page, Section section) {
        if (showsCommand(page, section)) {
            return true;
        }
        for (Link link : page.links()) {
            int line = link.line() - 1;
            if (line < section.from() || line >= section.to()) {
                continue;
            }
            String target = link.target();
            int hash = target.indexOf('#');
            if (target.matches("^[a-zA-Z][a-zA-Z+.-]*:.*") || hash < 0) {
                continue;
            }
            Path linked =
                    hash == 0
                            ? file
                            : file.getParent().resolve(target.substring(0, hash)).normalize();
            if (!linked.toString().endsWith(".md")) {
                continue;
            }
            Markdown other = page(linked);
            String anchor = target.substring(hash + 1);
            for (Section candidate : other.sections()) {
                if (candidate.anchor().equals(anchor) && showsCommand(other, candidate)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether the section's own lines, or those of a section it is part of, show a command. */
    private static boolean showsCommand(Markdown page, Section section) {
        for (Section s = section; s != null; s = s.parent()) {
            for (int i = s.from(); i < s.to(); i++) {
                if (COMMAND.matcher(page.lines.get(i)).find()) {
                    return true;
                }
            }
        }
        return false;
    }
}
