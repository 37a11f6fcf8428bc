package io.redlease.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.docs.check.Markdown.Block;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README stays a front door: short, the Quick start on its first screen, and the test command
 * where {@code .ci/run} reads it (the first line of the block after the test-command marker).
 */
class ReadmeTests {

    private final Markdown readme = new Markdown(Repository.root().resolve("README.md"));

    @Test
    void theQuickStartIsOnTheFirstScreenOfAShortReadme() {
        assertThat(readme.lines).as("README.md lines").hasSizeLessThanOrEqualTo(300);
        assertThat(readme.lines.subList(0, 60))
                .as("README.md's first 60 lines")
                .contains("## Quick start");
    }

    @Test
    void theTestCommandFollowsItsMarker() {
        int marker = readme.lines.indexOf("<!-- test-command -->");
        assertThat(marker).as("the <!-- test-command --> marker .ci/run looks for").isNotNegative();
        Block block =
                readme.blocks.stream()
                        .filter(b -> b.fenceLine() > marker)
                        .findFirst()
                        .orElseThrow();
        assertThat(block.fenceLine()).as("the block right after the marker").isEqualTo(marker + 1);
        List<String> command = block.content();
        assertThat(command).hasSize(1);
        assertThat(command.get(0)).startsWith("mvn ");
    }
}
