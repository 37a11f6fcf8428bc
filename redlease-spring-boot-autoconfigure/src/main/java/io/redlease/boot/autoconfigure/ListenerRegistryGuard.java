package io.redlease.boot.autoconfigure;

import java.util.Arrays;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Keeps the RabbitMQ and JMS listener endpoint registries from starting leader-only containers on
 * an explicit start: once the context has been refreshed, their {@code start()} (called by {@code
 * context.start()} or directly) starts every container, {@code autoStartup} or not. When
 * leader-only listeners are configured, each such registry is wrapped in a proxy that withholds the
 * {@link ContextRefreshedEvent} from it, so its {@code start()} keeps starting only containers with
 * {@code autoStartup = true} (a leader-only container never has it). Kafka's registry has a setting
 * for the same ({@code alwaysStartAfterRefresh}), which the registrar sets.
 */
final class ListenerRegistryGuard implements BeanPostProcessor, EnvironmentAware, Ordered {

    private static final String RABBIT =
            "org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry";

    private static final String JMS = "org.springframework.jms.config.JmsListenerEndpointRegistry";

    private boolean listeners;

    @Override
    public void setEnvironment(Environment environment) {
        RedleaseProperties properties;
        try {
            properties =
                    Binder.get(environment)
                            .bind("redlease", RedleaseProperties.class)
                            .orElseGet(RedleaseProperties::new);
        } catch (RuntimeException ex) {
            listeners = true; // the properties fail later with their own message; guard meanwhile
            return;
        }
        listeners =
                !properties.getLifecycle().getListeners().isEmpty()
                        || properties.getElections().values().stream()
                                .anyMatch(e -> !e.getLifecycle().getListeners().isEmpty());
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (!listeners || !isRegistry(bean) || isGuarded(bean)) {
            return bean;
        }
        ProxyFactory factory = new ProxyFactory(bean);
        factory.setProxyTargetClass(true);
        factory.addAdvice(new HoldRefresh());
        return factory.getProxy(bean.getClass().getClassLoader());
    }

    /** Returns whether a registry with leader-only containers is guarded (Rabbit and JMS). */
    static boolean guarded(Object registry) {
        return !isRegistry(registry) || isGuarded(registry);
    }

    private static boolean isGuarded(Object bean) {
        return bean instanceof Advised advised
                && Arrays.stream(advised.getAdvisors())
                        .anyMatch(advisor -> advisor.getAdvice() instanceof HoldRefresh);
    }

    /** Withholds the context's refresh event from a registry. */
    private static final class HoldRefresh implements MethodInterceptor {

        @Override
        public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
            if (invocation.getMethod().getName().equals("onApplicationEvent")
                    && invocation.getArguments().length == 1
                    && invocation.getArguments()[0] instanceof ContextRefreshedEvent) {
                return null;
            }
            return invocation.proceed();
        }
    }

    private static boolean isRegistry(@Nullable Object bean) {
        if (bean == null) {
            return false;
        }
        ClassLoader loader = ListenerRegistryGuard.class.getClassLoader();
        return is(bean, RABBIT, loader) || is(bean, JMS, loader);
    }

    private static boolean is(Object bean, String className, ClassLoader loader) {
        if (!ClassUtils.isPresent(className, loader)) {
            return false;
        }
        return ClassUtils.resolveClassName(className, loader).isInstance(bean);
    }
}
