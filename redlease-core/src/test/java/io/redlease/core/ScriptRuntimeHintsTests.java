package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** The runtime hints that a native image needs to load the scripts. */
class ScriptRuntimeHintsTests {

    @Test
    void everyScriptOfTheProtocolIsARegisteredResource() throws Exception {
        RuntimeHints hints = new RuntimeHints();
        new ScriptRuntimeHints().registerHints(hints, getClass().getClassLoader());
        List<String> scripts = scripts();
        assertThat(scripts).contains("acquire.lua", "renew.lua", "release.lua", "fence.lua");
        for (String script : scripts) {
            assertThat(RuntimeHintsPredicates.resource().forResource("io/redlease/core/" + script))
                    .as(script)
                    .accepts(hints);
        }
    }

    @Test
    void resourcesOutsideThePackageAreNotIncluded() {
        RuntimeHints hints = new RuntimeHints();
        new ScriptRuntimeHints().registerHints(hints, getClass().getClassLoader());
        assertThat(RuntimeHintsPredicates.resource().forResource("io/redlease/other/acquire.lua"))
                .rejects(hints);
        assertThat(RuntimeHintsPredicates.resource().forResource("io/redlease/core/Elector.class"))
                .rejects(hints);
    }

    @Test
    void theRegistrarIsDeclaredForAot() {
        List<RuntimeHintsRegistrar> registrars =
                SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                        .load(RuntimeHintsRegistrar.class);
        assertThat(registrars).hasAtLeastOneElementOfType(ScriptRuntimeHints.class);
    }

    /** The {@code .lua} files of the package, as built into the class path. */
    private static List<String> scripts() throws IOException, URISyntaxException {
        Path folder = Path.of(Scripts.class.getResource("acquire.lua").toURI()).getParent();
        try (Stream<Path> files = Files.list(folder)) {
            return files.map(path -> path.getFileName().toString())
                    .filter(file -> file.endsWith(".lua"))
                    .sorted()
                    .toList();
        }
    }
}
