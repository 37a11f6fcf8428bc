package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.UnknownElectionException;
import io.redlease.core.scheduling.SlotJobs;
import java.lang.reflect.Method;
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
import org.springframework.beans.factory.HierarchicalBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
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

    private transient @Nullable BeanFactory factory;

    /** Creates the post-processor. */
    public LeaderOnlyAnnotationBeanPostProcessor() {
        setBeforeExistingAdvisors(true);
        setOrder(Ordered.LOWEST_PRECEDENCE - 1);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.factory = beanFactory;
        Supplier<Elections> lookup =
                SingletonSupplier.of(() -> beanFactory.getBean(Elections.class));
        this.elections = lookup;
        SlotJobs jobs = new SlotJobs(lookup);
        this.slotJobs = jobs;
        // This context's own jobs, even when a parent context has some: its scheduling asks its
        // own bean factory for configurers.
        if (beanFactory instanceof SingletonBeanRegistry registry
                && !(beanFactory instanceof HierarchicalBeanFactory hierarchical
                        ? hierarchical.containsLocalBean(SLOT_JOBS_BEAN_NAME)
                        : beanFactory.containsBean(SLOT_JOBS_BEAN_NAME))) {
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
        if (LeaderOnlyRules.isLifecycleType(type, beanName)) {
            return bean; // a leader-only lifecycle bean: started and stopped with the term
        }
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
        boolean singleton = isSingleton(beanName);
        Map<Method, SlotJobs.Definition> jobs = new LinkedHashMap<>();
        // Each method once, as the class finally declares it (an override replaces its original).
        for (Method method :
                ReflectionUtils.getUniqueDeclaredMethods(
                        type, ReflectionUtils.USER_DECLARED_METHODS)) {
            LeaderOnly leaderOnly = LeaderOnlyInterceptor.find(method, type);
            if (leaderOnly == null || method.getDeclaringClass() == Object.class) {
                continue;
            }
            LeaderOnlyRules.checkAdvisable(method, type, beanName);
            if (!LeaderOnlyRules.isAdvisable(method)) {
                continue; // a method of a @LeaderOnly type that no proxy calls
            }
            LeaderOnlyRules.check(method, leaderOnly, beanName);
            checkElection(method, leaderOnly, beanName);
            SlotJobs.Definition job =
                    LeaderOnlyRules.slotJob(method, type, leaderOnly, beanName, this::resolve);
            if (job != null) {
                if (!singleton) {
                    throw LeaderOnlyRules.invalid(
                            beanName,
                            method,
                            "sets oncePerSlot = true on a bean that is not a singleton: every"
                                    + " instance would run every slot; make the bean a singleton");
                }
                jobs.put(method, job);
            }
        }
        return jobs;
    }

    private boolean isSingleton(String beanName) {
        BeanFactory factory = this.factory;
        return !(factory instanceof ConfigurableListableBeanFactory listable)
                || !listable.containsBeanDefinition(beanName)
                || listable.getBeanDefinition(beanName).isSingleton();
    }

    /** Resolves a {@code @Scheduled} value as Spring does: placeholders, then SpEL. */
    private String resolve(String value) {
        BeanFactory factory = this.factory;
        if (factory instanceof ConfigurableBeanFactory configurable) {
            String resolved = new EmbeddedValueResolver(configurable).resolveStringValue(value);
            return resolved == null ? "" : resolved;
        }
        return value;
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
