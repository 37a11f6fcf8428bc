package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

/** The runtime hints a native image needs for the unknown-key warning. */
class KnownPropertiesRuntimeHintsTests {

    @Test
    void theMetadataAndTheMapValueTypesAreKept() {
        RuntimeHints hints = new RuntimeHints();
        new KnownPropertiesRuntimeHints().registerHints(hints, getClass().getClassLoader());
        assertThat(RuntimeHintsPredicates.resource().forResource(KnownProperties.METADATA))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(RedleaseProperties.Election.class))
                .accepts(hints);
        assertThat(RuntimeHintsPredicates.reflection().onType(RedleasePartitionProperties.class))
                .accepts(hints);
    }

    @Test
    void theRegistrarIsDeclaredForAot() {
        List<RuntimeHintsRegistrar> registrars =
                SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                        .load(RuntimeHintsRegistrar.class);
        assertThat(registrars).hasAtLeastOneElementOfType(KnownPropertiesRuntimeHints.class);
    }
}
