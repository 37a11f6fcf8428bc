package io.redlease.boot.autoconfigure;

import io.redlease.core.Elections;
import io.redlease.core.annotation.LeaderOnly;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopConfigException;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.Lifecycle;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Finds the beans whose class is annotated {@code @LeaderOnly} and implements {@link Lifecycle},
 * and keeps the application context from starting them: each is wrapped in a class-based proxy
 * whose {@code isAutoStartup()} returns false and whose {@code start()} does nothing unless
 * redlease calls it. {@code stop()}, {@code isRunning()} and {@code getPhase()} reach the bean, so
 * the context still stops a running one on shutdown, before the election releases its lease. The
 * beans are handed to {@link io.redlease.boot.lifecycle.LeaderLifecycles} when the application
 * starts.
 */
final class LeaderOnlyLifecycleBeanPostProcessor implements BeanPostProcessor, Ordered {

    private static final Log logger = LogFactory.getLog("io.redlease.lifecycle");

    /** Set while redlease itself starts a bean. */
    private static final ThreadLocal<Boolean> managedStart = new ThreadLocal<>();

    private final List<Found> found = new CopyOnWriteArrayList<>();

    /**
     * One leader-only lifecycle bean: its lifecycle that redlease may start, and the bean as it was
     * before the proxy (a final {@code isRunning()}, as Spring's JMS containers have, does not
     * reach the bean through the proxy).
     */
    record Found(String beanName, String electionId, Lifecycle lifecycle, Object bean) {}

    /** Returns the beans found so far, each with a lifecycle that redlease may start. */
    List<Found> found() {
        return List.copyOf(found);
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }

    /** Returns whether a class marks a leader-only lifecycle bean. */
    static boolean isLeaderOnlyLifecycle(Class<?> type) {
        return Lifecycle.class.isAssignableFrom(type)
                && AnnotatedElementUtils.hasAnnotation(type, LeaderOnly.class);
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (!isLeaderOnlyLifecycle(type)) {
            return bean;
        }
        LeaderOnly leaderOnly = AnnotatedElementUtils.findMergedAnnotation(type, LeaderOnly.class);
        String electionId =
                leaderOnly == null || leaderOnly.value().isEmpty()
                        ? Elections.DEFAULT
                        : leaderOnly.value();
        if (leaderOnly != null && leaderOnly.oncePerSlot()) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @LeaderOnly(oncePerSlot = true) on the lifecycle bean "
                            + type.getName()
                            + " has no meaning; remove oncePerSlot");
        }
        Object proxy;
        try {
            ProxyFactory factory = new ProxyFactory(bean);
            factory.setProxyTargetClass(true);
            factory.addAdvice(new HeldStart(beanName));
            proxy = factory.getProxy(type.getClassLoader());
        } catch (AopConfigException | IllegalArgumentException ex) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: the @LeaderOnly lifecycle bean "
                            + type.getName()
                            + " cannot be kept from starting with the context: it needs a"
                            + " class-based proxy (make the class non-final with a non-private"
                            + " constructor), or register it with LeaderLifecycles.register"
                            + " and autoStartup false",
                    ex);
        }
        found.add(
                new Found(
                        beanName,
                        electionId,
                        new ManagedStart((Lifecycle) proxy, (Lifecycle) bean),
                        bean));
        return proxy;
    }

    /** Refuses the context's start and auto-start of a leader-only bean. */
    private static final class HeldStart implements MethodInterceptor {

        private final String beanName;

        HeldStart(String beanName) {
            this.beanName = beanName;
        }

        @Override
        public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
            String method = invocation.getMethod().getName();
            if (invocation.getArguments().length == 0) {
                if (method.equals("isAutoStartup")) {
                    return false;
                }
                if (method.equals("start") && managedStart.get() == null) {
                    if (logger.isDebugEnabled()) {
                        logger.debug(
                                "redlease: not starting the leader-only bean '"
                                        + beanName
                                        + "' with the context; it starts when elected");
                    }
                    return null;
                }
            }
            return invocation.proceed();
        }
    }

    /** Starts the proxied bean on behalf of redlease; the rest goes straight through. */
    private static final class ManagedStart implements SmartLifecycle {

        private final Lifecycle bean;

        /** The bean behind the proxy, asked whether it runs (a final isRunning() skips a proxy). */
        private final Lifecycle target;

        ManagedStart(Lifecycle bean, Lifecycle target) {
            this.bean = bean;
            this.target = target;
        }

        @Override
        public void start() {
            managedStart.set(Boolean.TRUE);
            try {
                bean.start();
            } finally {
                managedStart.remove();
            }
        }

        @Override
        public void stop() {
            bean.stop();
        }

        @Override
        public void stop(Runnable callback) {
            if (bean instanceof SmartLifecycle smart) {
                smart.stop(callback);
            } else {
                bean.stop();
                callback.run();
            }
        }

        @Override
        public boolean isRunning() {
            return target.isRunning();
        }

        @Override
        public boolean isAutoStartup() {
            return false;
        }

        @Override
        public int getPhase() {
            return bean instanceof SmartLifecycle smart ? smart.getPhase() : 0;
        }
    }
}
