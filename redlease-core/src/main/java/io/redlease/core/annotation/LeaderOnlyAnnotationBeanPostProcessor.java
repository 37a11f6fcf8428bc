package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.UnknownElectionException;
import io.redlease.core.scheduling.SlotJobs;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.LinkedHashMap;
import java.util.Map;
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
import org.springframework.beans.factory.config.SingletonBeanRegistry;
import org.springframework.core.Ordered;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Applies {@link LeaderOnly} to beans: proxies every bean with an annotated method or type (JDK or
 * CGLIB proxy, as for other Spring advice) so that the annotated methods run through {@link
 * LeaderOnlyInterceptor}.
 *
 * <p>Needs an {@link Elections} bean. When a bean is created, each annotated method is checked
 * ({@link LeaderOnlyRules}): its election id must exist, a method that is skipped when not leading
 * must not return a primitive, and reactive methods are refused. The advice runs outside advice
 * already on the bean ({@code @Transactional}, aspects), so a follower's skipped call opens no
 * transaction; {@code @Async}, applied after it, still hands the call to its executor first, and
 * the check runs on the executing thread. The post-processor runs before {@code @Scheduled} is
 * processed so scheduled calls go through it. Declare it from a {@code static @Bean} method.
 *
 * <p>Once-per-slot methods ({@code oncePerSlot = true}) are registered with the application's
 * {@link SlotJobs}, which this post-processor creates and registers as the bean {@value
 * #SLOT_JOBS_BEAN_NAME}.
 */
public class LeaderOnlyAnnotationBeanPostProcessor
        extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    /** The name under which the application's {@link SlotJobs} are registered. */
    public static final String SLOT_JOBS_BEAN_NAME = "redleaseSlotJobs";

    private static final long serialVersionUID = 1L;

    private transient @Nullable Supplier<Elections> elections;

    private transient @Nullable SlotJobs slotJobs;

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
        SlotJobs jobs = new SlotJobs(lookup);
        this.slotJobs = jobs;
        if (beanFactory instanceof SingletonBeanRegistry registry
                && !beanFactory.containsBean(SLOT_JOBS_BEAN_NAME)) {
            registry.registerSingleton(SLOT_JOBS_BEAN_NAME, jobs);
        }
        Pointcut pointcut =
                new ComposablePointcut(new AnnotationMatchingPointcut(LeaderOnly.class, true))
                        .union(new AnnotationMatchingPointcut(null, LeaderOnly.class, true));
        this.advisor =
                new DefaultPointcutAdvisor(
                        pointcut, new LeaderOnlyInterceptor(lookup, jobs::returnedPublisher));
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
        Map<Method, SlotJobs.Definition> jobs = validate(type, beanName);
        Object proxy = super.postProcessAfterInitialization(bean, beanName);
        jobs.forEach((method, definition) -> slotJobs().register(definition, proxy, method));
        return proxy;
    }

    private Map<Method, SlotJobs.Definition> validate(Class<?> type, String beanName) {
        LeaderOnlyRules.checkType(type, beanName);
        Map<Method, SlotJobs.Definition> jobs = new LinkedHashMap<>();
        // Each method once, as the class finally declares it (an override replaces its original).
        for (Method method :
                ReflectionUtils.getUniqueDeclaredMethods(
                        type, ReflectionUtils.USER_DECLARED_METHODS)) {
            LeaderOnly leaderOnly = LeaderOnlyInterceptor.find(method, type);
            if (leaderOnly != null && isAdvisable(method)) {
                LeaderOnlyRules.check(method, leaderOnly, beanName);
                checkElection(method, leaderOnly, beanName);
                SlotJobs.Definition job =
                        LeaderOnlyRules.slotJob(method, type, leaderOnly, beanName);
                if (job != null) {
                    jobs.put(method, job);
                }
            }
        }
        return jobs;
    }

    private static boolean isAdvisable(Method method) {
        int modifiers = method.getModifiers();
        return !Modifier.isStatic(modifiers)
                && !Modifier.isPrivate(modifiers)
                && method.getDeclaringClass() != Object.class;
    }

    private void checkElection(Method method, LeaderOnly leaderOnly, String beanName) {
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
