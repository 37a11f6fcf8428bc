package io.redlease.boot.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.boot.test.TestRedisContextCustomizerFactory.TestRedisContextCustomizer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.test.context.ContextCustomizer;

/** Which test classes get a Redis, and how the customizer takes part in context caching. */
class TestRedisContextCustomizerFactoryTests {

    private final TestRedisContextCustomizerFactory factory =
            new TestRedisContextCustomizerFactory();

    static class Plain {}

    @TestRedis
    static class WithRedis {}

    @TestRedis
    static class WithContainer {

        // Only the annotation matters here; no container is started.
        @ServiceConnection static Object redis;
    }

    static class Inheriting extends WithRedis {}

    @Test
    void aClassWithoutTheAnnotationIsLeftAlone() {
        assertThat(factory.createContextCustomizer(Plain.class, List.of())).isNull();
    }

    @Test
    void anAnnotatedClassGetsTheSharedRedis() {
        ContextCustomizer customizer = factory.createContextCustomizer(WithRedis.class, List.of());
        assertThat(customizer)
                .isInstanceOfSatisfying(
                        TestRedisContextCustomizer.class,
                        c -> assertThat(c.startsRedis()).isTrue());
        assertThat(customizer)
                .isEqualTo(factory.createContextCustomizer(Inheriting.class, List.of()))
                .hasSameHashCodeAs(factory.createContextCustomizer(Inheriting.class, List.of()));
    }

    @Test
    void aServiceConnectionFieldIsTheRedis() {
        ContextCustomizer customizer =
                factory.createContextCustomizer(WithContainer.class, List.of());
        assertThat(customizer)
                .isInstanceOfSatisfying(
                        TestRedisContextCustomizer.class,
                        c -> assertThat(c.startsRedis()).isFalse());
        assertThat(customizer)
                .isNotEqualTo(factory.createContextCustomizer(WithRedis.class, List.of()));
    }
}
