package io.redlease.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.docs.check.Markdown.Block;
import io.redlease.docs.check.Snippets.Reference;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every Java or Kotlin block of README.md, CONTRIBUTING.md and docs/ is a tagged region of a
 * compiled source that a test runs, marked {@code <!-- snippet: path#tag -->} right above the
 * block; a block that is deliberately not code says so with {@code <!-- not-compiled: reason -->}.
 * A block that differs from its region fails the build.
 *
 * <p>{@code -Dredlease.docs.update=true} rewrites the blocks from their regions instead.
 */
class SnippetsTests {

    private static final Set<String> CODE = Set.of("java", "kotlin", "kt");

    @Test
    void everyCodeBlockIsItsSourceRegion() throws IOException {
        Path root = Repository.root();
        boolean update = Boolean.getBoolean("redlease.docs.update");
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Path file : Repository.guide()) {
            Markdown markdown = new Markdown(file);
            List<String> rewritten = new ArrayList<>(markdown.lines);
            boolean changed = false;
            for (int b = markdown.blocks.size() - 1;
                    b >= 0;
                    b--) { // bottom up: rewrites keep lines
                Block block = markdown.blocks.get(b);
                String where = Repository.display(file) + ":" + (block.fenceLine() + 1);
                Reference reference = Reference.parse(block.comment());
                if (reference == null) {
                    if (CODE.contains(block.language())
                            && !Snippets.NOT_COMPILED.matcher(block.comment()).matches()) {
                        problems.add(
                                where
                                        + ": a "
                                        + block.language()
                                        + " block without <!-- snippet: path#tag --> above it"
                                        + " (or <!-- not-compiled: reason --> if it is not code)");
                    }
                    continue;
                }
                checked++;
                if (!reference.file().matches("[\\w./-]+/src/(main|test)/[\\w./-]+")) {
                    problems.add(where + ": " + reference + " is not a source file of a module");
                    continue;
                }
                List<String> region;
                try {
                    region = Snippets.region(root, reference);
                } catch (IllegalArgumentException ex) {
                    problems.add(where + ": " + ex.getMessage());
                    continue;
                }
                List<String> shown = Snippets.trimBlankEnds(block.content());
                if (shown.equals(region)) {
                    continue;
                }
                if (update) {
                    for (int i = block.endLine() - 1; i > block.fenceLine(); i--) {
                        rewritten.remove(i);
                    }
                    List<String> indented =
                            region.stream()
                                    .map(line -> line.isEmpty() ? "" : block.indent() + line)
                                    .toList();
                    rewritten.addAll(block.fenceLine() + 1, indented);
                    changed = true;
                } else {
                    problems.add(where + ": differs from " + reference + difference(shown, region));
                }
            }
            if (changed) {
                Files.write(file, rewritten);
            }
        }
        assertThat(problems)
                .as(
                        "Code blocks of the guide that are not their source regions (copy the"
                                + " region, or run this test with -Dredlease.docs.update=true)")
                .isEmpty();
        assertThat(checked).as("snippets checked").isPositive();
    }

    private static String difference(List<String> shown, List<String> region) {
        int i = 0;
        while (i < shown.size() && i < region.size() && shown.get(i).equals(region.get(i))) {
            i++;
        }
        return String.format(
                " at its line %d:%n    block:  %s%n    source: %s",
                i + 1,
                i < shown.size() ? shown.get(i) : "(ends)",
                i < region.size() ? region.get(i) : "(ends)");
    }
}
