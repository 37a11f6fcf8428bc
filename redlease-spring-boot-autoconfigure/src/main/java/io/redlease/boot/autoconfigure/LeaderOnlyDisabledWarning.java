package io.redlease.boot.autoconfigure;

import io.redlease.core.annotation.LeaderOnly;
import java.lang.reflect.AnnotatedElement;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ReflectionUtils;

/**
 * With {@code redlease.enabled=false}, finds the beans' {@link LeaderOnly @LeaderOnly} methods and,
 * once the singletons are created, warns that they run on every instance.
 */
final class LeaderOnlyDisabledWarning implements BeanPostProcessor, SmartInitializingSingleton {

    private static final Log logger = LogFactory.getLog(LeaderOnlyAutoConfiguration.class);

    private final Map<Class<?>, Boolean> inspected = new ConcurrentHashMap<>();

    private final Set<String> methods = new TreeSet<>();

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        inspected.computeIfAbsent(type, this::inspect);
        return bean;
    }

    private boolean inspect(Class<?> type) {
        if (isAnnotated(type)) {
            add(type.getName() + " (every method)");
            return true;
        }
        ReflectionUtils.doWithMethods(
                type,
                method -> add(type.getName() + "." + method.getName()),
                method ->
                        ReflectionUtils.USER_DECLARED_METHODS.matches(method)
                                && method.getDeclaringClass() != Object.class
                                && isAnnotated(method));
        return true;
    }

    private void add(String method) {
        synchronized (methods) {
            methods.add(method);
        }
    }

    private static boolean isAnnotated(AnnotatedElement element) {
        return MergedAnnotations.from(element, SearchStrategy.TYPE_HIERARCHY)
                .isPresent(LeaderOnly.class);
    }

    @Override
    public void afterSingletonsInstantiated() {
        Set<String> found;
        synchronized (methods) {
            found = new TreeSet<>(methods);
        }
        if (!found.isEmpty()) {
            logger.warn(
                    "redlease: redlease.enabled=false: @LeaderOnly is not applied, so these"
                            + " methods run on"
                            + " every instance of the application: "
                            + found);
        }
    }

    /** Returns the {@code @LeaderOnly} methods found so far, as {@code type.method}. */
    Set<String> methods() {
        synchronized (methods) {
            return Set.copyOf(methods);
        }
    }
}
