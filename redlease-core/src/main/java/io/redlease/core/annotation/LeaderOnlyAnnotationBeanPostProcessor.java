package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.UnknownElectionException;
import io.redlease.core.annotation.LeaderOnly.WhenNotLeader;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
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

    private transient @Nullable SlotJobs slotJobs;

    private transient @Nullable ConfigurableBeanFactory configurableBeanFactory;

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
        this.slotJobs = new SlotJobs(beanFactory, lookup);
        this.configurableBeanFactory =
                beanFactory instanceof ConfigurableBeanFactory configurable ? configurable : null;
        Pointcut pointcut =
                new ComposablePointcut(new AnnotationMatchingPointcut(LeaderOnly.class, true))
                        .union(new AnnotationMatchingPointcut(null, LeaderOnly.class, true));
        this.advisor =
                new DefaultPointcutAdvisor(pointcut, new LeaderOnlyInterceptor(lookup, slotJobs));
    }

    /** Returns the application's once-per-slot jobs. */
    public SlotJobs slotJobs() {
        SlotJobs jobs = slotJobs;
        if (jobs == null) {
            throw new IllegalStateException("redlease: the post-processor has no bean factory yet");
        }
        return jobs;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (!isEligible(type)) {
            return super.postProcessAfterInitialization(bean, beanName);
        }
        List<SlotJobDefinition> definitions = validate(type, beanName);
        Object proxy = super.postProcessAfterInitialization(bean, beanName);
        if (!definitions.isEmpty()) {
            Object target = target(bean);
            for (SlotJobDefinition definition : definitions) {
                slotJobs()
                        .register(
                                target,
                                definition.method().getName(),
                                definition.create(slotJobs(), proxy));
            }
        }
        return proxy;
    }

    private static Object target(Object bean) {
        if (bean instanceof Advised advised) {
            try {
                Object target = advised.getTargetSource().getTarget();
                if (target != null) {
                    return target;
                }
            } catch (Exception ex) {
                throw new IllegalStateException("redlease: cannot reach the target of " + bean, ex);
            }
        }
        return bean;
    }

    private List<SlotJobDefinition> validate(Class<?> type, String beanName) {
        LeaderOnly onType = AnnotatedElementUtils.findMergedAnnotation(type, LeaderOnly.class);
        if (onType != null
                && (onType.oncePerSlot()
                        || onType.missedSlots() != MissedSlots.DEFAULT
                        || onType.maxCatchUp() != 0)) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @LeaderOnly on type "
                            + type.getName()
                            + " sets oncePerSlot, missedSlots or maxCatchUp, which apply to one"
                            + " @Scheduled method each; put @LeaderOnly(oncePerSlot = true) on the"
                            + " methods instead");
        }
        List<SlotJobDefinition> definitions = new ArrayList<>();
        ReflectionUtils.doWithMethods(
                type,
                method -> {
                    LeaderOnly leaderOnly = LeaderOnlyInterceptor.find(method, type);
                    if (leaderOnly != null && isAdvisable(method)) {
                        check(method, leaderOnly, beanName);
                        SlotJobDefinition definition =
                                SlotJobDefinition.of(method, leaderOnly, beanName, this::resolve);
                        if (definition != null) {
                            definitions.add(definition);
                        }
                    }
                },
                ReflectionUtils.USER_DECLARED_METHODS);
        return definitions;
    }

    private String resolve(String value) {
        ConfigurableBeanFactory factory = configurableBeanFactory;
        String resolved = factory == null ? value : factory.resolveEmbeddedValue(value);
        return resolved == null ? "" : resolved;
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
