package io.redlease.boot.autoconfigure;

import io.redlease.core.annotation.LeaderOnly;
import io.redlease.core.annotation.LeaderOnlyAnnotationBeanPostProcessor;
import io.redlease.core.scheduling.MissedSlots;
import io.redlease.core.scheduling.SlotJobs;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SearchStrategy;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration that applies {@link LeaderOnly @LeaderOnly} to the application's beans.
 *
 * <p>The leadership check is the outermost advice of a bean that other advice (such as {@code
 * Transactional}) already proxies, so a follower's skipped call opens no transaction; advice that
 * hands the call to another thread ({@code @Async}) still runs before it. Once-per-slot jobs are
 * scheduled by the {@link SlotJobs} bean the post-processor registers; {@code
 * redlease.scheduling.*} sets their defaults.
 *
 * <p>Each call skipped because this instance does not lead is logged at DEBUG on the logger {@code
 * io.redlease.core.annotation.LeaderOnly} (and, with Micrometer, counted as {@code
 * redlease.leaderonly.skipped}).
 *
 * <p>With {@code redlease.enabled=false} the annotation is not applied and annotated methods run on
 * every instance; a warning at startup lists them.
 */
@AutoConfiguration(after = RedleaseAutoConfiguration.class)
@ConditionalOnClass({LeaderOnly.class, AbstractBeanFactoryAwareAdvisingPostProcessor.class})
public final class LeaderOnlyAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "redlease.enabled", matchIfMissing = true)
    static class Enabled {

        // A parent context's post-processor does not process this context's beans: search here
        // only.
        @Bean
        @ConditionalOnMissingBean(search = SearchStrategy.CURRENT)
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyAnnotationBeanPostProcessor() {
            LeaderOnlyAnnotationBeanPostProcessor postProcessor =
                    new LeaderOnlyAnnotationBeanPostProcessor();
            // The auto-proxy creator (transactions, aspects) has already proxied the bean when
            // this post-processor runs: go in front of its advisors.
            postProcessor.setBeforeExistingAdvisors(true);
            return postProcessor;
        }

        @Bean
        LeaderOnlySkipLogger redleaseLeaderOnlySkipLogger() {
            return new LeaderOnlySkipLogger();
        }

        /**
         * Applies {@code redlease.scheduling.*} to the once-per-slot jobs (the bean the
         * post-processor registers), and has each election's jobs catch up right after it is won.
         */
        @Bean
        ElectorCustomizer redleaseSlotJobsCustomizer(
                SlotJobs jobs, ObjectProvider<RedleaseProperties> properties) {
            RedleaseProperties.Scheduling scheduling =
                    properties.getIfAvailable(RedleaseProperties::new).getScheduling();
            if (scheduling.getMissedSlots() == MissedSlots.DEFAULT) {
                throw new InvalidRedleasePropertyException(
                        "redlease.scheduling.missed-slots",
                        scheduling.getMissedSlots(),
                        "the default for missed slots must be a policy, not DEFAULT",
                        "Set redlease.scheduling.missed-slots to RUN_LATEST, SKIP or RUN_ALL.",
                        null);
            }
            int maxCatchUp = scheduling.getMaxCatchUp();
            if (maxCatchUp < 1 || maxCatchUp > SlotJobs.MAX_CATCH_UP) {
                throw new InvalidRedleasePropertyException(
                        "redlease.scheduling.max-catch-up",
                        maxCatchUp,
                        "the most missed slots RUN_ALL runs at once must be 1 to "
                                + SlotJobs.MAX_CATCH_UP,
                        "Set redlease.scheduling.max-catch-up to 1 to "
                                + SlotJobs.MAX_CATCH_UP
                                + "; the default is "
                                + SlotJobs.DEFAULT_MAX_CATCH_UP
                                + ".",
                        null);
            }
            jobs.setDefaults(scheduling.getMissedSlots(), maxCatchUp);
            return (id, builder) -> builder.observer(jobs.observer(id));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "redlease.enabled", havingValue = false)
    static class Disabled {

        @Bean
        static LeaderOnlyDisabledWarning leaderOnlyDisabledWarning() {
            return new LeaderOnlyDisabledWarning();
        }
    }
}
