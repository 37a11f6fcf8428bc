package io.redlease.boot.test;

import io.redlease.core.Elections;
import io.redlease.test.RedisServer;
import io.redlease.test.RedisServers;
import java.lang.reflect.Field;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.core.env.MapPropertySource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.util.ReflectionUtils;

/** Applies {@link TestRedis} to the contexts of annotated test classes. */
class TestRedisContextCustomizerFactory implements ContextCustomizerFactory {

    static final String SERVICE_CONNECTION =
            "org.springframework.boot.testcontainers.service.connection.ServiceConnection";

    @Override
    public @Nullable ContextCustomizer createContextCustomizer(
            Class<?> testClass, List<ContextConfigurationAttributes> configAttributes) {
        if (!TestContextAnnotationUtils.hasAnnotation(testClass, TestRedis.class)) {
            return null;
        }
        return new TestRedisContextCustomizer(!hasServiceConnection(testClass));
    }

    /** Whether the class or an enclosing class has a {@code @ServiceConnection} field. */
    static boolean hasServiceConnection(Class<?> testClass) {
        for (Class<?> type = testClass; type != null; type = type.getEnclosingClass()) {
            boolean[] found = {false};
            ReflectionUtils.doWithFields(
                    type,
                    field -> found[0] = true,
                    (Field field) ->
                            MergedAnnotations.from(field, SearchStrategy.DIRECT)
                                    .isPresent(SERVICE_CONNECTION));
            if (found[0]) {
                return true;
            }
        }
        return false;
    }

    /**
     * Points the context at the shared Redis (unless a service connection does) and adds the
     * tester.
     */
    static final class TestRedisContextCustomizer implements ContextCustomizer {

        static final String PROPERTY_SOURCE = "redleaseTestRedis";

        static final String TESTER_BEAN = "redleaseTester";

        private final boolean startRedis;

        TestRedisContextCustomizer(boolean startRedis) {
            this.startRedis = startRedis;
        }

        boolean startsRedis() {
            return startRedis;
        }

        @Override
        public void customizeContext(
                ConfigurableApplicationContext context, MergedContextConfiguration config) {
            if (startRedis) {
                RedisServer server = RedisServers.shared();
                context.getEnvironment()
                        .getPropertySources()
                        .addFirst(
                                new MapPropertySource(
                                        PROPERTY_SOURCE,
                                        Map.of("spring.data.redis.url", server.url())));
            }
            ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
            if (beanFactory instanceof BeanDefinitionRegistry registry
                    && !registry.containsBeanDefinition(TESTER_BEAN)) {
                RootBeanDefinition definition =
                        new RootBeanDefinition(
                                RedleaseTester.class,
                                () ->
                                        RedleaseTester.of(
                                                beanFactory.getBean(Elections.class),
                                                beanFactory.getBean(RedisConnectionFactory.class)));
                definition.setLazyInit(true);
                registry.registerBeanDefinition(TESTER_BEAN, definition);
            }
        }

        @Override
        public boolean equals(@Nullable Object other) {
            return other instanceof TestRedisContextCustomizer customizer
                    && customizer.startRedis == startRedis;
        }

        @Override
        public int hashCode() {
            return Boolean.hashCode(startRedis);
        }
    }
}
