package io.redlease.jdbc;

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
 * Applies {@link Fenced} to beans: proxies every bean with an annotated method or type so that the
 * transaction of an annotated call is fenced by {@link TransactionFencing} before the method runs.
 *
 * <p>Needs a {@link TransactionFencing} bean. The advice runs inside the transaction advice and
 * inside {@code @LeaderOnly} on the same bean, so the transaction has begun and the term is bound
 * when it runs. Each annotated method's election id is checked when the bean is created. Declare it
 * from a {@code static @Bean} method.
 */
public class FencedAnnotationBeanPostProcessor
        extends AbstractBeanFactoryAwareAdvisingPostProcessor {

    private static final long serialVersionUID = 1L;

    private transient @Nullable Supplier<TransactionFencing> fencing;

    /** Creates the post-processor. */
    public FencedAnnotationBeanPostProcessor() {
        setBeforeExistingAdvisors(false);
        setOrder(Ordered.LOWEST_PRECEDENCE);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        Supplier<TransactionFencing> lookup =
                SingletonSupplier.of(() -> beanFactory.getBean(TransactionFencing.class));
        this.fencing = lookup;
        Pointcut pointcut =
                new ComposablePointcut(new AnnotationMatchingPointcut(Fenced.class, true))
                        .union(new AnnotationMatchingPointcut(null, Fenced.class, true));
        this.advisor = new DefaultPointcutAdvisor(pointcut, new FencedInterceptor(lookup));
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        Class<?> type = AopUtils.getTargetClass(bean);
        Supplier<TransactionFencing> lookup = fencing;
        if (lookup != null && isEligible(type)) {
            ReflectionUtils.doWithMethods(
                    type,
                    method -> {
                        Fenced fenced = FencedInterceptor.find(method, type);
                        if (fenced != null
                                && !fenced.value().isEmpty()
                                && !Modifier.isStatic(method.getModifiers())) {
                            try {
                                lookup.get().checkElection(fenced.value());
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
                    },
                    ReflectionUtils.USER_DECLARED_METHODS);
        }
        return super.postProcessAfterInitialization(bean, beanName);
    }
}
