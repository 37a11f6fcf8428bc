package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.UnknownElectionException;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.Ordered;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Applies {@link LeaderOnly} to beans: proxies every bean with an annotated method or type (JDK or
 * CGLIB proxy, as for other Spring advice) so that the annotated methods run through {@link
 * LeaderOnlyInterceptor}.
 *
 * <p>Needs an {@link Elections} bean. When a bean is created, each annotated method is checked: its
 * election id must exist, and a method that is skipped when not leading must not return a
 * primitive. The advice runs outside advice already on the bean ({@code @Transactional}, aspects),
 * so a follower's skipped call opens no transaction; {@code @Async}, applied after it, still hands
 * the call to its executor first, and the check runs on the executing thread. The post-processor
 * runs before {@code @Scheduled} is processed so scheduled calls go through it. Declare it from a
 * {@code static @Bean} method.
 */
public class LeaderOnlyAnnotationBeanPostProcessor
        extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    private static final long serialVersionUID = 1L;

    private transient @Nullable Supplier<Elections> elections;

    /** Creates the post-processor. */
    public LeaderOnlyAnnotationBeanPostProcessor() {
        setBeforeExistingAdvisors(true);
        setOrder(Ordered.LOWEST_PRECEDENCE - 1);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        Supplier<Elections> lookup =
                SingletonSupplier.of(() -> beanFactory.getBean(Elections.class));
        this.elections = lookup;
        Pointcut pointcut =
                new ComposablePointcut(new AnnotationMatchingPointcut(LeaderOnly.class, true))
                        .union(new AnnotationMatchingPointcut(null, LeaderOnly.class, true));
        this.advisor = new DefaultPointcutAdvisor(pointcut, new LeaderOnlyInterceptor(lookup));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (isEligible(type)) {
            validate(type, beanName);
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    private void validate(Class<?> type, String beanName) {
        ReflectionUtils.doWithMethods(
                type,
                method -> {
                    LeaderOnly leaderOnly = LeaderOnlyInterceptor.find(method, type);
                    if (leaderOnly != null && isAdvisable(method)) {
                        check(method, leaderOnly, beanName);
                    }
                },
                ReflectionUtils.USER_DECLARED_METHODS);
    }

    private static boolean isAdvisable(Method method) {
        int modifiers = method.getModifiers();
        return !Modifier.isStatic(modifiers)
                && !Modifier.isPrivate(modifiers)
                && method.getDeclaringClass() != Object.class;
    }

    private void check(Method method, LeaderOnly leaderOnly, String beanName) {
        Class<?> returnType = method.getReturnType();
        if (leaderOnly.whenNotLeader() == WhenNotLeader.SKIP
                && returnType.isPrimitive()
                && returnType != void.class) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @LeaderOnly method "
                            + method.toGenericString()
                            + " returns "
                            + returnType
                            + ", but a skipped call has no value to return; return void, a"
                            + " wrapper type or Optional, or use whenNotLeader = REJECT");
        }
        Supplier<Elections> lookup = elections;
        if (lookup != null) {
            try {
                lookup.get().get(leaderOnly.value());
            } catch (UnknownElectionException ex) {
                throw new BeanCreationException(
                        beanName,
                        "redlease: @LeaderOnly(\""
                                + leaderOnly.value()
                                + "\") on "
                                + method.toGenericString()
                                + " names an election that is not configured",
                        ex);
            }
        }
    }
}
