package io.redlease.boot.autoconfigure;

import io.redlease.boot.lifecycle.LeaderLifecycles;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Refuses a {@code @LeaderOnly} lifecycle bean in a child context that lacks redlease's
 * auto-configuration while an ancestor has it: nothing in that child would keep the bean from
 * starting with it on every instance. Applied to every context a {@code SpringApplication} builds
 * (for example {@code SpringApplicationBuilder.child(...)}); a context built otherwise is not
 * checked.
 */
public final class ChildContextLeaderOnlyCheck
        implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    /** The bean name of redlease's post-processor of leader-only lifecycle beans. */
    static final String PROCESSOR = "redleaseLeaderOnlyLifecycleBeanPostProcessor";

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        context.addBeanFactoryPostProcessor(
                beanFactory -> beanFactory.addBeanPostProcessor(new Refusal(context)));
    }

    private static final class Refusal implements BeanPostProcessor {

        private final ConfigurableApplicationContext context;

        Refusal(ConfigurableApplicationContext context) {
            this.context = context;
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) {
            Class<?> type = AopUtils.getTargetClass(bean);
            if (!LeaderOnlyLifecycleBeanPostProcessor.isLeaderOnlyLifecycle(type)
                    || context.getBeanFactory().containsLocalBean(PROCESSOR)) {
                return bean;
            }
            for (ApplicationContext parent = context.getParent();
                    parent != null;
                    parent = parent.getParent()) {
                if (parent.getBeanNamesForType(LeaderLifecycles.class, false, false).length > 0) {
                    throw new BeanCreationException(
                            beanName,
                            "redlease: the @LeaderOnly lifecycle bean '"
                                    + beanName
                                    + "' is in a child context without redlease's"
                                    + " auto-configuration, which would start it with the context"
                                    + " on every instance, leader or not. Declare it in the"
                                    + " context that defines the elections (a child's"
                                    + " auto-configuration would not start it until the next"
                                    + " term)");
                }
            }
            return bean;
        }
    }
}
