package io.redlease.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.docs.check.Markdown.Link;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every link between files of the repository resolves: the file or folder exists, and an anchor
 * into a Markdown file names one of its headings (as GitHub makes them) or an explicit anchor.
 */
class LinksTests {

    @Test
    void everyLinkInsideTheRepositoryResolves() {
        Path root = Repository.root();
        Map<Path, Set<String>> anchors = new HashMap<>();
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path file : Repository.markdown()) {
            Markdown markdown = new Markdown(file);
            for (Link link : markdown.links()) {
                String target = link.target();
                if (target.matches("^[a-zA-Z][a-zA-Z+.-]*:.*")) { // https:, mailto:, ...
                    continue;
                }
                checked++;
                String where = Repository.display(file) + ":" + link.line() + ": " + target;
                int hash = target.indexOf('#');
                String pathPart = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path resolved =
                        pathPart.isEmpty() ? file : file.getParent().resolve(pathPart).normalize();
                if (!resolved.startsWith(root) || !Files.exists(resolved)) {
                    broken.add(where + " (no such file)");
                    continue;
                }
                if (anchor != null && resolved.toString().endsWith(".md")) {
                    Set<String> known =
                            anchors.computeIfAbsent(resolved, p -> new Markdown(p).anchors());
                    if (!known.contains(anchor)) {
                        broken.add(where + " (no heading with that anchor)");
                    }
                }
            }
        }
        assertThat(broken).as("links inside the repository that do not resolve").isEmpty();
        assertThat(checked).as("links checked").isPositive();
    }
}
