package io.redlease.jdbc;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
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
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.Ordered;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Applies {@link Fenced} to beans: proxies every bean with an annotated method or type so that the
 * transaction of an annotated call is fenced by {@link TransactionFencing} before the method runs.
 *
 * <p>Needs a {@link TransactionFencing} bean: a bean with {@code @Fenced} methods fails to be
 * created when there is none (its transactions would commit unfenced), naming the method and, when
 * set, why fencing is missing. With {@link #setFailWithoutFencing(boolean) failWithoutFencing} off,
 * such beans are created and every call fails with {@link UnfencedTransactionException} instead.
 * The advice runs inside the transaction advice and inside {@code @LeaderOnly} on the same bean, so
 * the transaction has begun and the term is bound when it runs. Each annotated method's election id
 * is checked when the bean is created. A bean with a static, private or final {@code @Fenced}
 * method, or whose class calls its own fenced methods on {@code this} (bypassing the proxy), fails
 * to be created, naming the method; so does one when there are several {@link TransactionFencing}
 * beans and not exactly one is primary. Declare it from a {@code static @Bean} method.
 */
public class FencedAnnotationBeanPostProcessor
        extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    private static final long serialVersionUID = 1L;

    private transient @Nullable BeanFactory beanFactory;

    private transient Supplier<String> missingFencingReason =
            () -> "Declare a TransactionFencing bean for the fenced DataSource.";

    private boolean failWithoutFencing = true;

    /** Creates the post-processor. */
    public FencedAnnotationBeanPostProcessor() {
        setBeforeExistingAdvisors(false);
        setOrder(Ordered.LOWEST_PRECEDENCE);
    }

    /**
     * Sets what the startup failure says about why there is no {@link TransactionFencing} bean and
     * what to do.
     *
     * @param reason the explanation, computed when the failure is reported
     */
    public void setMissingFencingReason(Supplier<String> reason) {
        this.missingFencingReason = reason;
    }

    /**
     * Sets whether a bean with {@code @Fenced} methods fails to be created when there is no {@link
     * TransactionFencing} bean (the default), or is created and refuses every call.
     *
     * @param failWithoutFencing true to fail at startup
     */
    public void setFailWithoutFencing(boolean failWithoutFencing) {
        this.failWithoutFencing = failWithoutFencing;
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beanFactory = beanFactory;
        Supplier<TransactionFencing> lookup =
                SingletonSupplier.of(
                        () -> {
                            TransactionFencing fencing =
                                    beanFactory
                                            .getBeanProvider(TransactionFencing.class)
                                            .getIfAvailable();
                            if (fencing == null) {
                                throw new UnfencedTransactionException(
                                        "redlease: there is no TransactionFencing bean, so a"
                                                + " @Fenced transaction cannot be fenced and is"
                                                + " not run. "
                                                + missingFencingReason.get());
                            }
                            return fencing;
                        });
        Pointcut pointcut =
                new ComposablePointcut(new AnnotationMatchingPointcut(Fenced.class, true))
                        .union(new AnnotationMatchingPointcut(null, Fenced.class, true));
        this.advisor = new DefaultPointcutAdvisor(pointcut, new FencedInterceptor(lookup));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        if (beanFactory != null && isEligible(type)) {
            Map<Method, String> fencedMethods = new LinkedHashMap<>();
            ReflectionUtils.doWithMethods(
                    type,
                    method -> {
                        FencedRules.checkAdvisable(beanName, type, method);
                        Fenced fenced = FencedInterceptor.find(method, type);
                        if (fenced != null
                                && !Modifier.isStatic(method.getModifiers())
                                && !Modifier.isPrivate(method.getModifiers())) {
                            fencedMethods.putIfAbsent(method, fenced.value());
                        }
                    },
                    ReflectionUtils.USER_DECLARED_METHODS);
            if (!fencedMethods.isEmpty()) {
                FencedRules.checkSelfInvocation(beanName, type, fencedMethods);
                check(beanName, List.copyOf(fencedMethods.keySet()), type);
            }
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }

    private void check(String beanName, List<Method> methods, Class<?> type) {
        BeanFactory factory = beanFactory;
        boolean fencingDeclared =
                factory instanceof ListableBeanFactory listable
                        ? BeanFactoryUtils.beanNamesForTypeIncludingAncestors(
                                                listable, TransactionFencing.class, true, false)
                                        .length
                                > 0
                        : factory != null
                                && factory.getBeanProvider(TransactionFencing.class)
                                                .getIfAvailable()
                                        != null;
        if (!fencingDeclared) {
            if (failWithoutFencing) {
                throw new BeanCreationException(
                        beanName,
                        "redlease: @Fenced on "
                                + describe(methods.get(0), type)
                                + (methods.size() > 1
                                        ? " (and " + (methods.size() - 1) + " more)"
                                        : "")
                                + " cannot be applied: there is no TransactionFencing bean, so"
                                + " its transactions would commit unfenced. "
                                + missingFencingReason.get());
            }
            return;
        }
        String[] names =
                factory instanceof ListableBeanFactory listable
                        ? BeanFactoryUtils.beanNamesForTypeIncludingAncestors(
                                listable, TransactionFencing.class, true, false)
                        : new String[0];
        if (names.length > 1 && primaries(factory, names) != 1) {
            throw new BeanCreationException(
                    beanName,
                    "redlease: @Fenced on "
                            + describe(methods.get(0), type)
                            + " cannot be applied: there are "
                            + names.length
                            + " TransactionFencing beans ("
                            + String.join(", ", names)
                            + ") and none is @Primary, so it is not known which one fences"
                            + " @Fenced methods. Mark the fencing of the fenced DataSource"
                            + " @Primary; fence the other DataSources' transactions with fence().");
        }
        for (Method method : methods) {
            Fenced fenced = FencedInterceptor.find(method, type);
            if (fenced == null || fenced.value().isEmpty()) {
                continue;
            }
            try {
                factory.getBean(TransactionFencing.class).checkElection(fenced.value());
            } catch (RuntimeException ex) {
                throw new BeanCreationException(
                        beanName,
                        "redlease: @Fenced(\""
                                + fenced.value()
                                + "\") on "
                                + method.toGenericString()
                                + " names an election that is not configured",
                        ex);
            }
        }
    }

    /** Counts the beans marked primary among the names, without creating them. */
    private static long primaries(BeanFactory factory, String[] names) {
        return factory instanceof ConfigurableListableBeanFactory configurable
                ? Arrays.stream(names)
                        .filter(
                                name ->
                                        configurable.containsBeanDefinition(name)
                                                && configurable.getBeanDefinition(name).isPrimary())
                        .count()
                : 0;
    }

    private static String describe(Method method, Class<?> type) {
        return type.getName() + "." + method.getName() + "()";
    }
}
