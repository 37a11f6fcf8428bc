package io.redlease.core.annotation;

import io.redlease.core.Elections;
import io.redlease.core.UnknownElectionException;
import io.redlease.core.scheduling.SlotJobs;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.HierarchicalBeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.beans.factory.config.SingletonBeanRegistry;
import org.springframework.beans.factory.support.AbstractBeanFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.ScheduledAnnotationBeanPostProcessor;
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
 * the check runs on the executing thread ({@code @Async} ordered inside is refused). Innermost, a
 * guard checks the call's term again right before each blocking method. The post-processor runs
 * before {@code @Scheduled} is processed so scheduled calls go through it. Declare it from a {@code
 * static @Bean} method.
 *
 * <p>Once-per-slot methods ({@code oncePerSlot = true}) are registered with the application's
 * {@link SlotJobs}, which this post-processor creates and registers as the bean {@value
 * #SLOT_JOBS_BEAN_NAME}.
 *
 * <p>Calls skipped because this instance does not lead are reported to the bean factory's {@link
 * LeaderOnlySkipListener} beans, and every call to the {@link LeaderOnlyRunListener} beans (around
 * its run), both found once all singletons exist.
 */
public class LeaderOnlyAnnotationBeanPostProcessor
        extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {

    /** The name under which the application's {@link SlotJobs} are registered. */
    public static final String SLOT_JOBS_BEAN_NAME = "redleaseSlotJobs";

    private static final long serialVersionUID = 1L;

    private static final Log logger =
            LogFactory.getLog(LeaderOnlyAnnotationBeanPostProcessor.class);

    private transient @Nullable Supplier<Elections> elections;

    private transient @Nullable SlotJobs slotJobs;

    private transient @Nullable BeanFactory factory;

    /** The singleton beans with {@code @LeaderOnly} methods, by name, with their classes. */
    private final transient Map<String, Class<?>> advisedBeans = new ConcurrentHashMap<>();

    /** The run guard on each singleton bean's proxy, by bean name. */
    private final transient Map<String, Advisor> runGuards = new ConcurrentHashMap<>();

    /**
     * The proxies of beans that are not singletons created before the singletons exist (injected
     * into one): their run guard is moved innermost once the singletons exist.
     */
    private final transient List<Advised> startupPrototypes =
            Collections.synchronizedList(new ArrayList<>());

    /** The interceptor applying {@code @LeaderOnly}; null until the bean factory is set. */
    private transient @Nullable LeaderOnlyInterceptor interceptor;

    /** Whether the singletons exist: beans proxied after that are checked at each call. */
    private transient volatile boolean singletonsInstantiated;

    /** The skip listeners, found once the singletons exist; none before. */
    private transient volatile List<LeaderOnlySkipListener> skipListeners = List.of();

    private transient volatile List<LeaderOnlyRunListener> runListeners = List.of();

    /** Reports each call to the {@link LeaderOnlyRunListener} beans. */
    private final transient LeaderOnlyRuns runs = new LeaderOnlyRuns(() -> runListeners);

    /** The {@code @LeaderOnly} methods of the singleton beans, told to the skip listeners. */
    private final transient Set<LeaderOnlySkipListener.MethodRef> advisedMethods =
            new LinkedHashSet<>();

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
        jobs.setRuns(runs);
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
        LeaderOnlyInterceptor leaderOnly =
                new LeaderOnlyInterceptor(
                        lookup,
                        jobs::returnedPublisher,
                        new SkipReports(() -> skipListeners),
                        runs);
        this.interceptor = leaderOnly;
        this.advisor = new DefaultPointcutAdvisor(pointcut, leaderOnly);
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
        Map<Method, SlotJobs.Definition> jobs = new LinkedHashMap<>();
        validate(type, beanName, jobs);
        Object proxy = super.postProcessAfterInitialization(bean, beanName);
        if (proxy != bean
                && bean instanceof Advised frozen
                && frozen.isFrozen()
                && frozen.getAdvisors().length > 0) {
            // A frozen proxy made before this post-processor, wrapped in a proxy of its own: the
            // frozen proxy's advice would run between @LeaderOnly's check and the method, where no
            // check could see a term pass its deadline.
            throw new BeanCreationException(
                    beanName,
                    "redlease: bean '"
                            + beanName
                            + "' of "
                            + type.getName()
                            + " has @LeaderOnly methods, but it is a frozen proxy with advice of"
                            + " its own ("
                            + frozen.getAdvisors()[0].getAdvice().getClass().getName()
                            + (frozen.getAdvisors().length > 1 ? ", ..." : "")
                            + "); @LeaderOnly could only wrap it, so that advice would run after"
                            + " the term's check and could start the method past the term's"
                            + " deadline; do not freeze that proxy, so that @LeaderOnly's advice"
                            + " joins its chain");
        }
        if (!(proxy instanceof AopInfrastructureBean)
                && !(proxy instanceof Advised advised && carriesLeaderOnly(advised))) {
            // A proxy made before this post-processor that it can neither advise (frozen, or
            // opaque) nor proxy again (a JDK proxy whose interfaces do not carry @LeaderOnly):
            // the methods would run on every instance.
            throw new BeanCreationException(
                    beanName,
                    "redlease: bean '"
                            + beanName
                            + "' of "
                            + type.getName()
                            + " has @LeaderOnly methods, but it is a proxy made earlier that"
                            + " @LeaderOnly's advice cannot be added to (frozen or opaque, with the"
                            + " annotation on the class rather than on the proxied interface); do"
                            + " not freeze that proxy, or annotate the interface's methods, or"
                            + " proxy the class (proxyTargetClass = true)");
        }
        boolean singleton = isSingleton(beanName);
        if (proxy instanceof Advised advised && carriesLeaderOnly(advised)) {
            // Innermost: the method itself starts only inside the term its call was admitted in
            // (for a partitioned method, its partition's), checked again right before it. Only on
            // a proxy that runs @LeaderOnly's own advice: not on one this post-processor left
            // alone (a scoped proxy, whose target bean has a proxy of its own; a frozen proxy).
            Advisor guard = new DefaultPointcutAdvisor(GUARDED, runGuard());
            advised.addAdvisor(guard);
            if (singleton && !singletonsInstantiated) {
                advisedBeans.put(beanName, type);
                runGuards.put(beanName, guard);
            } else if (!singletonsInstantiated) {
                startupPrototypes.add(advised);
            }
        }
        LeaderOnlyInterceptor leaderOnly = interceptor;
        if ((!singleton || singletonsInstantiated) && leaderOnly != null) {
            leaderOnly.lateBean(); // not seen by the startup checks: checked at each call
        }
        jobs.forEach((method, definition) -> slotJobs().register(definition, proxy, method));
        return proxy;
    }

    /**
     * Finds the {@link LeaderOnlySkipListener} beans; moves each run guard innermost, past advice
     * that post-processors after this one added to the end of the bean's advice, and refuses
     * methods that asynchronous advice applies to where it may not ({@link
     * LeaderOnlyRules#asyncRefusal}; the proxies are complete once every singleton exists).
     */
    @Override
    public void afterSingletonsInstantiated() {
        if (factory instanceof ListableBeanFactory listable) {
            List<LeaderOnlySkipListener> listeners =
                    List.copyOf(
                            listable.getBeanProvider(LeaderOnlySkipListener.class)
                                    .orderedStream()
                                    .toList());
            List<LeaderOnlySkipListener.MethodRef> methods;
            synchronized (advisedMethods) {
                methods = List.copyOf(advisedMethods);
            }
            for (LeaderOnlySkipListener listener : listeners) {
                for (LeaderOnlySkipListener.MethodRef method : methods) {
                    try {
                        listener.onAdvised(method);
                    } catch (RuntimeException ex) {
                        logger.warn(
                                "redlease: LeaderOnlySkipListener "
                                        + listener
                                        + " failed for "
                                        + method.name(),
                                ex);
                    }
                }
            }
            skipListeners = listeners;
            runListeners =
                    List.copyOf(
                            listable.getBeanProvider(LeaderOnlyRunListener.class)
                                    .orderedStream()
                                    .toList());
        }
        if (!(factory instanceof SingletonBeanRegistry registry)) {
            return;
        }
        singletonsInstantiated = true;
        List<Advised> prototypes;
        synchronized (startupPrototypes) {
            prototypes = List.copyOf(startupPrototypes);
            startupPrototypes.clear();
        }
        prototypes.forEach(LeaderOnlyRunGuard::moveInnermost);
        if (factory instanceof ConfigurableBeanFactory configurable) {
            // Beans created from now on (lazy singletons, prototypes) pass every post-processor
            // before this one, which moves their run guard innermost before their first call.
            configurable.addBeanPostProcessor(
                    new BeanPostProcessor() {
                        @Override
                        public Object postProcessAfterInitialization(Object bean, String name) {
                            if (bean instanceof Advised advised) {
                                LeaderOnlyRunGuard.moveInnermost(advised);
                            }
                            return bean;
                        }
                    });
        }
        advisedBeans.forEach(
                (beanName, type) -> {
                    Object bean = registry.getSingleton(beanName);
                    if (bean != null) {
                        Advisor guard = runGuards.get(beanName);
                        if (guard != null
                                && bean instanceof Advised advised
                                && advised.removeAdvisor(guard)) {
                            advised.addAdvisor(guard);
                        }
                        LeaderOnlyRules.checkNotAsync(bean, type, beanName);
                    }
                });
    }

    /** Returns whether the proxy runs {@code @LeaderOnly}'s advice. */
    private static boolean carriesLeaderOnly(Advised advised) {
        for (Advisor advisor : advised.getAdvisors()) {
            if (advisor.getAdvice() instanceof LeaderOnlyInterceptor) {
                return true;
            }
        }
        return false;
    }

    /** Matches the methods the run guard checks ({@link LeaderOnlyRunGuard#guards}). */
    private static final Pointcut GUARDED =
            new StaticMethodMatcherPointcut() {
                @Override
                public boolean matches(Method method, Class<?> targetClass) {
                    return LeaderOnlyRunGuard.guards(method, targetClass);
                }
            };

    private LeaderOnlyRunGuard runGuard() {
        Supplier<Elections> lookup = elections;
        if (lookup == null) {
            throw new IllegalStateException("redlease: the post-processor has no bean factory yet");
        }
        return new LeaderOnlyRunGuard(lookup);
    }

    /**
     * Checks the bean's annotated methods, puts its once-per-slot jobs in {@code jobs}, and returns
     * whether it has a method that runs once per owned partition.
     */
    private boolean validate(
            Class<?> type, String beanName, Map<Method, SlotJobs.Definition> jobs) {
        LeaderOnlyRules.checkType(type, beanName);
        boolean singleton = isSingleton(beanName);
        boolean partitioned = false;
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
            LeaderOnlyRules.check(method, type, leaderOnly, beanName);
            checkElection(method, leaderOnly, beanName);
            if (singleton) {
                advised(type, method, leaderOnly);
            }
            partitioned |= !leaderOnly.partitions().isEmpty();
            SlotJobs.Definition job =
                    LeaderOnlyRules.slotJob(method, type, leaderOnly, beanName, this::resolve);
            if (job == null
                    && AnnotatedElementUtils.hasAnnotation(method, Scheduled.class)
                    && !schedulesAnnotatedMethods()) {
                logger.warn(
                        "redlease: @LeaderOnly method "
                                + method.toGenericString()
                                + " of bean '"
                                + beanName
                                + "' is @Scheduled, but nothing in this context schedules"
                                + " @Scheduled methods (no @EnableScheduling): while this instance"
                                + " leads (or owns partitions) it runs only when called; add"
                                + " @EnableScheduling, or keep this instance out of the election");
            }
            if (job != null) {
                if (!singleton) {
                    throw LeaderOnlyRules.invalid(
                            beanName,
                            method,
                            "sets oncePerSlot = true on a bean that is not a singleton: every"
                                    + " instance would run every slot; make the bean a singleton");
                }
                if (!job.disabled() && !schedulesAnnotatedMethods()) {
                    throw LeaderOnlyRules.invalid(
                            beanName,
                            method,
                            "sets oncePerSlot = true, but nothing in this context schedules"
                                    + " @Scheduled methods (no @EnableScheduling), so its slots"
                                    + " would never run while this instance leads (or owns"
                                    + " partitions); add"
                                    + " @EnableScheduling, or, where scheduling is off on purpose,"
                                    + " leave the job's bean out of this context too (or set"
                                    + " redlease.enabled=false so that this instance does not"
                                    + " contend)");
                }
                jobs.put(method, job);
            }
        }
        return partitioned;
    }

    /**
     * Returns whether Spring's {@code @Scheduled} processing applies to this context's beans: its
     * post-processor is registered in this bean factory ({@code @EnableScheduling}). Unknown
     * factories are given the benefit of the doubt.
     */
    private boolean schedulesAnnotatedMethods() {
        return !(factory instanceof AbstractBeanFactory beans)
                || beans.getBeanPostProcessors().stream()
                        .anyMatch(ScheduledAnnotationBeanPostProcessor.class::isInstance);
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

    /** Remembers a singleton's method, with its election's name, for the skip listeners. */
    private void advised(Class<?> type, Method method, LeaderOnly leaderOnly) {
        Supplier<Elections> lookup = elections;
        if (lookup == null) {
            return;
        }
        String election =
                leaderOnly.partitions().isEmpty()
                        ? lookup.get().get(leaderOnly.value()).name()
                        : lookup.get().partitioned(leaderOnly.partitions()).name();
        synchronized (advisedMethods) {
            advisedMethods.add(new LeaderOnlySkipListener.MethodRef(election, type, method));
        }
    }

    private void checkElection(Method method, LeaderOnly leaderOnly, String beanName) {
        Supplier<Elections> lookup = elections;
        if (lookup != null && !leaderOnly.partitions().isEmpty()) {
            try {
                lookup.get().partitioned(leaderOnly.partitions());
            } catch (UnknownElectionException ex) {
                throw new BeanCreationException(
                        beanName,
                        "redlease: @LeaderOnly(partitions = \""
                                + leaderOnly.partitions()
                                + "\") on "
                                + method.toGenericString()
                                + " names a partitioned election that is not configured; set"
                                + " redlease.partitions."
                                + leaderOnly.partitions()
                                + ".count, or fix the id",
                        ex);
            }
        } else if (lookup != null) {
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
